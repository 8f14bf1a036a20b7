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
const NEG_BIAS_CBRT = -f(Math.cbrt(BIAS));

/** MakePositiveXYB's rescaling: X * 14 + 0.42, Y + 0.01, B - Y + 0.55, float32 constants. */
const MAKE_POSITIVE = [f(14), f(0.42), f(0.01), f(0.55)] as const;

/** Three float32 values seen as their bits, for the cube roots' first guesses. */
const bits = new Float32Array(3);
const bitsInt = new Int32Array(bits.buffer);

const ONE_THIRD = f(1 / 3);
const FOUR_THIRDS = f(4 / 3);

/**
 * `CubeRootAndAdd(x, add)` (lib/jxl/fast_math-inl.h) of the three values in `bits`, in place:
 * cbrt(x) + add for x >= 0, from an exponent trick and Newton steps in float32 (within 6 ulp of the
 * true root), rounded as there. Three at a time so that their long chains of roundings overlap.
 */
function cubeRootsAndAdd(add: number): void {
  const x0 = bits[0]!;
  const x1 = bits[1]!;
  const x2 = bits[2]!;
  // Multiply the exponent by -1/3: 0x54800000 is cast(1) + cast(1) / 3, 0x002AAAAA a shifted 1/3.
  for (let i = 0; i < 3; i++) {
    const m = bitsInt[i]!;
    bitsInt[i] = m === 0 ? 0 : 0x54800000 - (m >> 23) * 0x002aaaaa;
  }
  let r0 = bits[0]!;
  let r1 = bits[1]!;
  let r2 = bits[2]!;
  const t0 = f(ONE_THIRD * x0);
  const t1 = f(ONE_THIRD * x1);
  const t2 = f(ONE_THIRD * x2);
  for (let i = 0; i < 3; i++) {
    const s0 = f(r0 * r0);
    const s1 = f(r1 * r1);
    const s2 = f(r2 * r2);
    r0 = f(-(t0 * f(s0 * s0)) + f(FOUR_THIRDS * r0));
    r1 = f(-(t1 * f(s1 * s1)) + f(FOUR_THIRDS * r1));
    r2 = f(-(t2 * f(s2 * s2)) + f(FOUR_THIRDS * r2));
  }
  let s0 = f(r0 * r0);
  let s1 = f(r1 * r1);
  let s2 = f(r2 * r2);
  r0 = f(ONE_THIRD * f(-(x0 * f(s0 * s0)) + r0) + r0);
  r1 = f(ONE_THIRD * f(-(x1 * f(s1 * s1)) + r1) + r1);
  r2 = f(ONE_THIRD * f(-(x2 * f(s2 * s2)) + r2) + r2);
  s0 = f(r0 * r0);
  s1 = f(r1 * r1);
  s2 = f(r2 * r2);
  bits[0] = s0 * x0 + add;
  bits[1] = s1 * x1 + add;
  bits[2] = s2 * x2 + add;
}

/**
 * Converts `width` linear sRGB pixels (planes `r`, `g`, `b`, nominally 0..1) into positive XYB planes
 * `x`, `y`, `bOut` starting at `outStart`, rounding each step as the reference's float32 code with
 * fused multiply-adds does. The reference's intensity target is 255 nits, which makes its
 * premultiplier (target / 255) exactly 1.
 */
export function linearToPositiveXyb(
  r: Float32Array,
  g: Float32Array,
  b: Float32Array,
  width: number,
  x: Float32Array,
  y: Float32Array,
  bOut: Float32Array,
  outStart: number,
): void {
  const [scaleX, offsetX, offsetY, offsetB] = MAKE_POSITIVE;
  for (let i = 0; i < width; i++) {
    const red = r[i]!;
    const green = g[i]!;
    const blue = b[i]!;
    // OpsinAbsorbance: nested multiply-adds. Mixes are non-negative for in-gamut input; the
    // reference clamps them at zero for wide gamut.
    bits[0] = Math.max(0, f(M00 * red + f(M01 * green + f(M02 * blue + BIAS))));
    bits[1] = Math.max(0, f(M10 * red + f(M11 * green + f(M12 * blue + BIAS))));
    bits[2] = Math.max(0, f(M20 * red + f(M21 * green + f(M22 * blue + BIAS))));
    cubeRootsAndAdd(NEG_BIAS_CBRT);
    const l = bits[0]!;
    const m = bits[1]!;
    const s = bits[2]!;
    const xx = f(0.5 * f(l - m));
    const yy = f(0.5 * f(l + m));
    // MakePositiveXYB: B becomes B - Y before Y is offset.
    bOut[outStart + i] = f(f(s - yy) + offsetB);
    x[outStart + i] = f(f(xx * scaleX) + offsetX);
    y[outStart + i] = f(yy + offsetY);
  }
}
