/**
 * The per-row error sums of SSIMULACRA2 (src/quality/scale.ts): the branchless sums are those of the
 * plain branches to the bit, on ordinary rows and on rows with a zero denominator, an infinity or a NaN.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addErrors, addErrorsWithBranches } from '../../src/quality/scale.js';

const C2 = Math.fround(0.0009);

/** The seven rows `addErrors` reads, `width` floats each, from `pick(row, x)`. */
function rows(width: number, pick: (row: number, x: number) => number) {
  return Array.from({ length: 7 }, (_, row) => Float32Array.from({ length: width }, (_, x) => pick(row, x)));
}

/** The six sums of both ways, after adding to the same starting sums. */
function both(width: number, [m1, v11, img1, m2, v22, v12, img2]: Float32Array[]) {
  const sums = [new Float64Array([1, 2, 3, 4, 5, 6]), new Float64Array([1, 2, 3, 4, 5, 6])] as const;
  addErrors(m1!, v11!, 0, img1!, 0, m2!, v22!, v12!, img2!, 0, width, sums[0], 0);
  addErrorsWithBranches(m1!, v11!, 0, img1!, 0, m2!, v22!, v12!, img2!, 0, width, sums[1], 0);
  return sums.map((s) => [...s]);
}

describe('addErrors', () => {
  it('sums as the branches do on rows of plausible means, variances and pixels', () => {
    const row = fc.record({
      width: fc.integer({ min: 1, max: 64 }),
      values: fc.array(fc.float({ min: Math.fround(-0.05), max: Math.fround(1.2), noNaN: true }), {
        minLength: 7 * 64,
        maxLength: 7 * 64,
      }),
    });
    fc.assert(
      fc.property(row, ({ width, values }) => {
        const [fast, branches] = both(
          width,
          rows(width, (r, x) => values[r * 64 + x]!),
        );
        expect(fast).toEqual(branches);
      }),
      { numRuns: 200 },
    );
  });

  it('sums as the branches do where the SSIM denominator is 0 or a value is infinite or NaN', () => {
    // Columns: m1, v11, img1, m2, v22, v12, img2. The denominator is 0 where v11 = -C2, m2 = 0.5 and
    // v22 = 0.25; then the numerator decides: positive (an error of minus infinity, which the
    // branch clamps to 0), negative (plus infinity), or 0 (0 / 0).
    const ordinary = [0.3, 0.01, 0.3, 0.31, 0.1, 0.1, 0.32];
    const cases = {
      'minus infinity': [0.4, -C2, 0.41, 0.5, 0.25, 0.2, 0.52],
      'plus infinity': [0.4, -C2, 0.39, 0.5, 0.25, 0.1, 0.48],
      '0 / 0': [0, -C2, 0.01, 0.5, 0.25, -C2 / 2, 0.5],
    };
    for (const [name, pixel] of Object.entries(cases)) {
      const [fast, branches] = both(
        3,
        rows(3, (r, x) => (x === 1 ? pixel : ordinary)[r]!),
      );
      expect(fast, name).toEqual(branches);
    }
    const [, clamped] = both(
      1,
      rows(1, (r) => cases['minus infinity'][r]!),
    );
    expect(clamped).toEqual([1, 2, expect.any(Number), expect.any(Number), expect.any(Number), expect.any(Number)]);

    for (const odd of [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN]) {
      for (let r = 0; r < 7; r++) {
        const [fast, branches] = both(
          3,
          rows(3, (row, x) => (row === r && x === 1 ? odd : ordinary[row]!)),
        );
        expect(fast, `${odd} in row ${r}`).toEqual(branches);
      }
    }
  });
});
