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
 * multiply-add rounded once (`fround(a * b + c)`: the float product is exact in a double).
 */

import type { RecursiveGaussian } from './recursive-gaussian.js';

const f = Math.fround;

/**
 * The horizontal pass of `FastGaussian` (`FastGaussian1D` in gauss_blur.cc), one image row at a time,
 * with its scratch rows. First the sums of the two taps of every output are made (`tapSums`, or
 * `tapSumsOfProducts` for a row of products, which are never stored), then `blur` runs the three
 * recursions one after the other over the row (they are independent) and adds them up as the
 * reference does.
 */
export class HorizontalBlur {
  readonly #rg: RecursiveGaussian;
  readonly #width: number;
  /** sums[i] feeds output i - N + 1 (the recursions start at n = -N + 1). */
  readonly #sums: Float32Array;
  readonly #y1: Float32Array;
  readonly #y3: Float32Array;
  readonly #y5: Float32Array;

  constructor(rg: RecursiveGaussian, width: number) {
    this.#rg = rg;
    this.#width = width;
    this.#sums = new Float32Array(width + rg.radius - 1);
    this.#y1 = new Float32Array(width);
    this.#y3 = new Float32Array(width);
    this.#y5 = new Float32Array(width);
  }

  /** Tap sums of `input` from `start`: in[n - N - 1] + in[n + N - 1], zero outside the row. */
  tapSums(input: Float32Array, start: number): void {
    const sums = this.#sums;
    const width = this.#width;
    const gap = 2 * this.#rg.radius;
    const both = Math.min(gap, width);
    for (let i = 0; i < both; i++) sums[i] = input[start + i]!;
    for (let i = both; i < Math.min(gap, sums.length); i++) sums[i] = 0;
    for (let i = gap; i < width; i++) sums[i] = input[start + i - gap]! + input[start + i]!;
    for (let i = Math.max(width, gap); i < sums.length; i++) sums[i] = input[start + i - gap]!;
  }

  /** Tap sums of the float32 products `a[x] * b[x]` from `start` (the reference's `Multiply`). */
  tapSumsOfProducts(a: Float32Array, b: Float32Array, start: number): void {
    const sums = this.#sums;
    const width = this.#width;
    const gap = 2 * this.#rg.radius;
    const both = Math.min(gap, width);
    for (let i = 0; i < both; i++) sums[i] = a[start + i]! * b[start + i]!;
    for (let i = both; i < Math.min(gap, sums.length); i++) sums[i] = 0;
    for (let i = gap, j = start; i < width; i++, j++) {
      sums[i] = f(a[j]! * b[j]!) + f(a[j + gap]! * b[j + gap]!);
    }
    for (let i = Math.max(width, gap); i < sums.length; i++) sums[i] = a[start + i - gap]! * b[start + i - gap]!;
  }

  /** Blurs the row whose tap sums were just made into `output` from `start`. */
  blur(output: Float32Array, start: number): void {
    const width = this.#width;
    const y1 = this.#y1;
    const y3 = this.#y3;
    const y5 = this.#y5;
    recursion(this.#rg, 0, this.#sums, width, y1);
    recursion(this.#rg, 4, this.#sums, width, y3);
    recursion(this.#rg, 8, this.#sums, width, y5);
    for (let n = 0; n < width; n++) output[start + n] = f(y1[n]! + f(y3[n]! + y5[n]!));
  }
}

/**
 * One recursion of `FastGaussian1D` (its constants at `k` in the lane tables) over a row of tap sums
 * (`sums[n + N - 1]` feeds output n), into `out`. Like the reference it runs single samples at both
 * ends and four at a time in between, where lane j adds inputs 0..j, then the output before the
 * previous one, then the previous one, each rounded once (which differs from stepping one at a time).
 */
function recursion(rg: RecursiveGaussian, k: number, sums: Float32Array, width: number, out: Float32Array): void {
  const N = rg.radius;
  const { mulIn, mulPrev, mulPrev2 } = rg;
  const m0 = mulIn[k]!;
  const m1 = mulIn[k + 1]!;
  const m2 = mulIn[k + 2]!;
  const m3 = mulIn[k + 3]!;
  const p0 = mulPrev[k]!;
  const p1 = mulPrev[k + 1]!;
  const p2 = mulPrev[k + 2]!;
  const p3 = mulPrev[k + 3]!;
  const q1 = mulPrev2[k + 1]!;
  const q2 = mulPrev2[k + 2]!;
  const q3 = mulPrev2[k + 3]!;
  const shift = N - 1;
  let prev = 0;
  let prev2 = 0;
  let n = -N + 1;
  // Left border, one sample at a time, up to the first multiple of 4 past N.
  const leftEnd = Math.min((N + 4) & ~3, width);
  for (; n < leftEnd; n++) {
    // Lane 0: mul_prev2 is -1, so adding it is a subtraction rounded once.
    const o = f(p0 * prev + f(f(sums[n + shift]! * m0) - prev2));
    prev2 = prev;
    prev = o;
    if (n >= 0) out[n] = o;
  }
  // Interior, four outputs per step.
  for (; n < width - N - 2; n += 4) {
    const s0 = sums[n + shift]!;
    const s1 = sums[n + shift + 1]!;
    const s2 = sums[n + shift + 2]!;
    const s3 = sums[n + shift + 3]!;
    const o0 = f(p0 * prev + f(f(s0 * m0) - prev2));
    const o1 = f(p1 * prev + f(q1 * prev2 + f(m0 * s1 + f(s0 * m1))));
    const o2 = f(p2 * prev + f(q2 * prev2 + f(m0 * s2 + f(m1 * s1 + f(s0 * m2)))));
    const o3 = f(p3 * prev + f(q3 * prev2 + f(m0 * s3 + f(m1 * s2 + f(m2 * s1 + f(s0 * m3))))));
    out[n] = o0;
    out[n + 1] = o1;
    out[n + 2] = o2;
    out[n + 3] = o3;
    prev2 = o2;
    prev = o3;
  }
  // Right border, one sample at a time.
  for (; n < width; n++) {
    const o = f(p0 * prev + f(f(sums[n + shift]! * m0) - prev2));
    prev2 = prev;
    prev = o;
    out[n] = o;
  }
}

/**
 * The vertical pass of `FastGaussian` (`VerticalStrip`, `VerticalBlock` in gauss_blur.cc), fed one
 * row at a time so that a whole blurred plane never has to exist: each call advances every column's
 * three recursions by one row. Rows are those of the horizontally blurred plane.
 */
export class VerticalBlur {
  readonly #rg: RecursiveGaussian;
  readonly #width: number;
  /**
   * Per column, six floats: the previous output of k = 1, 3, 5 and the one before, in two halves that
   * swap roles after each step (`#newer` is 0 or 3: where the previous outputs are). One interleaved
   * array is much faster in V8 than six separate rows.
   */
  readonly #state: Float32Array;
  #newer = 0;

  constructor(rg: RecursiveGaussian, width: number) {
    this.#rg = rg;
    this.#width = width;
    this.#state = new Float32Array(6 * width);
  }

  /**
   * One step: `top` is row n - N - 1 and `bottom` row n + N - 1 of the input, each a start offset
   * into `source` or `undefined` when outside the plane (zeros); writes output row n into `output`
   * unless `output` is `undefined` (the warm-up rows above the plane).
   */
  step(source: Float32Array, top: number | undefined, bottom: number | undefined, output?: Float32Array): void {
    if (top !== undefined && bottom !== undefined && output !== undefined) {
      this.#interior(source, top, bottom, output);
    } else {
      this.#border(source, top, bottom, output);
    }
    this.#newer = 3 - this.#newer;
  }

  /** The common step: two input rows, one output row; the loop has no branches. */
  #interior(source: Float32Array, top: number, bottom: number, output: Float32Array): void {
    const [n1, n3, n5] = this.#rg.n2;
    const [e1, e3, e5] = this.#rg.d1;
    const s = this.#state;
    const a = this.#newer;
    const b = 3 - a;
    const width = this.#width;
    for (let x = 0, i = 0; x < width; x++, i += 6) {
      const sum = f(source[top + x]! + source[bottom + x]!);
      // MulAdd(n2, sum, NegMulSub(d1, y[n-1], y[n-2])), each fused op rounded once.
      const o1 = f(n1 * sum + f(-(e1 * s[i + a]!) - s[i + b]!));
      const o3 = f(n3 * sum + f(-(e3 * s[i + a + 1]!) - s[i + b + 1]!));
      const o5 = f(n5 * sum + f(-(e5 * s[i + a + 2]!) - s[i + b + 2]!));
      // The row before the previous one is no longer needed: it becomes the newest.
      s[i + b] = o1;
      s[i + b + 1] = o3;
      s[i + b + 2] = o5;
      output[x] = f(o1 + f(o3 + o5));
    }
  }

  /** Steps at the top and bottom of the plane: a missing row counts as zeros (adding it is exact). */
  #border(source: Float32Array, top: number | undefined, bottom: number | undefined, output?: Float32Array): void {
    const [n1, n3, n5] = this.#rg.n2;
    const [e1, e3, e5] = this.#rg.d1;
    const s = this.#state;
    const a = this.#newer;
    const b = 3 - a;
    for (let x = 0, i = 0; x < this.#width; x++, i += 6) {
      const sum = (top === undefined ? 0 : source[top + x]!) + (bottom === undefined ? 0 : source[bottom + x]!);
      const o1 = f(n1 * sum + f(-(e1 * s[i + a]!) - s[i + b]!));
      const o3 = f(n3 * sum + f(-(e3 * s[i + a + 1]!) - s[i + b + 1]!));
      const o5 = f(n5 * sum + f(-(e5 * s[i + a + 2]!) - s[i + b + 2]!));
      s[i + b] = o1;
      s[i + b + 1] = o3;
      s[i + b + 2] = o5;
      if (output !== undefined) output[x] = f(o1 + f(o3 + o5));
    }
  }
}
