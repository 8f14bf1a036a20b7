/**
 * The colour grid: 4x4 cells of mean colour in CIELAB (D65), from the 32x32 grid of mean sRGB values
 * (grid.ts), and the conversions between sRGB and CIELAB.
 */
import { GRID } from './grid.js';

/** The colour grid's cells across and down. */
export const CELLS = 4;

/** The mean colour of each of the 4x4 cells of the 32x32 grid (`boxAverage`), row by row, in CIELAB. */
export function colourCells(means: Float64Array): Array<[number, number, number]> {
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
export function srgbToLab(r: number, g: number, b: number): [number, number, number] {
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
export function labToSrgb(l: number, a: number, b: number): [number, number, number] {
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
