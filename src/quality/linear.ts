/**
 * Images in linear sRGB, the space SSIMULACRA2 downscales in: 8-bit sRGB pixels made linear (with
 * alpha blended first, as `AlphaBlend` and `TransformTo(LinearSRGB)` in src/ssimulacra2.cc do), and
 * the 2x2 box downscale between scales (`Downsample` there).
 */

/**
 * Raw interleaved 8-bit sRGB pixels, 1 to 4 channels (grey, grey + alpha, RGB, RGBA), as sharp's
 * `.raw().toBuffer({ resolveWithObject: true })` gives them.
 */
export interface RawPixels {
  readonly data: Uint8Array;
  readonly info: { readonly width: number; readonly height: number; readonly channels: number };
}

/**
 * An image in linear sRGB: three Float32 planes (red, green, blue), or read one row at a time into
 * rows of the caller's (an image made from 8-bit pixels, whose linear values are a table lookup).
 * `RowReader` reads either kind.
 */
export interface LinearImage {
  readonly width: number;
  readonly height: number;
  readonly planes?: readonly [Float32Array, Float32Array, Float32Array];
  readRow(row: number, r: Float32Array, g: Float32Array, b: Float32Array): void;
}

/**
 * Rows of a `LinearImage` without copying planes: after `read(y)`, row y is in `r`, `g`, `b` from
 * `start` (the image's own planes, or this reader's rows filled by `readRow`).
 */
export class RowReader {
  readonly #image: LinearImage;
  r: Float32Array;
  g: Float32Array;
  b: Float32Array;
  start = 0;

  constructor(image: LinearImage) {
    this.#image = image;
    const planes = image.planes;
    this.r = planes?.[0] ?? new Float32Array(image.width);
    this.g = planes?.[1] ?? new Float32Array(image.width);
    this.b = planes?.[2] ?? new Float32Array(image.width);
  }

  read(y: number): void {
    if (this.#image.planes !== undefined) this.start = y * this.#image.width;
    else this.#image.readRow(y, this.r, this.g, this.b);
  }
}

/** True when `pixels` has an alpha channel (2 or 4 channels), whatever its values. */
export function hasAlpha(pixels: RawPixels): boolean {
  return pixels.info.channels === 2 || pixels.info.channels === 4;
}

const f = Math.fround;

/** `TF_SRGB::DisplayFromEncoded` (lib/jxl/transfer_functions-inl.h): a degree-4 rational fit, float32. */
const SRGB_P = [2.200248328e-4, 1.043637593e-2, 1.624820318e-1, 7.961564959e-1, 8.210152774e-1].map(f);
const SRGB_Q = [2.63184697e-1, 1.076976492, 4.98752835e-1, -5.512498495e-2, 6.521209011e-3].map(f);
const SRGB_THRESHOLD = f(0.04045);
const SRGB_LOW_SLOPE = f(1 / f(12.92));

/** Decoded sRGB value (0..1) to linear light, rounded as the reference's float32 code rounds it. */
function srgbToLinear(v: number): number {
  if (!(v > SRGB_THRESHOLD)) return f(v * SRGB_LOW_SLOPE);
  // EvalRationalPolynomial: Horner with multiply-adds from the highest coefficient, then a division.
  let p = SRGB_P[4]!;
  let q = SRGB_Q[4]!;
  for (let i = 3; i >= 0; i--) {
    p = f(p * v + SRGB_P[i]!);
    q = f(q * v + SRGB_Q[i]!);
  }
  return f(p / q);
}

/** 8-bit samples to 0..1 as the reference's loader scales them (`LoadFloatRow`: times 1/255 in float32). */
const UNIT = f(1 / 255);

const tables = new Map<number, Float32Array>();

/**
 * Linear light of every (alpha, value) pair over a background of grey level `background` (0..1),
 * at `alpha * 256 + value`. The reference blends the decoded sRGB values (`AlphaBlend`:
 * `a * v + (1 - a) * bg`), then makes the result linear (`TransformTo(LinearSRGB)`); with 8-bit
 * input that is a 64 K table, and alpha 255 gives back the plain transfer function.
 */
export function linearTable(background: number): Float32Array {
  let table = tables.get(background);
  if (table === undefined) {
    table = new Float32Array(256 * 256);
    const bg = f(background);
    for (let alpha = 0; alpha < 256; alpha++) {
      const a = f(UNIT * alpha);
      const behind = f(f(1 - a) * bg);
      for (let value = 0; value < 256; value++) {
        table[alpha * 256 + value] = srgbToLinear(f(f(a * f(UNIT * value)) + behind));
      }
    }
    tables.set(background, table);
  }
  return table;
}

/**
 * `pixels` (1 to 4 channels: grey, grey and alpha, RGB, RGBA) in linear sRGB; an alpha channel is
 * blended over a grey `background` (0..1), as the reference does before its colour transform.
 */
export function linearFromRaw(pixels: RawPixels, background: number): LinearImage {
  const { data, info } = pixels;
  const { width, height, channels } = info;
  const table = linearTable(background);
  // Offsets of green, blue and alpha in a pixel: grey is all three colours.
  const colour = channels >= 3 ? 3 : 1;
  const green = colour >> 1;
  const blue = colour - 1;
  const alphaAt = hasAlpha(pixels) ? colour : -1;
  return {
    width,
    height,
    readRow(row, r, g, b) {
      let i = row * width * channels;
      if (alphaAt < 0) {
        // Opaque: the last 256 entries (alpha 255) are the plain transfer function.
        const opaque = 255 * 256;
        for (let x = 0; x < width; x++, i += channels) {
          r[x] = table[opaque + data[i]!]!;
          g[x] = table[opaque + data[i + green]!]!;
          b[x] = table[opaque + data[i + blue]!]!;
        }
        return;
      }
      for (let x = 0; x < width; x++, i += channels) {
        const base = data[i + alphaAt]! * 256;
        r[x] = table[base + data[i]!]!;
        g[x] = table[base + data[i + green]!]!;
        b[x] = table[base + data[i + blue]!]!;
      }
    },
  };
}

/** An image held as three Float32 planes of linear sRGB. */
function planarImage(width: number, height: number, planes: readonly [Float32Array, Float32Array, Float32Array]) {
  const [pr, pg, pb] = planes;
  return {
    width,
    height,
    planes,
    readRow(row: number, r: Float32Array, g: Float32Array, b: Float32Array) {
      const start = row * width;
      r.set(pr.subarray(start, start + width));
      g.set(pg.subarray(start, start + width));
      b.set(pb.subarray(start, start + width));
    },
  } satisfies LinearImage;
}

/**
 * `image` at half its width and height (rounded up), each pixel the mean of a 2x2 block; past the
 * last row or column the block repeats the edge pixel, as `Downsample(in, 2, 2)` does.
 */
export function downsample(image: LinearImage): LinearImage {
  const { width, height } = image;
  const outWidth = (width + 1) >> 1;
  const outHeight = (height + 1) >> 1;
  const planes = [0, 1, 2].map(() => new Float32Array(outWidth * outHeight)) as [
    Float32Array,
    Float32Array,
    Float32Array,
  ];
  const upper = new RowReader(image);
  const lower = new RowReader(image);
  // Columns whose block has two columns; an odd width's last block repeats its column.
  const pairs = width >> 1;
  for (let oy = 0; oy < outHeight; oy++) {
    upper.read(2 * oy);
    lower.read(Math.min(2 * oy + 1, height - 1));
    const start = oy * outWidth;
    for (let c = 0; c < 3; c++) {
      const top = c === 0 ? upper.r : c === 1 ? upper.g : upper.b;
      const bottom = c === 0 ? lower.r : c === 1 ? lower.g : lower.b;
      const out = planes[c]!;
      let t = upper.start;
      let u = lower.start;
      let o = start;
      // A float32 sum in the reference's order, then times 1/4 (exact).
      for (let ox = 0; ox < pairs; ox++, t += 2, u += 2, o++) {
        out[o] = f(f(f(top[t]! + top[t + 1]!) + bottom[u]!) + bottom[u + 1]!) * 0.25;
      }
      if (pairs < outWidth) out[o] = f(f(f(top[t]! + top[t]!) + bottom[u]!) + bottom[u]!) * 0.25;
    }
  }
  return planarImage(outWidth, outHeight, planes);
}
