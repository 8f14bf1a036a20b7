/**
 * Linear sRGB to the XYB colour space of JPEG XL, then to SSIMULACRA2's "positive XYB": libjxl's
 * `LinearRGBToXYB` (lib/jxl/enc_xyb.cc, constants from lib/jxl/opsin_params.h) followed by
 * `MakePositiveXYB` (src/ssimulacra2.cc in cloudinary/ssimulacra2). Version 2.1 rescaled the three
 * components into 0..1 (X * 14 + 0.42, Y + 0.01, B - Y + 0.55) so that the SSIM formula makes sense.
 */

const f = Math.fround;

/** `kOpsinAbsorbanceMatrix`, row-major, as the float32 values the reference multiplies by. */
const M00 = f(0.3);
const M02 = f(0.078);
const M01 = f(f(1 - M02) - M00);
const M10 = f(0.23);
const M12 = f(0.078);
const M11 = f(f(1 - M12) - M10);
const M20 = f(0.24342268924547819);
const M21 = f(0.20476744424496821);
const M22 = f(f(1 - M20) - M21);
/** `kOpsinAbsorbanceBias` (the same for the three mixes), and minus its cube root, added after mixing. */
const BIAS = f(0.0037930732552754493);
export const NEG_BIAS_CBRT = -f(Math.cbrt(BIAS));

/** MakePositiveXYB's rescaling: X * 14 + 0.42, Y + 0.01, B - Y + 0.55, float32 constants. */
const MAKE_POSITIVE = [f(14), f(0.42), f(0.01), f(0.55)] as const;

const ONE_THIRD = f(1 / 3);
const FOUR_THIRDS = f(4 / 3);

/**
 * The first guess of `CubeRootAndAdd` by the float32 exponent of x (x >= 0, not 0): the exponent
 * multiplied by -1/3 (0x54800000 is cast(1) + cast(1) / 3, 0x002AAAAA a shifted 1/3), as a float.
 */
const FIRST_GUESS = (() => {
  const guesses = new Float32Array(256);
  const bits = new Int32Array(guesses.buffer);
  for (let exponent = 0; exponent < 256; exponent++) bits[exponent] = 0x54800000 - exponent * 0x002aaaaa;
  return guesses;
})();

/**
 * Scratch for one row: the three mixes of each pixel (L, M, S planes one after the other), seen as
 * floats and as their bits, then their cube roots. Grown to the widest row seen.
 */
let mixes = new Float32Array(0);
let mixBits = new Int32Array(0);

/**
 * Converts `width` linear sRGB pixels (planes `r`, `g`, `b` from `start`, nominally 0..1) into
 * positive XYB planes `x`, `y`, `bOut` starting at `outStart`, rounding each step as the reference's
 * float32 code with fused multiply-adds does. The reference's intensity target is 255 nits, which
 * makes its premultiplier (target / 255) exactly 1.
 *
 * Three passes over the row: the mixes, their cube roots (the bulk of the work, six at a time), and
 * positive XYB. Not reentrant: the passes share one module-wide scratch row.
 */
export function linearToPositiveXyb(
  r: Float32Array,
  g: Float32Array,
  b: Float32Array,
  start: number,
  width: number,
  x: Float32Array,
  y: Float32Array,
  bOut: Float32Array,
  outStart: number,
): void {
  if (mixes.length < 3 * width) {
    mixes = new Float32Array(3 * width);
    mixBits = new Int32Array(mixes.buffer);
  }
  const mix = mixes;
  const bits = mixBits;
  const w2 = 2 * width;
  for (let i = 0, j = start; i < width; i++, j++) {
    const red = r[j]!;
    const green = g[j]!;
    const blue = b[j]!;
    // OpsinAbsorbance: nested multiply-adds. Mixes are non-negative for in-gamut input; the
    // reference clamps them at zero for wide gamut.
    mix[i] = Math.max(0, f(M00 * red + f(M01 * green + f(M02 * blue + BIAS))));
    mix[width + i] = Math.max(0, f(M10 * red + f(M11 * green + f(M12 * blue + BIAS))));
    mix[w2 + i] = Math.max(0, f(M20 * red + f(M21 * green + f(M22 * blue + BIAS))));
  }
  // CubeRootAndAdd(x, add) (lib/jxl/fast_math-inl.h): cbrt(x) + add for x >= 0, from an exponent
  // trick and Newton steps in float32 (within 6 ulp of the true root), rounded as there. Six at a
  // time, step by step, so that their long chains of roundings overlap (a JIT keeps the order
  // written: three at a time is a fifth slower, one at a time or one step per pass slower still).
  const count = 3 * width;
  let i = 0;
  for (; i + 6 <= count; i += 6) {
    const v0 = mix[i]!;
    const v1 = mix[i + 1]!;
    const v2 = mix[i + 2]!;
    const v3 = mix[i + 3]!;
    const v4 = mix[i + 4]!;
    const v5 = mix[i + 5]!;
    const m0 = bits[i]!;
    const m1 = bits[i + 1]!;
    const m2 = bits[i + 2]!;
    const m3 = bits[i + 3]!;
    const m4 = bits[i + 4]!;
    const m5 = bits[i + 5]!;
    let r0 = m0 === 0 ? 0 : FIRST_GUESS[m0 >> 23]!;
    let r1 = m1 === 0 ? 0 : FIRST_GUESS[m1 >> 23]!;
    let r2 = m2 === 0 ? 0 : FIRST_GUESS[m2 >> 23]!;
    let r3 = m3 === 0 ? 0 : FIRST_GUESS[m3 >> 23]!;
    let r4 = m4 === 0 ? 0 : FIRST_GUESS[m4 >> 23]!;
    let r5 = m5 === 0 ? 0 : FIRST_GUESS[m5 >> 23]!;
    const t0 = f(ONE_THIRD * v0);
    const t1 = f(ONE_THIRD * v1);
    const t2 = f(ONE_THIRD * v2);
    const t3 = f(ONE_THIRD * v3);
    const t4 = f(ONE_THIRD * v4);
    const t5 = f(ONE_THIRD * v5);
    let s0 = f(r0 * r0);
    let s1 = f(r1 * r1);
    let s2 = f(r2 * r2);
    let s3 = f(r3 * r3);
    let s4 = f(r4 * r4);
    let s5 = f(r5 * r5);
    r0 = f(f(FOUR_THIRDS * r0) - t0 * f(s0 * s0));
    r1 = f(f(FOUR_THIRDS * r1) - t1 * f(s1 * s1));
    r2 = f(f(FOUR_THIRDS * r2) - t2 * f(s2 * s2));
    r3 = f(f(FOUR_THIRDS * r3) - t3 * f(s3 * s3));
    r4 = f(f(FOUR_THIRDS * r4) - t4 * f(s4 * s4));
    r5 = f(f(FOUR_THIRDS * r5) - t5 * f(s5 * s5));
    s0 = f(r0 * r0);
    s1 = f(r1 * r1);
    s2 = f(r2 * r2);
    s3 = f(r3 * r3);
    s4 = f(r4 * r4);
    s5 = f(r5 * r5);
    r0 = f(f(FOUR_THIRDS * r0) - t0 * f(s0 * s0));
    r1 = f(f(FOUR_THIRDS * r1) - t1 * f(s1 * s1));
    r2 = f(f(FOUR_THIRDS * r2) - t2 * f(s2 * s2));
    r3 = f(f(FOUR_THIRDS * r3) - t3 * f(s3 * s3));
    r4 = f(f(FOUR_THIRDS * r4) - t4 * f(s4 * s4));
    r5 = f(f(FOUR_THIRDS * r5) - t5 * f(s5 * s5));
    s0 = f(r0 * r0);
    s1 = f(r1 * r1);
    s2 = f(r2 * r2);
    s3 = f(r3 * r3);
    s4 = f(r4 * r4);
    s5 = f(r5 * r5);
    r0 = f(f(FOUR_THIRDS * r0) - t0 * f(s0 * s0));
    r1 = f(f(FOUR_THIRDS * r1) - t1 * f(s1 * s1));
    r2 = f(f(FOUR_THIRDS * r2) - t2 * f(s2 * s2));
    r3 = f(f(FOUR_THIRDS * r3) - t3 * f(s3 * s3));
    r4 = f(f(FOUR_THIRDS * r4) - t4 * f(s4 * s4));
    r5 = f(f(FOUR_THIRDS * r5) - t5 * f(s5 * s5));
    s0 = f(r0 * r0);
    s1 = f(r1 * r1);
    s2 = f(r2 * r2);
    s3 = f(r3 * r3);
    s4 = f(r4 * r4);
    s5 = f(r5 * r5);
    r0 = f(ONE_THIRD * f(r0 - v0 * f(s0 * s0)) + r0);
    r1 = f(ONE_THIRD * f(r1 - v1 * f(s1 * s1)) + r1);
    r2 = f(ONE_THIRD * f(r2 - v2 * f(s2 * s2)) + r2);
    r3 = f(ONE_THIRD * f(r3 - v3 * f(s3 * s3)) + r3);
    r4 = f(ONE_THIRD * f(r4 - v4 * f(s4 * s4)) + r4);
    r5 = f(ONE_THIRD * f(r5 - v5 * f(s5 * s5)) + r5);
    s0 = f(r0 * r0);
    s1 = f(r1 * r1);
    s2 = f(r2 * r2);
    s3 = f(r3 * r3);
    s4 = f(r4 * r4);
    s5 = f(r5 * r5);
    mix[i] = s0 * v0 + NEG_BIAS_CBRT;
    mix[i + 1] = s1 * v1 + NEG_BIAS_CBRT;
    mix[i + 2] = s2 * v2 + NEG_BIAS_CBRT;
    mix[i + 3] = s3 * v3 + NEG_BIAS_CBRT;
    mix[i + 4] = s4 * v4 + NEG_BIAS_CBRT;
    mix[i + 5] = s5 * v5 + NEG_BIAS_CBRT;
  }
  for (; i < count; i++) {
    const v = mix[i]!;
    const m = bits[i]!;
    let r = m === 0 ? 0 : FIRST_GUESS[m >> 23]!;
    const t = f(ONE_THIRD * v);
    for (let step = 0; step < 3; step++) {
      const s = f(r * r);
      r = f(f(FOUR_THIRDS * r) - t * f(s * s));
    }
    let s = f(r * r);
    r = f(ONE_THIRD * f(r - v * f(s * s)) + r);
    s = f(r * r);
    mix[i] = s * v + NEG_BIAS_CBRT;
  }
  const [scaleX, offsetX, offsetY, offsetB] = MAKE_POSITIVE;
  for (let i = 0, o = outStart; i < width; i++, o++) {
    const l = mix[i]!;
    const m = mix[width + i]!;
    const s = mix[w2 + i]!;
    const xx = f(0.5 * f(l - m));
    const yy = f(0.5 * f(l + m));
    // MakePositiveXYB: B becomes B - Y before Y is offset.
    bOut[o] = f(s - yy) + offsetB;
    x[o] = f(xx * scaleX) + offsetX;
    y[o] = yy + offsetY;
  }
}
