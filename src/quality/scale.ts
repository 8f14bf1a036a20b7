/**
 * One scale of SSIMULACRA2: the body of the scale loop of `ComputeSSIMULACRA2` with `SSIMMap` and
 * `EdgeDiffMap` (src/ssimulacra2.cc in cloudinary/ssimulacra2). Both images go to positive XYB; each
 * component's mean (mu), variances and covariance are blurred (sigma 1.5); three error maps (SSIM',
 * ringing, blurring) are reduced to their 1-norm and 4-norm.
 *
 * The reference makes whole planes (15 blurred planes per scale). Here rows stream through: each new
 * row is converted and blurred horizontally into a ring of the last 2N + 1 rows, the vertical
 * recursions advance one row, and the finished row's errors are summed at once. The arithmetic is
 * the same; memory is a few rows per plane (a few MB for a 24 MP pair, where whole planes would
 * take over 2 GB).
 *
 * A prepared reference (`prepareScale`) keeps the reference's side of a scale as whole planes: its
 * positive XYB, its blurred mean and its variance (the blurred square less the squared mean), 9
 * floats a pixel; `preparedScaleNorms` then streams only the distorted image's side through.
 * Both ways run the same row functions on the same values, so their norms are the same to the bit.
 */
import { blurRow, multiplyRow, VerticalBlur } from './blur.js';
import { type LinearImage, RowReader } from './linear.js';
import type { RecursiveGaussian } from './recursive-gaussian.js';
import type { ScaleNorms } from './score.js';
import { linearToPositiveXyb } from './xyb.js';

const f = Math.fround;

/** `kC2` of the SSIM formula, a float32 in the reference. */
const C2 = f(0.0009);

type Planes = readonly [Float32Array, Float32Array, Float32Array];

/** The reference's side of one scale, whole planes of `width * height` floats per component (X, Y, B). */
export interface PreparedScale {
  readonly width: number;
  readonly height: number;
  /** Positive XYB. */
  readonly xyb: Planes;
  /** The blurred mean (mu1). */
  readonly mu: Planes;
  /** The variance: blurred square less the squared mean, float32 (`sigma11 - mu1 * mu1` in `SSIMMap`). */
  readonly sigma: Planes;
}

/** Floats a prepared scale holds per pixel: three planes (XYB, mean, variance) of three components. */
export const PREPARED_FLOATS_PER_PIXEL = 9;

const planes = (size: number): Planes => [new Float32Array(size), new Float32Array(size), new Float32Array(size)];

/** The norms of the error maps of `reference` against `distorted` (same size) at this scale. */
export function scaleNorms(reference: LinearImage, distorted: LinearImage, rg: RecursiveGaussian): ScaleNorms {
  const { width, height } = reference;
  const N = rg.radius;
  const ringRows = 2 * N + 1;
  const ring = (): Float32Array => new Float32Array(ringRows * width);
  const row = (): Float32Array => new Float32Array(width);

  const rows1 = new RowReader(reference);
  const rows2 = new RowReader(distorted);
  // Positive XYB rows of each image, component by component, kept until their errors are summed.
  const xyb1 = [ring(), ring(), ring()] as const;
  const xyb2 = [ring(), ring(), ring()] as const;
  // Horizontally blurred rows of each component: mu1, mu2, sigma11, sigma22, sigma12 (the last three
  // before the means are subtracted), and their vertical passes.
  const blurred = [0, 1, 2].map(() => [ring(), ring(), ring(), ring(), ring()] as const);
  const vertical = [0, 1, 2].map(() => [0, 1, 2, 3, 4].map(() => new VerticalBlur(rg, width)));
  const product = row();
  const mu1 = row();
  const mu2 = row();
  const s11 = row();
  const s22 = row();
  const s12 = row();
  const sums = new Float64Array(3 * 6);

  // Step n reads rows n + N - 1 (new) and n - N - 1 of the horizontally blurred planes, and finishes
  // row n; the reference's vertical pass starts at n = -N + 1 as here.
  for (let n = -N + 1; n < height; n++) {
    const bottom = n + N - 1;
    if (bottom < height) {
      const at = (bottom % ringRows) * width;
      rows1.read(bottom);
      rows2.read(bottom);
      linearToPositiveXyb(rows1.r, rows1.g, rows1.b, rows1.start, width, xyb1[0], xyb1[1], xyb1[2], at);
      linearToPositiveXyb(rows2.r, rows2.g, rows2.b, rows2.start, width, xyb2[0], xyb2[1], xyb2[2], at);
      for (let c = 0; c < 3; c++) {
        const a = xyb1[c]!;
        const b = xyb2[c]!;
        const [m1, m2, v11, v22, v12] = blurred[c]!;
        blurRow(rg, a, at, width, m1, at);
        blurRow(rg, b, at, width, m2, at);
        multiplyRow(a, at, a, at, width, product);
        blurRow(rg, product, 0, width, v11, at);
        multiplyRow(b, at, b, at, width, product);
        blurRow(rg, product, 0, width, v22, at);
        multiplyRow(a, at, b, at, width, product);
        blurRow(rg, product, 0, width, v12, at);
      }
    }
    const top = n - N - 1;
    const topAt = top >= 0 ? (top % ringRows) * width : -1;
    const bottomAt = bottom < height ? (bottom % ringRows) * width : -1;
    for (let c = 0; c < 3; c++) {
      const [m1, m2, v11, v22, v12] = blurred[c]!;
      const [y1, y2, y11, y22, y12] = vertical[c]!;
      if (n < 0) {
        y1!.step(m1, topAt, bottomAt, undefined, 0);
        y2!.step(m2, topAt, bottomAt, undefined, 0);
        y11!.step(v11, topAt, bottomAt, undefined, 0);
        y22!.step(v22, topAt, bottomAt, undefined, 0);
        y12!.step(v12, topAt, bottomAt, undefined, 0);
        continue;
      }
      y1!.step(m1, topAt, bottomAt, mu1, 0);
      y2!.step(m2, topAt, bottomAt, mu2, 0);
      y11!.step(v11, topAt, bottomAt, s11, 0);
      y22!.step(v22, topAt, bottomAt, s22, 0);
      y12!.step(v12, topAt, bottomAt, s12, 0);
      subtractSquares(s11, 0, mu1, 0, width);
      const at = (n % ringRows) * width;
      addErrors(mu1, s11, 0, xyb1[c]!, at, mu2, s22, s12, xyb2[c]!, at, width, sums, c * 6);
    }
  }
  return norms(sums, width * height);
}

/**
 * The reference's side of `scaleNorms` for `reference` at this scale, kept as whole planes for
 * `preparedScaleNorms`: `PREPARED_FLOATS_PER_PIXEL` floats a pixel.
 */
export function prepareScale(reference: LinearImage, rg: RecursiveGaussian): PreparedScale {
  const { width, height } = reference;
  const N = rg.radius;
  const ringRows = 2 * N + 1;
  const ring = (): Float32Array => new Float32Array(ringRows * width);
  const size = width * height;
  const xyb = planes(size);
  const mu = planes(size);
  const sigma = planes(size);
  const rows = new RowReader(reference);
  const blurred = [0, 1, 2].map(() => [ring(), ring()] as const);
  const vertical = [0, 1, 2].map(() => [new VerticalBlur(rg, width), new VerticalBlur(rg, width)] as const);
  const product = new Float32Array(width);

  for (let n = -N + 1; n < height; n++) {
    const bottom = n + N - 1;
    if (bottom < height) {
      const at = (bottom % ringRows) * width;
      const rowAt = bottom * width;
      rows.read(bottom);
      linearToPositiveXyb(rows.r, rows.g, rows.b, rows.start, width, xyb[0], xyb[1], xyb[2], rowAt);
      for (let c = 0; c < 3; c++) {
        const a = xyb[c]!;
        const [m1, v11] = blurred[c]!;
        blurRow(rg, a, rowAt, width, m1, at);
        multiplyRow(a, rowAt, a, rowAt, width, product);
        blurRow(rg, product, 0, width, v11, at);
      }
    }
    const top = n - N - 1;
    const topAt = top >= 0 ? (top % ringRows) * width : -1;
    const bottomAt = bottom < height ? (bottom % ringRows) * width : -1;
    for (let c = 0; c < 3; c++) {
      const [m1, v11] = blurred[c]!;
      const [y1, y11] = vertical[c]!;
      if (n < 0) {
        y1.step(m1, topAt, bottomAt, undefined, 0);
        y11.step(v11, topAt, bottomAt, undefined, 0);
        continue;
      }
      const rowAt = n * width;
      y1.step(m1, topAt, bottomAt, mu[c], rowAt);
      y11.step(v11, topAt, bottomAt, sigma[c], rowAt);
      subtractSquares(sigma[c]!, rowAt, mu[c]!, rowAt, width);
    }
  }
  return { width, height, xyb, mu, sigma };
}

/** `scaleNorms(reference, distorted, rg)` from the reference's prepared side of this scale. */
export function preparedScaleNorms(
  reference: PreparedScale,
  distorted: LinearImage,
  rg: RecursiveGaussian,
): ScaleNorms {
  const { width, height, xyb: xyb1, mu: mu1, sigma: s11 } = reference;
  const N = rg.radius;
  const ringRows = 2 * N + 1;
  const ring = (): Float32Array => new Float32Array(ringRows * width);
  const row = (): Float32Array => new Float32Array(width);

  const rows2 = new RowReader(distorted);
  const xyb2 = [ring(), ring(), ring()] as const;
  // Horizontally blurred rows of mu2, sigma22 and sigma12 of each component, and their vertical passes.
  const blurred = [0, 1, 2].map(() => [ring(), ring(), ring()] as const);
  const vertical = [0, 1, 2].map(() => [0, 1, 2].map(() => new VerticalBlur(rg, width)));
  const product = row();
  const mu2 = row();
  const s22 = row();
  const s12 = row();
  const sums = new Float64Array(3 * 6);

  for (let n = -N + 1; n < height; n++) {
    const bottom = n + N - 1;
    if (bottom < height) {
      const at = (bottom % ringRows) * width;
      const rowAt = bottom * width;
      rows2.read(bottom);
      linearToPositiveXyb(rows2.r, rows2.g, rows2.b, rows2.start, width, xyb2[0], xyb2[1], xyb2[2], at);
      for (let c = 0; c < 3; c++) {
        const a = xyb1[c]!;
        const b = xyb2[c]!;
        const [m2, v22, v12] = blurred[c]!;
        blurRow(rg, b, at, width, m2, at);
        multiplyRow(b, at, b, at, width, product);
        blurRow(rg, product, 0, width, v22, at);
        multiplyRow(a, rowAt, b, at, width, product);
        blurRow(rg, product, 0, width, v12, at);
      }
    }
    const top = n - N - 1;
    const topAt = top >= 0 ? (top % ringRows) * width : -1;
    const bottomAt = bottom < height ? (bottom % ringRows) * width : -1;
    for (let c = 0; c < 3; c++) {
      const [m2, v22, v12] = blurred[c]!;
      const [y2, y22, y12] = vertical[c]!;
      if (n < 0) {
        y2!.step(m2, topAt, bottomAt, undefined, 0);
        y22!.step(v22, topAt, bottomAt, undefined, 0);
        y12!.step(v12, topAt, bottomAt, undefined, 0);
        continue;
      }
      y2!.step(m2, topAt, bottomAt, mu2, 0);
      y22!.step(v22, topAt, bottomAt, s22, 0);
      y12!.step(v12, topAt, bottomAt, s12, 0);
      const rowAt = n * width;
      addErrors(
        mu1[c]!,
        s11[c]!,
        rowAt,
        xyb1[c]!,
        rowAt,
        mu2,
        s22,
        s12,
        xyb2[c]!,
        (n % ringRows) * width,
        width,
        sums,
        c * 6,
      );
    }
  }
  return norms(sums, width * height);
}

/** `sigma - mu * mu` into `sigma` for `width` floats from the offsets, each step rounded to float32. */
function subtractSquares(sigma: Float32Array, sigmaAt: number, mu: Float32Array, muAt: number, width: number): void {
  for (let x = 0, s = sigmaAt, m = muAt; x < width; x++, s++, m++) {
    const mean = mu[m]!;
    sigma[s] = sigma[s]! - f(mean * mean);
  }
}

/**
 * Adds one row's errors of one component to `sums` from `at`: SSIM' error and its 4th power, then
 * ringing (distorted has edges where the reference is smooth) and blurring (the reverse), each with
 * its 4th power (`SSIMMap`, `EdgeDiffMap`). The reference's mean and variance rows are at `refAt`
 * in `m1` and `v11`, its XYB row at `img1At`; the distorted image's blurred rows (`m2`, `v22`: its
 * blurred square, `v12`: the blurred product) from 0, its XYB row at `img2At`.
 *
 * Negative SSIM' errors count as 0, and the edge error goes to ringing when positive, else to
 * blurring. For finite values (|v| + v) / 2 and (|v| - v) / 2 are those parts exactly, without a
 * branch to mispredict; a row where that is not so (an infinite error, from a zero denominator, would
 * make a NaN) is summed again with the branches (`addErrorsWithBranches`), so every row's sums are
 * those of the branches.
 */
export function addErrors(
  m1: Float32Array,
  v11: Float32Array,
  refAt: number,
  img1: Float32Array,
  img1At: number,
  m2: Float32Array,
  v22: Float32Array,
  v12: Float32Array,
  img2: Float32Array,
  img2At: number,
  width: number,
  sums: Float64Array,
  at: number,
): void {
  let ssim1 = 0;
  let ssim4 = 0;
  let ring1 = 0;
  let ring4 = 0;
  let blur1 = 0;
  let blur4 = 0;
  for (let x = 0, r = refAt, i1 = img1At, i2 = img2At; x < width; x++, r++, i1++, i2++) {
    const mu1 = m1[r]!;
    const mu2 = m2[x]!;
    // SSIM without the luminance denominator: the reference's "corrected" formula (see SSIMMap), in
    // float32 as there (the variances are small differences of large numbers: their rounding counts).
    const diff = f(mu1 - mu2);
    const numM = f(1 - f(diff * diff));
    const numS = f(2 * f(v12[x]! - f(mu1 * mu2)) + C2);
    const denS = f(f(v11[r]! + f(v22[x]! - f(mu2 * mu2))) + C2);
    const ssim = 1 - f(f(numM * numS) / denS);
    let d = (Math.abs(ssim) + ssim) * 0.5;
    ssim1 += d;
    d *= d;
    ssim4 += d * d;

    const e = (1 + Math.abs(f(img2[i2]! - mu2))) / (1 + Math.abs(f(img1[i1]! - mu1))) - 1;
    const magnitude = Math.abs(e);
    const ringing = (magnitude + e) * 0.5;
    const blurring = (magnitude - e) * 0.5;
    ring1 += ringing;
    blur1 += blurring;
    const r2 = ringing * ringing;
    ring4 += r2 * r2;
    const b2 = blurring * blurring;
    blur4 += b2 * b2;
  }
  // Every term is >= 0 or NaN, and only a NaN term makes a sum NaN.
  if (!(ssim1 + ring1 + blur1 >= 0)) {
    addErrorsWithBranches(m1, v11, refAt, img1, img1At, m2, v22, v12, img2, img2At, width, sums, at);
    return;
  }
  sums[at] = sums[at]! + ssim1;
  sums[at + 1] = sums[at + 1]! + ssim4;
  sums[at + 2] = sums[at + 2]! + ring1;
  sums[at + 3] = sums[at + 3]! + ring4;
  sums[at + 4] = sums[at + 4]! + blur1;
  sums[at + 5] = sums[at + 5]! + blur4;
}

/** `addErrors` with a branch for each clamp and each choice: what it computes, for any values. */
export function addErrorsWithBranches(
  m1: Float32Array,
  v11: Float32Array,
  refAt: number,
  img1: Float32Array,
  img1At: number,
  m2: Float32Array,
  v22: Float32Array,
  v12: Float32Array,
  img2: Float32Array,
  img2At: number,
  width: number,
  sums: Float64Array,
  at: number,
): void {
  let ssim1 = 0;
  let ssim4 = 0;
  let ring1 = 0;
  let ring4 = 0;
  let blur1 = 0;
  let blur4 = 0;
  for (let x = 0, r = refAt, i1 = img1At, i2 = img2At; x < width; x++, r++, i1++, i2++) {
    const mu1 = m1[r]!;
    const mu2 = m2[x]!;
    const diff = f(mu1 - mu2);
    const numM = f(1 - f(diff * diff));
    const numS = f(2 * f(v12[x]! - f(mu1 * mu2)) + C2);
    const denS = f(f(v11[r]! + f(v22[x]! - f(mu2 * mu2))) + C2);
    let d = 1 - f(f(numM * numS) / denS);
    if (d < 0) d = 0;
    ssim1 += d;
    d *= d;
    ssim4 += d * d;

    const e = (1 + Math.abs(f(img2[i2]! - mu2))) / (1 + Math.abs(f(img1[i1]! - mu1))) - 1;
    if (e > 0) {
      ring1 += e;
      const e2 = e * e;
      ring4 += e2 * e2;
    } else {
      blur1 -= e;
      const e2 = e * e;
      blur4 += e2 * e2;
    }
  }
  sums[at] = sums[at]! + ssim1;
  sums[at + 1] = sums[at + 1]! + ssim4;
  sums[at + 2] = sums[at + 2]! + ring1;
  sums[at + 3] = sums[at + 3]! + ring4;
  sums[at + 4] = sums[at + 4]! + blur1;
  sums[at + 5] = sums[at + 5]! + blur4;
}

/** The norms of one scale from the sums of its errors over `pixels` pixels. */
export function norms(sums: Float64Array, pixels: number): ScaleNorms {
  const ssim = new Float64Array(6);
  const edge = new Float64Array(12);
  for (let c = 0; c < 3; c++) {
    const s = sums.subarray(c * 6, c * 6 + 6);
    ssim[c * 2] = s[0]! / pixels;
    ssim[c * 2 + 1] = Math.sqrt(Math.sqrt(s[1]! / pixels));
    edge[c * 4] = s[2]! / pixels;
    edge[c * 4 + 1] = Math.sqrt(Math.sqrt(s[3]! / pixels));
    edge[c * 4 + 2] = s[4]! / pixels;
    edge[c * 4 + 3] = Math.sqrt(Math.sqrt(s[5]! / pixels));
  }
  return { ssim, edge };
}
