/**
 * The recursive Gaussian blur of SSIMULACRA2: libjxl's `FastGaussian` (lib/jxl/gauss_blur.cc in
 * cloudinary/ssimulacra2), an IIR approximation of a Gaussian ("Recursive Implementation of the
 * Gaussian Filter Using Truncated Cosine Functions", Charalampidis 2016) with zero padding at every
 * border. Scores are tuned on this filter's output, edges included (zero padding darkens them), so a
 * box or an exact Gaussian would not land on the reference's scores.
 *
 * Each output is the sum of three second-order recursions (k = 1, 3, 5):
 * `y_k[n] = n2_k * (in[n - N - 1] + in[n + N - 1]) - d1_k * y_k[n - 1] - y_k[n - 2]`,
 * started at n = -N + 1 with zeros and written from n = 0 on (constants: recursive-gaussian.ts).
 *
 * Why float32 to the bit: the recursions' poles lie on the unit circle, so a rounding error never
 * decays; it rides along the rest of the row (or column). The reference runs in float32 with fused
 * multiply-adds, and the SSIM term (a small variance less a product of means) magnifies that noise
 * enough to move a score near 90 by a few tenths. Every step here is therefore rounded as the
 * reference's AVX2 (or any FMA) build rounds it: `Math.fround` after each operation, and a
 * multiply-add as a fused one (`fround(a * b + c)`: the float product is exact in a double, and the
 * sum's rounding to double then float differs from one rounding only when c is some 2^29 times
 * smaller than the product and on a midpoint, which these values never are). A value
 * stored into a Float32Array is rounded by the store, so no `Math.fround` is written before one.
 */

import type { RecursiveGaussian } from './recursive-gaussian.js';

const f = Math.fround;

/**
 * The horizontal pass of `FastGaussian` (`FastGaussian1D` in gauss_blur.cc) over one row: `width`
 * samples of `input` from `start` blurred into `output` from `outStart`. The three recursions run in
 * one loop (they are independent, so interleaving them changes no rounding and lets their dependency
 * chains overlap), each tap sum is made where it is used, and the three are added up as the
 * reference does when each output is made. A row of products (sigma) is blurred from the products
 * `multiplyRow` stored, which are the float32 products the reference's `Multiply` makes.
 *
 * Like the reference each recursion runs single samples at both ends and four at a time in between,
 * where lane j adds inputs 0..j, then the output before the previous one, then the previous one,
 * each rounded once (which differs from stepping one at a time).
 */
export function blurRow(
  rg: RecursiveGaussian,
  input: Float32Array,
  start: number,
  width: number,
  output: Float32Array,
  outStart: number,
): void {
  const N = rg.radius;
  const gap = 2 * N;
  const { mulIn, mulPrev, mulPrev2 } = rg;
  const a0 = mulIn[0]!;
  const a1 = mulIn[1]!;
  const a2 = mulIn[2]!;
  const a3 = mulIn[3]!;
  const b0 = mulIn[4]!;
  const b1 = mulIn[5]!;
  const b2 = mulIn[6]!;
  const b3 = mulIn[7]!;
  const c0 = mulIn[8]!;
  const c1 = mulIn[9]!;
  const c2 = mulIn[10]!;
  const c3 = mulIn[11]!;
  const pa0 = mulPrev[0]!;
  const pa1 = mulPrev[1]!;
  const pa2 = mulPrev[2]!;
  const pa3 = mulPrev[3]!;
  const pb0 = mulPrev[4]!;
  const pb1 = mulPrev[5]!;
  const pb2 = mulPrev[6]!;
  const pb3 = mulPrev[7]!;
  const pc0 = mulPrev[8]!;
  const pc1 = mulPrev[9]!;
  const pc2 = mulPrev[10]!;
  const pc3 = mulPrev[11]!;
  const qa1 = mulPrev2[1]!;
  const qa2 = mulPrev2[2]!;
  const qa3 = mulPrev2[3]!;
  const qb1 = mulPrev2[5]!;
  const qb2 = mulPrev2[6]!;
  const qb3 = mulPrev2[7]!;
  const qc1 = mulPrev2[9]!;
  const qc2 = mulPrev2[10]!;
  const qc3 = mulPrev2[11]!;
  // The previous output of each recursion (k = 1, 3, 5) and the one before.
  let ya = 0;
  let za = 0;
  let yb = 0;
  let zb = 0;
  let yc = 0;
  let zc = 0;
  // Output n reads the tap sum in[n - N - 1] + in[n + N - 1]: at i = n + N - 1, in[i - gap] + in[i].
  let n = -N + 1;
  let i = 0;
  // Left border, one sample at a time, up to the first multiple of 4 past N. Lane 0: mul_prev2 is
  // -1, so adding it is a subtraction rounded once.
  const leftEnd = Math.min((N + 4) & ~3, width);
  for (; n < leftEnd; n++, i++) {
    const s = tapSum(input, start, width, gap, i);
    const oa = f(pa0 * ya + f(f(s * a0) - za));
    const ob = f(pb0 * yb + f(f(s * b0) - zb));
    const oc = f(pc0 * yc + f(f(s * c0) - zc));
    za = ya;
    ya = oa;
    zb = yb;
    yb = ob;
    zc = yc;
    yc = oc;
    if (n >= 0) output[outStart + n] = oa + f(ob + oc);
  }
  // Interior, four outputs per step, both taps inside the row.
  for (let j = start + i, o = outStart + n; n < width - N - 2; n += 4, j += 4, o += 4) {
    const s0 = f(input[j - gap]! + input[j]!);
    const s1 = f(input[j + 1 - gap]! + input[j + 1]!);
    const s2 = f(input[j + 2 - gap]! + input[j + 2]!);
    const s3 = f(input[j + 3 - gap]! + input[j + 3]!);
    const oa0 = f(pa0 * ya + f(f(s0 * a0) - za));
    const oa1 = f(pa1 * ya + f(qa1 * za + f(a0 * s1 + f(s0 * a1))));
    const oa2 = f(pa2 * ya + f(qa2 * za + f(a0 * s2 + f(a1 * s1 + f(s0 * a2)))));
    const oa3 = f(pa3 * ya + f(qa3 * za + f(a0 * s3 + f(a1 * s2 + f(a2 * s1 + f(s0 * a3))))));
    const ob0 = f(pb0 * yb + f(f(s0 * b0) - zb));
    const ob1 = f(pb1 * yb + f(qb1 * zb + f(b0 * s1 + f(s0 * b1))));
    const ob2 = f(pb2 * yb + f(qb2 * zb + f(b0 * s2 + f(b1 * s1 + f(s0 * b2)))));
    const ob3 = f(pb3 * yb + f(qb3 * zb + f(b0 * s3 + f(b1 * s2 + f(b2 * s1 + f(s0 * b3))))));
    const oc0 = f(pc0 * yc + f(f(s0 * c0) - zc));
    const oc1 = f(pc1 * yc + f(qc1 * zc + f(c0 * s1 + f(s0 * c1))));
    const oc2 = f(pc2 * yc + f(qc2 * zc + f(c0 * s2 + f(c1 * s1 + f(s0 * c2)))));
    const oc3 = f(pc3 * yc + f(qc3 * zc + f(c0 * s3 + f(c1 * s2 + f(c2 * s1 + f(s0 * c3))))));
    output[o] = oa0 + f(ob0 + oc0);
    output[o + 1] = oa1 + f(ob1 + oc1);
    output[o + 2] = oa2 + f(ob2 + oc2);
    output[o + 3] = oa3 + f(ob3 + oc3);
    za = oa2;
    ya = oa3;
    zb = ob2;
    yb = ob3;
    zc = oc2;
    yc = oc3;
    i += 4;
  }
  // Right border, one sample at a time.
  for (; n < width; n++, i++) {
    const s = tapSum(input, start, width, gap, i);
    const oa = f(pa0 * ya + f(f(s * a0) - za));
    const ob = f(pb0 * yb + f(f(s * b0) - zb));
    const oc = f(pc0 * yc + f(f(s * c0) - zc));
    za = ya;
    ya = oa;
    zb = yb;
    yb = ob;
    zc = yc;
    yc = oc;
    output[outStart + n] = oa + f(ob + oc);
  }
}

/** in[i - gap] + in[i] of the row at `start`, a missing tap counting as nothing (not even a +0). */
function tapSum(input: Float32Array, start: number, width: number, gap: number, i: number): number {
  if (i < gap) return i < width ? input[start + i]! : 0;
  return i < width ? f(input[start + i - gap]! + input[start + i]!) : input[start + i - gap]!;
}

/** The float32 products `a[aStart + x] * b[bStart + x]` into `output` (the reference's `Multiply`). */
export function multiplyRow(
  a: Float32Array,
  aStart: number,
  b: Float32Array,
  bStart: number,
  width: number,
  output: Float32Array,
): void {
  for (let x = 0; x < width; x++) output[x] = a[aStart + x]! * b[bStart + x]!;
}

/**
 * The vertical pass of `FastGaussian` (`VerticalStrip`, `VerticalBlock` in gauss_blur.cc), fed one
 * row at a time so that a whole blurred plane never has to exist: each call advances every column's
 * three recursions by one row. Rows are those of the horizontally blurred plane.
 */
export class VerticalBlur {
  readonly #width: number;
  readonly #n1: number;
  readonly #n3: number;
  readonly #n5: number;
  readonly #negD1: number;
  readonly #negD3: number;
  readonly #negD5: number;
  /**
   * Per column, the previous output of k = 1, 3, 5 (`#newer`) and the one before (`#older`), three
   * floats a column; each step overwrites the older with its outputs and the two swap roles.
   */
  #newer: Float32Array;
  #older: Float32Array;

  constructor(rg: RecursiveGaussian, width: number) {
    this.#width = width;
    [this.#n1, this.#n3, this.#n5] = rg.n2;
    // NegMulSub(d1, y, z) is -(d1 * y) - z, and -(d1 * y) is exactly (-d1) * y: negated once, here.
    const [d1, d3, d5] = rg.d1;
    this.#negD1 = -d1;
    this.#negD3 = -d3;
    this.#negD5 = -d5;
    this.#newer = new Float32Array(3 * width);
    this.#older = new Float32Array(3 * width);
  }

  /**
   * One step: `top` is row n - N - 1 and `bottom` row n + N - 1 of the input, each a start offset
   * into `source` or -1 when outside the plane (zeros); writes output row n into `output` from
   * `outAt` unless `output` is `undefined` (the warm-up rows above the plane).
   */
  step(source: Float32Array, top: number, bottom: number, output: Float32Array | undefined, outAt: number): void {
    if (top >= 0 && bottom >= 0 && output !== undefined) {
      this.#interior(source, top, bottom, output, outAt);
    } else {
      this.#border(source, top, bottom, output, outAt);
    }
    const newer = this.#older;
    this.#older = this.#newer;
    this.#newer = newer;
  }

  /** The common step: two input rows, one output row; the loop has no branches. */
  #interior(source: Float32Array, top: number, bottom: number, output: Float32Array, outAt: number): void {
    const n1 = this.#n1;
    const n3 = this.#n3;
    const n5 = this.#n5;
    const negD1 = this.#negD1;
    const negD3 = this.#negD3;
    const negD5 = this.#negD5;
    const prev = this.#newer;
    const prev2 = this.#older;
    const width = this.#width;
    for (let x = 0, i = 0; x < width; x++, i += 3) {
      const sum = f(source[top + x]! + source[bottom + x]!);
      // MulAdd(n2, sum, NegMulSub(d1, y[n-1], y[n-2])), each fused op rounded once.
      const o1 = f(n1 * sum + f(negD1 * prev[i]! - prev2[i]!));
      const o3 = f(n3 * sum + f(negD3 * prev[i + 1]! - prev2[i + 1]!));
      const o5 = f(n5 * sum + f(negD5 * prev[i + 2]! - prev2[i + 2]!));
      // The row before the previous one is no longer needed: it becomes the newest.
      prev2[i] = o1;
      prev2[i + 1] = o3;
      prev2[i + 2] = o5;
      output[outAt + x] = o1 + f(o3 + o5);
    }
  }

  /** Steps at the top and bottom of the plane: a missing row counts as zeros (adding it is exact). */
  #border(source: Float32Array, top: number, bottom: number, output: Float32Array | undefined, outAt: number): void {
    const n1 = this.#n1;
    const n3 = this.#n3;
    const n5 = this.#n5;
    const negD1 = this.#negD1;
    const negD3 = this.#negD3;
    const negD5 = this.#negD5;
    const prev = this.#newer;
    const prev2 = this.#older;
    for (let x = 0, i = 0; x < this.#width; x++, i += 3) {
      const sum = (top < 0 ? 0 : source[top + x]!) + (bottom < 0 ? 0 : source[bottom + x]!);
      const o1 = f(n1 * sum + f(negD1 * prev[i]! - prev2[i]!));
      const o3 = f(n3 * sum + f(negD3 * prev[i + 1]! - prev2[i + 1]!));
      const o5 = f(n5 * sum + f(negD5 * prev[i + 2]! - prev2[i + 2]!));
      prev2[i] = o1;
      prev2[i + 1] = o3;
      prev2[i + 2] = o5;
      if (output !== undefined) output[outAt + x] = o1 + f(o3 + o5);
    }
  }
}
