/**
 * Picture fingerprints: a compact string that says what a rendition shows, so that renditions of one
 * Image can be checked against one another and against what `render` recorded. It holds a perceptual
 * hash (the signs of the 8x8 lowest DCT frequencies of the luma, with which of them are strong) and a
 * 4x4 grid of mean colours in CIELAB, both from one box-average pass over the pixels down to 32x32:
 * the same at any rendition size and after any reasonable lossy encode, different when the picture is
 * another one, edited, rotated, mirrored or colour-converted wrongly. `compareFingerprints` says which.
 *
 * Pure: the pixels come from the caller (`fingerprintFile` decodes a file with sharp for it).
 */
import { ContentApiError } from '../errors.js';
import type { RawPixels } from './linear.js';
import { rawPixels } from './read.js';

/** The version prefix of the fingerprints this module writes and reads. */
export const FINGERPRINT_VERSION = 'f1';

/** A fingerprint that cannot be read: malformed, or of another version. */
export class FingerprintError extends ContentApiError {
  override name = 'FingerprintError';
  constructor(message: string) {
    super('CONTENT_API_FINGERPRINT', message);
  }
}

/** What a fingerprint holds, decoded (`parseFingerprint`). */
export interface Fingerprint {
  /** The pixel size it was taken at (each clamped to 65535). */
  readonly width: number;
  readonly height: number;
  /** RMS of the 63 low AC DCT coefficients of the 32x32 luma (8-bit units): ~0 for a flat picture. */
  readonly energy: number;
  /** Bit `v * 8 + u`: the sign (set: positive) of DCT coefficient (u, v); bit 0 (DC) unused. */
  readonly signs: bigint;
  /** Bit `v * 8 + u`: coefficient (u, v) is among the stronger half of the 63 AC coefficients. */
  readonly strong: bigint;
  /** 4x4 cells, row by row, of [L*, a*, b*] (CIELAB, D65), as stored (quantised). */
  readonly lab: readonly (readonly [number, number, number])[];
}

/** The measures behind a comparison, for reports and tests. */
export interface FingerprintMeasures {
  /** Opposite signs among the coefficients strong in either fingerprint, as compared (identity). */
  readonly hashDistance: number;
  /** How many coefficients were strong in either (the most `hashDistance` can be). */
  readonly hashBits: number;
  /** The transform of the expected picture that matches the actual one best (`identity` when same). */
  readonly transform: FingerprintTransform;
  /** The actual picture is a negative of the expected one (under `transform`). */
  readonly inverted: boolean;
  /** The hash distance under `transform` (and the inversion). */
  readonly transformDistance: number;
  /** CIELAB ΔE (1976) per 4x4 cell, under `transform`: the mean and the worst. */
  readonly meanDeltaE: number;
  readonly worstDeltaE: number;
  /** Mean L* of the actual minus the expected. */
  readonly lightness: number;
  /** Mean chroma of the actual over the expected's (1 when the expected is near grey). */
  readonly chromaRatio: number;
  /** Both pictures have structure enough for the hash to say anything (not flat or near flat). */
  readonly textured: boolean;
}

/** How the actual picture relates to the expected one geometrically. */
export type FingerprintTransform =
  | 'identity'
  | 'mirrored'
  | 'flipped'
  | 'rotated180'
  | 'transposed'
  | 'rotated90'
  | 'rotated270'
  | 'transversed';

/** The outcome of `compareFingerprints`: `same`, or a sentence per difference. */
export interface FingerprintComparison {
  readonly same: boolean;
  /** Each difference in words, e.g. `rotated 90° clockwise`, `another picture (hash distance 21 of 44)`. */
  readonly differences: string[];
  readonly measures: FingerprintMeasures;
}

// The grid the pixels are box-averaged down to, the DCT block kept from it, and the colour grid.
const GRID = 32;
const HASH = 8;
const CELLS = 4;
const BYTES = 4 + 1 + 8 + 8 + CELLS * CELLS * 3;
/** A strong coefficient is at least this share of the RMS of all 63. */
const STRONG_SHARE = 0.1;

/**
 * The fingerprint of `pixels` (8-bit sRGB, 1 to 4 channels; alpha is blended over white, as a JPEG
 * rendition is flattened): `f1:` and 92 base64url characters, 95 in all. It holds the size, the
 * hash's energy, 64 sign bits, 64 "strong" bits and 16 CIELAB cells (69 bytes). One pass over the
 * pixels, mostly integer additions: on a 2-core CI-class machine about 5 ms for 1 MP, 65 ms for
 * 15 MP and 100 ms for 24 MP (RGB; RGBA with transparency somewhat more).
 *
 * @throws FingerprintError when the pixel buffer does not match its size.
 */
export function fingerprint(pixels: RawPixels): string {
  const { width, height, channels } = pixels.info;
  if (!(width >= 1 && height >= 1 && channels >= 1 && channels <= 4)) {
    throw new FingerprintError(`cannot fingerprint ${width}x${height} pixels with ${channels} channels`);
  }
  if (pixels.data.length < width * height * channels) {
    throw new FingerprintError(
      `cannot fingerprint ${width}x${height}x${channels} pixels from ${pixels.data.length} bytes`,
    );
  }
  const means = boxAverage(pixels);
  const coefficients = lowDct(means);
  const bytes = new Uint8Array(BYTES);
  const view = new DataView(bytes.buffer);
  view.setUint16(0, Math.min(width, 65535));
  view.setUint16(2, Math.min(height, 65535));
  let energy = 0;
  for (let i = 1; i < HASH * HASH; i++) energy += coefficients[i]! ** 2;
  const rms = Math.sqrt(energy / (HASH * HASH - 1));
  bytes[4] = quantiseEnergy(rms);
  // Strong: in the larger half, and not small beside the whole (a ramp's energy is in a few
  // coefficients; the signs of the rest are noise).
  const magnitudes = [...coefficients.subarray(1)].map(Math.abs).sort((a, b) => b - a);
  const floor = Math.max(magnitudes[(HASH * HASH) / 2 - 1]!, STRONG_SHARE * rms, Number.MIN_VALUE);
  let signs = 0n;
  let strong = 0n;
  for (let i = 1; i < HASH * HASH; i++) {
    const c = coefficients[i]!;
    if (c > 0) signs |= 1n << BigInt(i);
    if (Math.abs(c) >= floor) strong |= 1n << BigInt(i);
  }
  view.setBigUint64(5, signs);
  view.setBigUint64(13, strong);
  const cells = colourCells(means);
  for (let i = 0; i < CELLS * CELLS; i++) {
    const [l, a, b] = cells[i]!;
    bytes[21 + 3 * i] = Math.round(Math.min(100, Math.max(0, l)) * 2.55);
    bytes[22 + 3 * i] = encodeChroma(a);
    bytes[23 + 3 * i] = encodeChroma(b);
  }
  return `${FINGERPRINT_VERSION}:${Buffer.from(bytes).toString('base64url')}`;
}

/**
 * The fingerprint of an image file or encoded bytes, decoded as displayed (EXIF orientation applied,
 * converted to sRGB) with sharp.
 *
 * @param name what to call the input in an error (defaults to the path, or "image buffer").
 * @throws SourceError naming the input when it is missing or cannot be decoded.
 */
export async function fingerprintFile(input: string | Uint8Array, name?: string): Promise<string> {
  return fingerprint(await rawPixels(input, name));
}

/**
 * Decodes a fingerprint string.
 *
 * @throws FingerprintError when it is not a fingerprint, or one of another version.
 */
export function parseFingerprint(text: string): Fingerprint {
  const shown = JSON.stringify(text.length > 24 ? `${text.slice(0, 24)}…` : text);
  const colon = text.indexOf(':');
  const version = colon < 0 ? '' : text.slice(0, colon);
  if (!/^f\d+$/.test(version)) throw new FingerprintError(`${shown} is not a picture fingerprint`);
  if (version !== FINGERPRINT_VERSION) {
    throw new FingerprintError(
      `${shown}: fingerprint version ${version} cannot be read (this version reads ${FINGERPRINT_VERSION})`,
    );
  }
  const body = text.slice(colon + 1);
  const bytes = /^[A-Za-z0-9_-]*$/.test(body) ? Buffer.from(body, 'base64url') : Buffer.alloc(0);
  if (bytes.length !== BYTES) throw new FingerprintError(`${shown}: malformed fingerprint`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const lab: Array<[number, number, number]> = [];
  for (let i = 0; i < CELLS * CELLS; i++) {
    lab.push([bytes[21 + 3 * i]! / 2.55, decodeChroma(bytes[22 + 3 * i]!), decodeChroma(bytes[23 + 3 * i]!)]);
  }
  return {
    width: view.getUint16(0),
    height: view.getUint16(2),
    energy: 2 ** (bytes[4]! / 16) - 1,
    signs: view.getBigUint64(5),
    strong: view.getBigUint64(13),
    lab,
  };
}

/*
 * Thresholds. Calibrated on the 7 samples and on 39 pictures from MATE's backgrounds (photographs,
 * the samples' sources among them, stripes, smooth and flat gradients, noise, a plain colour, a ramp
 * with an XOR texture, 24 MP mosaics), at every rendition size in JPEG q30-q95 (and mozjpeg), WebP
 * q30-q90, AVIF q30-q70, PNG, PNG palette and GIF, each against the unencoded renditions and all
 * against one another, and on the files `render` writes from the samples in each format: about
 * 87,000 same-picture pairs, none a finding; and on 5,900 pairs of different pictures. Worst
 * same-picture values, then the closest other picture or seeded defect:
 * - hash distance (pictures with structure): 0, against 11 for another picture (14 on the samples);
 *   the best turn or mirror of another picture 7; a real turn or mirror 0, a negative 0, a CMYK
 *   picture read inverted 0-6.
 * - mean ΔE 3.5 (a plain colour in JPEG q30 against WebP q50; photographs 1.3), worst cell 3.5
 *   (photographs 3.3, GIF); a wide-gamut picture read as sRGB: mean 5.5-10, chroma 82-88%, on
 *   the colourful samples (the near-grey storm: mean 1.5, 92%, not caught).
 * - |ln chroma ratio| 0.09 (the plain colour; photographs 0.035), |ΔL*| 1.3.
 */
/** Below this AC energy a picture is (near) flat and its hash bits are noise (flat: 0-3, photographs 29-280). */
const FLAT_ENERGY = 8;
/** Fewer strong coefficients than this to compare (a picture a few pixels tall or wide): the hash says nothing. */
const MIN_HASH_BITS = 20;
/** Nor with fewer than this in either picture (a ramp: its energy in a few coefficients). */
const MIN_SIDE_BITS = 12;
/** At most this hash distance: the same structure. */
const SAME_HASH = 6;
/** At most this under a turn, a mirror or an inversion (and half the straight distance): that is what was done. */
const VARIANT_HASH = 8;
/** Above this: another picture; between SAME_HASH and this, an edited or re-cropped one. */
const OTHER_HASH = 12;
/** Per-cell ΔE: the mean and the worst cell above which colours differ. */
const MEAN_DELTA_E = 5;
const WORST_DELTA_E = 7;
/** |ln(chroma ratio)| above which the actual is more or less saturated, when the expected has colour. */
const CHROMA_LOG_RATIO = 0.15;
const MIN_CHROMA = 3;
const CHROMA_SLACK = 3;
/** Mean |ΔL*| above which the actual is lighter or darker. */
const LIGHTNESS = 3;
/** Once colours differ, the smaller changes that still say why: in chroma and in lightness. */
const CAUSE_CHROMA_LOG_RATIO = 0.08;
const CAUSE_LIGHTNESS = 2;

/**
 * Compares the fingerprint of a rendition (`actual`) with what it should show (`expected`: the
 * recorded fingerprint, or another rendition's of the same Image; between two renditions, pass the
 * larger as `expected`). Sizes may differ: only the aspect ratio is compared, to the pixel. `same`
 * is false when the pictures differ in content, orientation or colour; `differences` says how, one
 * sentence each, e.g. `rotated 90° clockwise` (the actual is the expected turned so),
 * `another picture (hash distance 21 of 44)`, `colours differ (mean ΔE 9.5, worst cell 15.7): less
 * saturated (chroma 83%): ...`. A re-encode at another quality, or another size, is the same.
 *
 * @throws FingerprintError when either is not a fingerprint this version reads.
 */
export function compareFingerprints(expected: string, actual: string): FingerprintComparison {
  return compareParsed(parseFingerprint(expected), parseFingerprint(actual));
}

function compareParsed(expected: Fingerprint, actual: Fingerprint): FingerprintComparison {
  const differences: string[] = [];
  const identity = hashDistance(expected, actual, IDENTITY, false);
  const resolved = identity.bits >= MIN_HASH_BITS && identity.fewest >= MIN_SIDE_BITS;
  const textured = resolved && expected.energy >= FLAT_ENERGY && actual.energy >= FLAT_ENERGY;
  let match = { transform: IDENTITY, inverted: false, ...identity };
  // The structure: the same, another picture, or one in between (edited, re-cropped, re-shot).
  let structure: 'same' | 'edited' | 'other' | 'flat' = 'same';
  if (textured) {
    if (identity.distance > SAME_HASH) {
      const best = bestVariant(expected, actual);
      if (best.distance <= VARIANT_HASH && best.distance <= identity.distance / 2) match = best;
      else structure = identity.distance <= OTHER_HASH ? 'edited' : 'other';
    }
  } else if (
    resolved &&
    Math.max(expected.energy, actual.energy) >= 2 * FLAT_ENERGY &&
    Math.min(expected.energy, actual.energy) * 4 <= Math.max(expected.energy, actual.energy)
  ) {
    // One is flat (a plain colour, a smooth gradient), the other is not.
    structure = 'flat';
  } else {
    // Both (near) flat, or too small to say: the colour grid alone tells the orientation.
    const straight = compareColours(expected, actual, IDENTITY);
    if (colourDiffers(straight)) {
      const turned = TRANSFORMS.map((t) => ({ t, colour: compareColours(expected, actual, t) }));
      const best = turned.reduce((a, b) => (b.colour.mean < a.colour.mean ? b : a));
      if (!colourDiffers(best.colour)) match = { ...match, transform: best.t };
    }
  }
  if (match.transform !== IDENTITY) differences.push(match.transform.words);
  if (match.inverted) differences.push('inverted: a negative (e.g. a CMYK picture read with its channels inverted)');
  const measured = `hash distance ${identity.distance} of ${identity.bits}`;
  if (structure === 'edited')
    differences.push(`differs in detail (${measured}): an edited, re-cropped or older version`);
  if (structure === 'other') differences.push(`another picture (${measured})`);
  if (structure === 'flat') {
    differences.push(`another picture (the ${expected.energy < actual.energy ? 'expected' : 'actual'} one is flat)`);
  }
  const colour = compareColours(expected, actual, match.transform);
  if (structure === 'same' && !match.inverted) {
    const words = colourDifference(expected, actual, match.transform, colour);
    if (words) differences.push(words);
  }
  const aspect = aspectDifference(expected, actual, match.transform);
  if (aspect) differences.push(aspect);
  return {
    same: differences.length === 0,
    differences,
    measures: {
      hashDistance: identity.distance,
      hashBits: identity.bits,
      transform: match.transform.name,
      inverted: match.inverted,
      transformDistance: match.distance,
      meanDeltaE: round(colour.mean),
      worstDeltaE: round(colour.worst),
      lightness: round(colour.lightness),
      chromaRatio: round(colour.chromaRatio, 3),
      textured,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The pixels to a 32x32 grid of mean sRGB values.

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
function boxAverage(pixels: RawPixels): Float64Array {
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

// ---------------------------------------------------------------------------------------------
// The hash: the lowest 8x8 DCT coefficients of the grid's luma.

/** Orthonormal DCT-II basis: `COS[k * GRID + x]`. */
const COS = (() => {
  const table = new Float64Array(HASH * GRID);
  for (let k = 0; k < HASH; k++) {
    const scale = Math.sqrt((k === 0 ? 1 : 2) / GRID);
    for (let x = 0; x < GRID; x++) table[k * GRID + x] = scale * Math.cos((Math.PI * (2 * x + 1) * k) / (2 * GRID));
  }
  return table;
})();

/** Coefficient (u, v) at `v * 8 + u` (u across, v down) of the luma (Rec. 601 weights on sRGB values). */
function lowDct(means: Float64Array): Float64Array {
  const luma = new Float64Array(GRID * GRID);
  for (let i = 0; i < GRID * GRID; i++) {
    luma[i] = 0.299 * means[3 * i]! + 0.587 * means[3 * i + 1]! + 0.114 * means[3 * i + 2]!;
  }
  const across = new Float64Array(GRID * HASH);
  for (let y = 0; y < GRID; y++) {
    for (let u = 0; u < HASH; u++) {
      let sum = 0;
      for (let x = 0; x < GRID; x++) sum += luma[y * GRID + x]! * COS[u * GRID + x]!;
      across[y * HASH + u] = sum;
    }
  }
  const out = new Float64Array(HASH * HASH);
  for (let v = 0; v < HASH; v++) {
    for (let u = 0; u < HASH; u++) {
      let sum = 0;
      for (let y = 0; y < GRID; y++) sum += across[y * HASH + u]! * COS[v * GRID + y]!;
      out[v * HASH + u] = sum;
    }
  }
  return out;
}

function quantiseEnergy(rms: number): number {
  return Math.min(255, Math.round(16 * Math.log2(1 + rms)));
}

/**
 * The eight orientations, as what was done to the expected picture to give the actual one. On the
 * DCT: a transpose swaps u and v; mirroring (after it) negates odd u, flipping negates odd v.
 */
interface Transform {
  readonly name: FingerprintTransform;
  readonly words: string;
  readonly transpose: boolean;
  readonly mirror: boolean;
  readonly flip: boolean;
}

const TRANSFORMS: readonly Transform[] = [
  { name: 'identity', words: 'same orientation', transpose: false, mirror: false, flip: false },
  { name: 'mirrored', words: 'mirrored (flipped left to right)', transpose: false, mirror: true, flip: false },
  {
    name: 'flipped',
    words: 'flipped upside down (mirrored top to bottom)',
    transpose: false,
    mirror: false,
    flip: true,
  },
  { name: 'rotated180', words: 'rotated 180°', transpose: false, mirror: true, flip: true },
  { name: 'transposed', words: 'transposed (mirrored and rotated 90°)', transpose: true, mirror: false, flip: false },
  { name: 'rotated90', words: 'rotated 90° clockwise', transpose: true, mirror: true, flip: false },
  { name: 'rotated270', words: 'rotated 90° anticlockwise', transpose: true, mirror: false, flip: true },
  { name: 'transversed', words: 'transversed (mirrored and rotated 270°)', transpose: true, mirror: true, flip: true },
];

/** `bits` of the expected picture as the picture transformed by `t` would have them. */
function transformBits(bits: bigint, t: Transform): bigint {
  let out = 0n;
  for (let v = 0; v < HASH; v++) {
    for (let u = 0; u < HASH; u++) {
      const from = t.transpose ? u * HASH + v : v * HASH + u;
      if ((bits >> BigInt(from)) & 1n) out |= 1n << BigInt(v * HASH + u);
    }
  }
  return out;
}

/** The sign flips of `t`: bits whose coefficient changes sign (odd u when mirrored, odd v when flipped). */
function signFlips(t: Transform): bigint {
  let out = 0n;
  for (let v = 0; v < HASH; v++) {
    for (let u = 1 - Math.min(v, 1); u < HASH; u++) {
      if ((t.mirror && u % 2 === 1) !== (t.flip && v % 2 === 1)) out |= 1n << BigInt(v * HASH + u);
    }
  }
  return out;
}

const IDENTITY = TRANSFORMS[0]!;

/** The width and height both pictures have, in the actual one's orientation (the expected turned by `t`). */
function commonSize(expected: Fingerprint, actual: Fingerprint, t: Transform) {
  const [width, height] = t.transpose ? [expected.height, expected.width] : [expected.width, expected.height];
  return { width: Math.min(width, actual.width), height: Math.min(height, actual.height) };
}

/**
 * The coefficients a picture of this size holds: (u, v) with u below its width and v below its
 * height. A 300x1 rendition (of a 4801x10 original) has no vertical detail to compare.
 */
function resolvable(size: { width: number; height: number }): bigint {
  let bits = 0n;
  for (let v = 0; v < Math.min(HASH, size.height); v++) {
    for (let u = 0; u < Math.min(HASH, size.width); u++) bits |= 1n << BigInt(v * HASH + u);
  }
  return bits;
}
const AC = ((1n << BigInt(HASH * HASH)) - 1n) & ~1n;

/** The orientation (and inversion) of the expected picture closest to the actual one by hash. */
function bestVariant(expected: Fingerprint, actual: Fingerprint) {
  let best = { transform: IDENTITY, inverted: false, ...hashDistance(expected, actual, IDENTITY, false) };
  for (const transform of TRANSFORMS) {
    for (const inverted of [false, true]) {
      const d = hashDistance(expected, actual, transform, inverted);
      if (d.distance < best.distance && d.bits >= MIN_HASH_BITS && d.fewest >= MIN_SIDE_BITS) {
        best = { transform, inverted, ...d };
      }
    }
  }
  return best;
}

function hashDistance(expected: Fingerprint, actual: Fingerprint, t: Transform, inverted: boolean) {
  let signs = transformBits(expected.signs, t) ^ signFlips(t);
  if (inverted) signs = ~signs;
  const within = AC & resolvable(commonSize(expected, actual, t));
  const expectedStrong = transformBits(expected.strong, t) & within;
  const actualStrong = actual.strong & within;
  const counted = expectedStrong | actualStrong;
  return {
    distance: popCount((signs ^ actual.signs) & counted),
    bits: popCount(counted),
    // The fewer strong coefficients of the two: a ramp's few, a thin picture's.
    fewest: Math.min(popCount(expectedStrong), popCount(actualStrong)),
  };
}

function popCount(bits: bigint): number {
  let count = 0;
  for (let b = bits; b > 0n; b &= b - 1n) count++;
  return count;
}

// ---------------------------------------------------------------------------------------------
// The colour grid: 4x4 cells of mean colour in CIELAB.

/** Stored a* and b*: companded (finer near grey), 128 for 0. */
const CHROMA_SCALE = 127 / Math.sqrt(128);

function encodeChroma(value: number): number {
  const code = Math.round(Math.sign(value) * Math.sqrt(Math.min(128, Math.abs(value))) * CHROMA_SCALE);
  return Math.min(255, Math.max(1, 128 + code));
}

function decodeChroma(code: number): number {
  const scaled = (code - 128) / CHROMA_SCALE;
  return Math.sign(scaled) * scaled * scaled;
}

function colourCells(means: Float64Array): Array<[number, number, number]> {
  const step = GRID / CELLS;
  const cells: Array<[number, number, number]> = [];
  for (let cy = 0; cy < CELLS; cy++) {
    for (let cx = 0; cx < CELLS; cx++) {
      const sum = [0, 0, 0];
      for (let y = cy * step; y < (cy + 1) * step; y++) {
        for (let x = cx * step; x < (cx + 1) * step; x++) {
          for (let c = 0; c < 3; c++) sum[c]! += means[(y * GRID + x) * 3 + c]!;
        }
      }
      const n = step * step;
      cells.push(srgbToLab(sum[0]! / n, sum[1]! / n, sum[2]! / n));
    }
  }
  return cells;
}

function toLinear(value: number): number {
  const v = value / 255;
  return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
}

/** sRGB (0..255 per channel) to CIELAB, D65 white. */
function srgbToLab(r: number, g: number, b: number): [number, number, number] {
  const lr = toLinear(r);
  const lg = toLinear(g);
  const lb = toLinear(b);
  const x = (0.4124564 * lr + 0.3575761 * lg + 0.1804375 * lb) / 0.95047;
  const y = 0.2126729 * lr + 0.7151522 * lg + 0.072175 * lb;
  const z = (0.0193339 * lr + 0.119192 * lg + 0.9503041 * lb) / 1.08883;
  const f = (t: number) => (t > 216 / 24389 ? Math.cbrt(t) : ((24389 / 27) * t + 16) / 116);
  const fy = f(y);
  return [116 * fy - 16, 500 * (f(x) - fy), 200 * (fy - f(z))];
}

/** CIELAB (D65) to sRGB, 0..255 per channel, clamped to the gamut. */
function labToSrgb(l: number, a: number, b: number): [number, number, number] {
  const fy = (l + 16) / 116;
  const finv = (f: number) => (f ** 3 > 216 / 24389 ? f ** 3 : (116 * f - 16) / (24389 / 27));
  const x = 0.95047 * finv(fy + a / 500);
  const y = finv(fy);
  const z = 1.08883 * finv(fy - b / 200);
  const encode = (v: number) => {
    const c = Math.min(1, Math.max(0, v));
    return 255 * (c <= 0.0031308 ? 12.92 * c : 1.055 * c ** (1 / 2.4) - 0.055);
  };
  return [
    encode(3.2404542 * x - 1.5371385 * y - 0.4985314 * z),
    encode(-0.969266 * x + 1.8760108 * y + 0.041556 * z),
    encode(0.0556434 * x - 0.2040259 * y + 1.0572252 * z),
  ];
}

interface ColourComparison {
  mean: number;
  worst: number;
  worstCell: number;
  lightness: number;
  chromaRatio: number;
  expectedChroma: number;
  actualChroma: number;
}

/** Cell `i` of a transformed 4x4 grid comes from this cell of the original grid. */
function sourceCell(i: number, t: Transform): number {
  let x = i % CELLS;
  let y = Math.floor(i / CELLS);
  if (t.mirror) x = CELLS - 1 - x;
  if (t.flip) y = CELLS - 1 - y;
  return t.transpose ? x * CELLS + y : y * CELLS + x;
}

/**
 * The 4x4 colours compared cell by cell, the expected turned by `t`. Where either picture is under
 * 8 pixels tall (or wide), its cells' rows (or columns) hold the same few pixel rows: they are
 * compared averaged.
 */
function compareColours(expected: Fingerprint, actual: Fingerprint, t: Transform): ColourComparison {
  const n = CELLS * CELLS;
  const size = commonSize(expected, actual, t);
  const collapse = (cells: ReadonlyArray<readonly [number, number, number]>) =>
    cells.map((_, i) => {
      const x = i % CELLS;
      const y = Math.floor(i / CELLS);
      // Under 8 pixels tall, every row of a column is one; under 8 wide, every column of a row.
      const group = cells.filter(
        (__, j) => (size.height < 8 || Math.floor(j / CELLS) === y) && (size.width < 8 || j % CELLS === x),
      );
      return [0, 1, 2].map((c) => group.reduce((sum, cell) => sum + cell[c]!, 0) / group.length);
    });
  const turned = Array.from({ length: n }, (_, i) => expected.lab[sourceCell(i, t)]!);
  const small = size.width < 8 || size.height < 8;
  const expectedCells = small ? collapse(turned) : turned;
  const actualCells = small ? collapse(actual.lab) : actual.lab;
  let sum = 0;
  let worst = 0;
  let worstCell = 0;
  let lightness = 0;
  let expectedChroma = 0;
  let actualChroma = 0;
  for (let i = 0; i < n; i++) {
    const [l1, a1, b1] = expectedCells[i]!;
    const [l2, a2, b2] = actualCells[i]!;
    const d = Math.hypot(l2! - l1!, a2! - a1!, b2! - b1!);
    sum += d;
    if (d > worst) {
      worst = d;
      worstCell = i;
    }
    lightness += l2! - l1!;
    expectedChroma += Math.hypot(a1!, b1!);
    actualChroma += Math.hypot(a2!, b2!);
  }
  return {
    mean: sum / n,
    worst,
    worstCell,
    lightness: lightness / n,
    // Steadied by CHROMA_SLACK: near grey, a unit of chroma either way is a large ratio.
    chromaRatio:
      expectedChroma / n >= MIN_CHROMA ? (actualChroma + CHROMA_SLACK * n) / (expectedChroma + CHROMA_SLACK * n) : 1,
    expectedChroma: expectedChroma / n,
    actualChroma: actualChroma / n,
  };
}

const ROW_NAMES = ['top', 'upper middle', 'lower middle', 'bottom'];
const COLUMN_NAMES = ['left', 'left of centre', 'right of centre', 'right'];

function colourDiffers(c: ColourComparison): boolean {
  return globalColourChange(c) || c.worst > WORST_DELTA_E;
}

function globalColourChange(c: ColourComparison): boolean {
  return (
    c.mean > MEAN_DELTA_E || Math.abs(Math.log(c.chromaRatio)) > CHROMA_LOG_RATIO || Math.abs(c.lightness) > LIGHTNESS
  );
}

/** The channel orders a wrong conversion may give, as the source channel of red, green and blue. */
const CHANNEL_ORDERS: ReadonlyArray<readonly [string, readonly [number, number, number]]> = [
  ['red and blue channels swapped (BGR)', [2, 1, 0]],
  ['red and green channels swapped', [1, 0, 2]],
  ['green and blue channels swapped', [0, 2, 1]],
  ['channels rotated (GBR)', [1, 2, 0]],
  ['channels rotated (BRG)', [2, 0, 1]],
];

/** The colour difference in words, with its likely cause, or null when the colours match. */
function colourDifference(
  expected: Fingerprint,
  actual: Fingerprint,
  t: Transform,
  c: ColourComparison,
): string | null {
  if (!colourDiffers(c)) return null;
  const measured = `mean ΔE ${round(c.mean)}, worst cell ${round(c.worst)}`;
  if (!globalColourChange(c)) {
    const where = `${ROW_NAMES[Math.floor(c.worstCell / CELLS)]} ${COLUMN_NAMES[c.worstCell % CELLS]}`;
    return `one region differs (${where}; ${measured}): an edited or older version`;
  }
  const causes: string[] = [];
  const swapped = CHANNEL_ORDERS.map(([words, order]) => ({ words, mean: permutedMean(expected, actual, t, order) }));
  const swap = swapped.reduce((a, b) => (b.mean < a.mean ? b : a));
  const saturation = Math.log(c.chromaRatio);
  const percent = `chroma ${Math.round(c.chromaRatio * 100)}%`;
  if (swap.mean <= MEAN_DELTA_E && swap.mean < c.mean / 2) causes.push(swap.words);
  else if (c.actualChroma < 1.5 && c.expectedChroma >= MIN_CHROMA) causes.push('greyscale where colour is expected');
  else {
    if (Math.abs(c.lightness) > CAUSE_LIGHTNESS) {
      const sign = c.lightness > 0 ? '+' : '';
      causes.push(
        `${c.lightness > 0 ? 'lighter' : 'darker'} (mean ΔL* ${sign}${round(c.lightness)}): ` +
          'a gamma or tone-curve error?',
      );
    }
    if (saturation < -CAUSE_CHROMA_LOG_RATIO && Math.abs(c.lightness) <= CAUSE_LIGHTNESS) {
      causes.push(`less saturated (${percent}): a wide-gamut (Display P3, Adobe RGB) picture shown as sRGB?`);
    } else if (Math.abs(saturation) > CAUSE_CHROMA_LOG_RATIO) {
      causes.push(`${saturation < 0 ? 'less' : 'more'} saturated (${percent})`);
    }
  }
  return `colours differ (${measured})${causes.length > 0 ? `: ${causes.join('; ')}` : ''}`;
}

/** Mean ΔE between the actual colours and the expected ones with their channels in `order`. */
function permutedMean(expected: Fingerprint, actual: Fingerprint, t: Transform, order: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < CELLS * CELLS; i++) {
    const rgb = labToSrgb(...expected.lab[sourceCell(i, t)]!);
    const [l1, a1, b1] = srgbToLab(rgb[order[0]!]!, rgb[order[1]!]!, rgb[order[2]!]!);
    const [l2, a2, b2] = actual.lab[i]!;
    sum += Math.hypot(l2 - l1, a2 - a1, b2 - b1);
  }
  return sum / (CELLS * CELLS);
}

function aspectDifference(expected: Fingerprint, actual: Fingerprint, t: Transform): string | null {
  const [ew, eh] = t.transpose ? [expected.height, expected.width] : [expected.width, expected.height];
  const difference = Math.abs(Math.log(ew / eh) - Math.log(actual.width / actual.height));
  // A rendition's sides are rounded to whole pixels: half a pixel on each side of each picture.
  const rounding = 0.5 / ew + 0.5 / eh + 0.5 / actual.width + 0.5 / actual.height + 0.002;
  if (difference <= rounding) return null;
  const ratio = (w: number, h: number) => `${round(w / h, 2)} (${w}x${h})`;
  return `aspect ratio differs: ${ratio(actual.width, actual.height)}, expected ${ratio(ew, eh)}`;
}

function round(value: number, digits = 1): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
