/**
 * The colour grids of two fingerprints compared cell by cell, under an orientation, and the
 * difference said in words with its likely cause: a region edited, channels swapped, greyscale, a
 * gamma or tone-curve error, a wide-gamut picture shown as sRGB.
 */
import type { Fingerprint } from './codec.js';
import { CELLS, labToSrgb, srgbToLab } from './colour.js';
import { commonSize, type Transform } from './orientation.js';
import { THRESHOLDS } from './thresholds.js';

const {
  MEAN_DELTA_E,
  WORST_DELTA_E,
  CHROMA_LOG_RATIO,
  MIN_CHROMA,
  CHROMA_SLACK,
  LIGHTNESS,
  CAUSE_CHROMA_LOG_RATIO,
  CAUSE_LIGHTNESS,
  GREYSCALE_CHROMA,
} = THRESHOLDS;

/** Two colour grids compared (`compareColours`): per-cell ΔE, lightness and chroma, as means. */
export interface ColourComparison {
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
export function compareColours(expected: Fingerprint, actual: Fingerprint, t: Transform): ColourComparison {
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

export function colourDiffers(c: ColourComparison): boolean {
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
export function colourDifference(
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
  else if (c.actualChroma < GREYSCALE_CHROMA && c.expectedChroma >= MIN_CHROMA)
    causes.push('greyscale where colour is expected');
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

/** `value` rounded to `digits` decimals, for the words and the measures. */
export function round(value: number, digits = 1): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
