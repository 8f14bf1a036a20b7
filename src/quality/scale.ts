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
 */
import { HorizontalBlur, VerticalBlur } from './blur.js';
import type { LinearImage } from './linear.js';
import type { RecursiveGaussian } from './recursive-gaussian.js';
import type { ScaleNorms } from './score.js';
import { linearToPositiveXyb } from './xyb.js';

const f = Math.fround;

/** `kC2` of the SSIM formula, a float32 in the reference. */
const C2 = f(0.0009);

/** The five blurred quantities of one component: mu1, mu2, sigma11, sigma22, sigma12 (before subtracting means). */
const BLURRED = 5;

/** The norms of the error maps of `reference` against `distorted` (same size) at this scale. */
export function scaleNorms(reference: LinearImage, distorted: LinearImage, rg: RecursiveGaussian): ScaleNorms {
  const { width, height } = reference;
  const N = rg.radius;
  const ringRows = 2 * N + 1;
  const ring = (): Float32Array => new Float32Array(ringRows * width);
  const row = (): Float32Array => new Float32Array(width);

  // Linear RGB of the current input row, for each image.
  const lin1 = [row(), row(), row()] as const;
  const lin2 = [row(), row(), row()] as const;
  // Positive XYB rows of each image, component by component, kept until their errors are summed.
  const xyb1 = [ring(), ring(), ring()] as const;
  const xyb2 = [ring(), ring(), ring()] as const;
  // Horizontally blurred rows of the five quantities of each component, and their vertical passes.
  const blurred = [0, 1, 2].map(() => Array.from({ length: BLURRED }, ring));
  const vertical = [0, 1, 2].map(() => Array.from({ length: BLURRED }, () => new VerticalBlur(rg, width)));
  const horizontal = new HorizontalBlur(rg, width);
  const out = Array.from({ length: BLURRED }, row);

  const sums = new Float64Array(3 * 6);

  // Step n reads rows n + N - 1 (new) and n - N - 1 of the horizontally blurred planes, and finishes
  // row n; the reference's vertical pass starts at n = -N + 1 as here.
  for (let n = -N + 1; n < height; n++) {
    const bottom = n + N - 1;
    if (bottom < height) {
      const at = (bottom % ringRows) * width;
      reference.readRow(bottom, lin1[0], lin1[1], lin1[2]);
      distorted.readRow(bottom, lin2[0], lin2[1], lin2[2]);
      linearToPositiveXyb(lin1[0], lin1[1], lin1[2], width, xyb1[0], xyb1[1], xyb1[2], at);
      linearToPositiveXyb(lin2[0], lin2[1], lin2[2], width, xyb2[0], xyb2[1], xyb2[2], at);
      for (let c = 0; c < 3; c++) {
        const a = xyb1[c]!;
        const b = xyb2[c]!;
        const [mu1, mu2, s11, s22, s12] = blurred[c]!;
        horizontal.tapSums(a, at);
        horizontal.blur(mu1!, at);
        horizontal.tapSums(b, at);
        horizontal.blur(mu2!, at);
        horizontal.tapSumsOfProducts(a, a, at);
        horizontal.blur(s11!, at);
        horizontal.tapSumsOfProducts(b, b, at);
        horizontal.blur(s22!, at);
        horizontal.tapSumsOfProducts(a, b, at);
        horizontal.blur(s12!, at);
      }
    }
    const top = n - N - 1;
    const topAt = top >= 0 ? (top % ringRows) * width : undefined;
    const bottomAt = bottom < height ? (bottom % ringRows) * width : undefined;
    for (let c = 0; c < 3; c++) {
      for (let q = 0; q < BLURRED; q++) {
        vertical[c]![q]!.step(blurred[c]![q]!, topAt, bottomAt, n >= 0 ? out[q] : undefined);
      }
      if (n >= 0) addErrors(out, xyb1[c]!, xyb2[c]!, (n % ringRows) * width, width, sums, c * 6);
    }
  }

  const pixels = width * height;
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

/**
 * Adds one row's errors of one component to `sums` from `at`: SSIM' error and its 4th power, then
 * ringing (distorted has edges where the reference is smooth) and blurring (the reverse), each with
 * its 4th power (`SSIMMap`, `EdgeDiffMap`).
 */
function addErrors(
  blurred: readonly Float32Array[],
  img1: Float32Array,
  img2: Float32Array,
  rowAt: number,
  width: number,
  sums: Float64Array,
  at: number,
): void {
  const [m1, m2, v11, v22, v12] = blurred as [Float32Array, Float32Array, Float32Array, Float32Array, Float32Array];
  let ssim1 = 0;
  let ssim4 = 0;
  let ring1 = 0;
  let ring4 = 0;
  let blur1 = 0;
  let blur4 = 0;
  for (let x = 0; x < width; x++) {
    const mu1 = m1[x]!;
    const mu2 = m2[x]!;
    // SSIM without the luminance denominator: the reference's "corrected" formula (see SSIMMap), in
    // float32 as there (the variances are small differences of large numbers: their rounding counts).
    const diff = f(mu1 - mu2);
    const numM = f(1 - f(diff * diff));
    const numS = f(2 * f(v12[x]! - f(mu1 * mu2)) + C2);
    const denS = f(f(f(v11[x]! - f(mu1 * mu1)) + f(v22[x]! - f(mu2 * mu2))) + C2);
    let d = 1 - f(f(numM * numS) / denS);
    if (d < 0) d = 0;
    ssim1 += d;
    d *= d;
    ssim4 += d * d;

    const e = (1 + Math.abs(f(img2[rowAt + x]! - mu2))) / (1 + Math.abs(f(img1[rowAt + x]! - mu1))) - 1;
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
