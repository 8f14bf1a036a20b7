/**
 * The pixels to a 32x32 grid of mean sRGB values: one box-average pass over the pixels, mostly
 * integer additions, from which the hash (hash.ts) and the colour cells (colour.ts) are taken.
 */
import type { RawPixels } from '../quality/linear.js';

/** The grid the pixels are box-averaged down to. */
export const GRID = 32;

/** Per source index (column or row): the grid cells it overlaps and by how much (in source pixels). */
interface Spans {
  readonly first: Int32Array;
  readonly cells: Int32Array;
  readonly weights: Float64Array;
}

function spans(size: number): Spans {
  const first = new Int32Array(size + 1);
  const cells: number[] = [];
  const weights: number[] = [];
  const scale = GRID / size;
  for (let i = 0; i < size; i++) {
    first[i] = cells.length;
    const start = i * scale;
    const end = Math.min(GRID, (i + 1) * scale);
    for (let cell = Math.floor(start); cell < end; cell++) {
      const weight = (Math.min(end, cell + 1) - Math.max(start, cell)) / scale;
      if (weight > 1e-9) {
        cells.push(cell);
        weights.push(weight);
      }
    }
  }
  first[size] = cells.length;
  return { first, cells: Int32Array.from(cells), weights: Float64Array.from(weights) };
}

/**
 * Per grid column, for a picture at least 32 pixels wide: the source columns wholly inside it
 * (`[start, end)`) and the one each side that it shares with its neighbour, with the part of that
 * pixel inside it (0 when none).
 */
interface Columns {
  readonly start: Int32Array;
  readonly end: Int32Array;
  readonly leftWeight: Float64Array;
  readonly rightWeight: Float64Array;
}

function wideColumns(width: number): Columns {
  const start = new Int32Array(GRID);
  const end = new Int32Array(GRID);
  const leftWeight = new Float64Array(GRID);
  const rightWeight = new Float64Array(GRID);
  for (let c = 0; c < GRID; c++) {
    // Borders in source pixels, exact in integers: c * width / GRID.
    const from = (c * width) / GRID;
    const to = ((c + 1) * width) / GRID;
    start[c] = Math.ceil(from);
    end[c] = Math.floor(to);
    leftWeight[c] = start[c]! - from; // of pixel start - 1
    rightWeight[c] = to - end[c]!; // of pixel end (< width when > 0)
  }
  return { start, end, leftWeight, rightWeight };
}

/**
 * The mean sRGB value (0..255, alpha blended over white) of each of 32x32 equal areas of the
 * picture, row by row, 3 per cell: a pixel on a cell border counts in each cell by its area there.
 * Over white, a pixel's value is `v * a / 255 + 255 - a`: linear in `v * a` and `a`, so their sums
 * are all a row needs.
 */
export function boxAverage(pixels: RawPixels): Float64Array {
  const { width, height } = pixels.info;
  const rows = spans(height);
  const grid = new Float64Array(GRID * GRID * 3);
  const row = new Float64Array(GRID * 3);
  const sumRow = width >= GRID ? wideRow(pixels, wideColumns(width)) : narrowRow(pixels, spans(width));
  for (let y = 0; y < height; y++) {
    sumRow(y, row);
    const end = rows.first[y + 1]!;
    for (let k = rows.first[y]!; k < end; k++) {
      const base = rows.cells[k]! * GRID * 3;
      const w = rows.weights[k]!;
      for (let c = 0; c < GRID * 3; c++) grid[base + c]! += row[c]! * w;
    }
  }
  // Each cell is width / 32 by height / 32 source pixels.
  const area = (width / GRID) * (height / GRID);
  for (let c = 0; c < grid.length; c++) grid[c]! /= area;
  return grid;
}

type RowSummer = (y: number, out: Float64Array) => void;

/** The three values of pixel `i` (a byte offset) over white, into `px`. */
function pixelReader(pixels: RawPixels): (i: number, px: Float64Array) => void {
  const { data } = pixels;
  const { channels } = pixels.info;
  const colour = channels >= 3;
  const green = colour ? 1 : 0;
  const blue = colour ? 2 : 0;
  const alphaAt = channels === 2 || channels === 4 ? channels - 1 : -1;
  return (i, px) => {
    const a = alphaAt < 0 ? 255 : data[i + alphaAt]!;
    const white = 255 - a;
    px[0] = (data[i]! * a) / 255 + white;
    px[1] = (data[i + green]! * a) / 255 + white;
    px[2] = (data[i + blue]! * a) / 255 + white;
  };
}

/** Row sums for a picture narrower than the grid: each pixel spreads over the cells it covers. */
function narrowRow(pixels: RawPixels, columns: Spans): RowSummer {
  const { width, channels } = pixels.info;
  const read = pixelReader(pixels);
  const px = new Float64Array(3);
  return (y, out) => {
    out.fill(0);
    for (let x = 0, i = y * width * channels; x < width; x++, i += channels) {
      read(i, px);
      const end = columns.first[x + 1]!;
      for (let k = columns.first[x]!; k < end; k++) {
        const at = columns.cells[k]! * 3;
        const w = columns.weights[k]!;
        out[at]! += px[0]! * w;
        out[at + 1]! += px[1]! * w;
        out[at + 2]! += px[2]! * w;
      }
    }
  };
}

/**
 * Row sums for a picture at least as wide as the grid: sums over the pixels wholly inside each cell
 * (the hot loops, below: a few additions a pixel), then the two shared border pixels by weight.
 */
function wideRow(pixels: RawPixels, columns: Columns): RowSummer {
  const { data } = pixels;
  const { width, channels } = pixels.info;
  const { start, end, leftWeight, rightWeight } = columns;
  const read = pixelReader(pixels);
  const px = new Float64Array(3);
  const inner = channels === 3 ? rgbCells : channels === 4 ? rgbaCells : channels === 1 ? greyCells : greyAlphaCells;
  return (y, out) => {
    const rowStart = y * width * channels;
    inner(data, rowStart, start, end, out);
    for (let c = 0; c < GRID; c++) {
      const left = leftWeight[c]!;
      if (left > 0) {
        read(rowStart + (start[c]! - 1) * channels, px);
        out[3 * c]! += px[0]! * left;
        out[3 * c + 1]! += px[1]! * left;
        out[3 * c + 2]! += px[2]! * left;
      }
      const right = rightWeight[c]!;
      if (right > 0) {
        read(rowStart + end[c]! * channels, px);
        out[3 * c]! += px[0]! * right;
        out[3 * c + 1]! += px[1]! * right;
        out[3 * c + 2]! += px[2]! * right;
      }
    }
  };
}

type CellSummer = (data: Uint8Array, rowStart: number, start: Int32Array, end: Int32Array, out: Float64Array) => void;

const rgbCells: CellSummer = (data, rowStart, start, end, out) => {
  for (let c = 0; c < GRID; c++) {
    let r = 0;
    let g = 0;
    let b = 0;
    const stop = rowStart + end[c]! * 3;
    for (let i = rowStart + start[c]! * 3; i < stop; i += 3) {
      r += data[i]!;
      g += data[i + 1]!;
      b += data[i + 2]!;
    }
    out[3 * c] = r;
    out[3 * c + 1] = g;
    out[3 * c + 2] = b;
  }
};

/** Over white: opaque pixels summed as they are, the others as `v * a / 255 + 255 - a`. */
const rgbaCells: CellSummer = (data, rowStart, start, end, out) => {
  for (let c = 0; c < GRID; c++) {
    let r = 0;
    let g = 0;
    let b = 0;
    let rt = 0;
    let gt = 0;
    let bt = 0;
    let white = 0;
    const stop = rowStart + end[c]! * 4;
    for (let i = rowStart + start[c]! * 4; i < stop; i += 4) {
      const a = data[i + 3]!;
      if (a === 255) {
        r += data[i]!;
        g += data[i + 1]!;
        b += data[i + 2]!;
      } else {
        rt += data[i]! * a;
        gt += data[i + 1]! * a;
        bt += data[i + 2]! * a;
        white += 255 - a;
      }
    }
    out[3 * c] = r + rt / 255 + white;
    out[3 * c + 1] = g + gt / 255 + white;
    out[3 * c + 2] = b + bt / 255 + white;
  }
};

const greyCells: CellSummer = (data, rowStart, start, end, out) => {
  for (let c = 0; c < GRID; c++) {
    let v = 0;
    const stop = rowStart + end[c]!;
    for (let i = rowStart + start[c]!; i < stop; i++) v += data[i]!;
    out[3 * c] = v;
    out[3 * c + 1] = v;
    out[3 * c + 2] = v;
  }
};

const greyAlphaCells: CellSummer = (data, rowStart, start, end, out) => {
  for (let c = 0; c < GRID; c++) {
    let v = 0;
    let white = 0;
    const stop = rowStart + end[c]! * 2;
    for (let i = rowStart + start[c]! * 2; i < stop; i += 2) {
      const a = data[i + 1]!;
      v += (data[i]! * a) / 255;
      white += 255 - a;
    }
    out[3 * c] = v + white;
    out[3 * c + 1] = v + white;
    out[3 * c + 2] = v + white;
  }
};
