/**
 * The constants of SSIMULACRA2's recursive Gaussian blur: `CreateRecursiveGaussian` in
 * lib/jxl/gauss_blur.cc (cloudinary/ssimulacra2), after "Recursive Implementation of the Gaussian
 * Filter Using Truncated Cosine Functions" (Charalampidis 2016). blur.ts runs the filter.
 */

const f = Math.fround;

/** The filter's constants: `CreateRecursiveGaussian` in gauss_blur.cc, float32 as stored there. */
export interface RecursiveGaussian {
  /** N: how far (in samples) each recursion looks ahead and behind. */
  readonly radius: number;
  /** `n2` of k = 1, 3, 5 (the vertical pass's multipliers). */
  readonly n2: readonly [number, number, number];
  /** `d1` of k = 1, 3, 5. */
  readonly d1: readonly [number, number, number];
  /**
   * The horizontal pass's four-lane unrolling, per k then lane: multipliers of the inputs, of the
   * previous output and of the one before (`mul_in`, `mul_prev`, `mul_prev2`).
   */
  readonly mulIn: Float64Array;
  readonly mulPrev: Float64Array;
  readonly mulPrev2: Float64Array;
}

/** `CreateRecursiveGaussian(sigma)`: equations (33) to (57) of the paper, as the reference solves them. */
export function createRecursiveGaussian(sigma: number): RecursiveGaussian {
  const radius = Math.round(3.2795 * sigma + 0.2546); // (57), "N"
  const piDiv2r = Math.PI / (2 * radius);
  const omega = [piDiv2r, 3 * piDiv2r, 5 * piDiv2r] as const;
  // (37)
  const p1 = 1 / Math.tan(0.5 * omega[0]);
  const p3 = -1 / Math.tan(0.5 * omega[1]);
  const p5 = 1 / Math.tan(0.5 * omega[2]);
  // (44)
  const r1 = (p1 * p1) / Math.sin(omega[0]);
  const r3 = (-p3 * p3) / Math.sin(omega[1]);
  const r5 = (p5 * p5) / Math.sin(omega[2]);
  // (50)
  const rho = omega.map((w) => Math.exp(-0.5 * sigma * sigma * w * w) / radius) as [number, number, number];
  // (52)
  const d13 = p1 * r3 - r1 * p3;
  const d35 = p3 * r5 - r3 * p5;
  const d51 = p5 * r1 - r5 * p1;
  const zeta15 = d35 / d13;
  const zeta35 = d51 / d13;
  // (53), (55), (56): beta = A^-1 gamma
  const inv = invert3x3([p1, p3, p5, r1, r3, r5, zeta15, zeta35, 1]);
  const gamma = [1, radius * radius - sigma * sigma, zeta15 * rho[0] + zeta35 * rho[1] + rho[2]] as const;
  const mulIn = new Float64Array(12);
  const mulPrev = new Float64Array(12);
  const mulPrev2 = new Float64Array(12);
  const n2s: number[] = [];
  const d1s: number[] = [];
  for (let i = 0; i < 3; i++) {
    const beta = inv[3 * i]! * gamma[0] + inv[3 * i + 1]! * gamma[1] + inv[3 * i + 2]! * gamma[2];
    const n2 = -beta * Math.cos(omega[i]! * (radius + 1)); // (33)
    const d1 = -2 * Math.cos(omega[i]!); // (33)
    const d2 = d1 * d1;
    n2s.push(f(n2));
    d1s.push(f(d1));
    // (35) expanded for four consecutive outputs, as in the reference.
    mulPrev.set([-d1, d2 - 1, -d2 * d1 + 2 * d1, d2 * d2 - 3 * d2 + 1].map(f), 4 * i);
    mulPrev2.set([-1, d1, -d2 + 1, d2 * d1 - 2 * d1].map(f), 4 * i);
    mulIn.set([n2, -d1 * n2, d2 * n2 - n2, -d2 * d1 * n2 + 2 * d1 * n2].map(f), 4 * i);
  }
  return {
    radius,
    n2: n2s as [number, number, number],
    d1: d1s as [number, number, number],
    mulIn,
    mulPrev,
    mulPrev2,
  };
}

type Matrix3 = [number, number, number, number, number, number, number, number, number];

/** The inverse of a row-major 3x3 matrix (`Inv3x3Matrix` in lib/jxl/linalg.h), by its adjugate. */
function invert3x3(m: Matrix3): Matrix3 {
  const [a, b, c, d, e, g, h, i, j] = m;
  const c0 = e * j - g * i;
  const c1 = g * h - d * j;
  const c2 = d * i - e * h;
  const det = a * c0 + b * c1 + c * c2;
  return [
    c0 / det,
    (c * i - b * j) / det,
    (b * g - c * e) / det,
    c1 / det,
    (a * j - c * h) / det,
    (c * d - a * g) / det,
    c2 / det,
    (b * h - a * i) / det,
    (a * e - b * d) / det,
  ];
}
