/**
 * SSIMULACRA2, version 2.1, as in cloudinary/ssimulacra2 (src/ssimulacra2.cc and src/ssimulacra2_main.cc):
 * a perceptual score of how close `distorted` looks to `reference`. 100 means identical pixels; about
 * 90 is visually lossless, 70 high quality, 50 medium, 30 low; strong distortions go below 0.
 *
 * Pure: raw 8-bit sRGB pixels in, a number out (src/pixels/read.ts decodes files with sharp). Every
 * float32 step is rounded as the reference's FMA builds round it (see blur.ts for why that matters),
 * so on the same 8-bit pixels the score is the reference binary's to its printed 8 decimals. Files of
 * more than 8 bits per sample are scored after rounding to 8 bits, which the reference does not do.
 *
 * `prepareSsimulacra2(reference)` does the reference's side once, for many distorted images; its
 * scores are `ssimulacra2`'s to the bit. Where it can, it runs the same steps in WebAssembly with
 * SIMD (prepared-wasm.ts), about 3.5 times as fast, with the same scores.
 */
import { InvalidArgumentError } from '../errors.js';
import { downsample, hasAlpha, type LinearImage, linearFromRaw, type RawPixels } from './linear.js';
import { prepareWasmSide, type WasmMemories, type WasmModule, wasmEngine } from './prepared-wasm.js';
import { createRecursiveGaussian } from './recursive-gaussian.js';
import {
  PREPARED_FLOATS_PER_PIXEL,
  type PreparedScale,
  preparedScaleNorms,
  prepareScale,
  scaleNorms,
} from './scale.js';
import { type ScaleNorms, scoreFromNorms } from './score.js';

export type { RawPixels } from './linear.js';

/** Scales 1:1 to 1:32 (`kNumScales`). */
const SCALES = 6;
/** The smallest width and height the reference accepts, and below which it stops adding scales. */
const MIN_SIZE = 8;

/** True when SSIMULACRA2 can score a picture of this size: at least 8x8 pixels (its smallest scale's blocks). */
export const isScorable = (size: { width: number; height: number }) =>
  size.width >= MIN_SIZE && size.height >= MIN_SIZE;

/** The smallest picture SSIMULACRA2 scores, in words. */
export const SCORABLE_SIZE = `${MIN_SIZE}x${MIN_SIZE}`;
/** The blur of the means and variances (`CreateRecursiveGaussian(1.5)`). */
const BLUR = createRecursiveGaussian(1.5);

/**
 * The SSIMULACRA 2.1 score of `distorted` against `reference`: raw interleaved 8-bit sRGB pixels of
 * the same size, at least 8x8, with 1 to 4 channels (grey, grey + alpha, RGB, RGBA), as sharp's
 * `.raw().toBuffer({ resolveWithObject: true })` gives them.
 *
 * Alpha is handled as the reference's command does: when `reference` has an alpha channel both images
 * are blended over a dark (0.1) and a light (0.9) grey and the worse score is kept; otherwise a
 * distorted image's alpha is blended over middle grey (0.5). The score is not symmetric: swapping the
 * images changes it.
 *
 * @throws InvalidArgumentError when the sizes differ, an image is smaller than 8x8, or its pixels
 *   do not match its `info`.
 */
export function ssimulacra2(reference: RawPixels, distorted: RawPixels): number {
  checkPixels(reference, 'reference');
  checkPixels(distorted, 'distorted');
  checkSizes(reference, distorted);
  if (!hasAlpha(reference)) return scoreOver(reference, distorted, 0.5);
  const dark = scoreOver(reference, distorted, 0.1);
  // Fully opaque alpha blends to the same pixels over any background: the second score would be equal.
  if (opaque(reference) && opaque(distorted)) return dark;
  return Math.min(dark, scoreOver(reference, distorted, 0.9));
}

/**
 * A reference image made ready to score many distorted images against (`prepareSsimulacra2`).
 * `score(distorted)` is `ssimulacra2(reference, distorted)`, to the bit, in about 60% of its time
 * in TypeScript and under 20% in WebAssembly.
 */
export interface PreparedSsimulacra2 {
  readonly width: number;
  readonly height: number;
  /**
   * Bytes held for the reference: 36 a pixel at full scale and about 48 a pixel over all scales
   * (9 float32 planes per scale: positive XYB, blurred mean and variance of X, Y and B; each scale a
   * quarter of the one before), twice that for a reference with transparent pixels. In WebAssembly,
   * the memory that holds them with room for a distorted image's pixels and planes: about 67 a pixel.
   */
  readonly bytes: number;
  /**
   * The SSIMULACRA 2.1 score of `distorted` against the prepared reference: exactly what
   * `ssimulacra2(reference, distorted)` returns.
   *
   * @throws InvalidArgumentError when `distorted` is not the reference's size or its pixels do not
   *   match its `info`.
   */
  score(distorted: RawPixels): number;
}

/**
 * Does the reference's side of `ssimulacra2(reference, distorted)` once, for searches that score
 * many distorted images against one reference (an encoder's qualities, say): linear light, positive
 * XYB at every scale, and the blurred mean and variance of each component, kept as float32 planes
 * (`bytes`: about 48 bytes a pixel, 96 when the reference has transparent pixels, since both
 * backgrounds are kept: 720 MB for a 15 MP opaque image; in WebAssembly about 67 and 134, 1 GB).
 * `reference` is read now and not kept.
 *
 * `ssimulacra2` itself streams rows through both sides and holds only a few MB; the prepared score
 * does the distorted image's half of the work (9 of the 15 blurs of each scale and one of the two
 * colour transforms) on the same values in the same order, so its scores are equal to the bit.
 * It runs in WebAssembly where `wasmEngine()` can (prepared-wasm.ts), else in TypeScript.
 *
 * @throws InvalidArgumentError when `reference` is smaller than 8x8 or its pixels do not match its `info`.
 */
export function prepareSsimulacra2(reference: RawPixels): PreparedSsimulacra2 {
  return prepareReleasable(reference);
}

/** `prepareSsimulacra2`, its WebAssembly memory from `memories` and given back on release (a score thread's). */
export function prepareReleasable(reference: RawPixels, memories?: WasmMemories): ReleasableSsimulacra2 {
  return prepareWith(reference, wasmEngine() ? 'wasm' : 'typescript', memories);
}

/** A prepared reference that can give its memory back when done with (the score pool's threads do). */
export interface ReleasableSsimulacra2 extends PreparedSsimulacra2 {
  /** Gives its WebAssembly memory to the `WasmMemories` it was prepared with, for the next; it scores no more. */
  release(): void;
}

/**
 * `prepareSsimulacra2` on a chosen engine: the TypeScript, or the WebAssembly of prepared-wasm.ts
 * (which throws where `wasmEngine()` is undefined, and prepares an image too large for its memory in
 * TypeScript), in a memory of `memories` if given. Both give the same scores; the tests compare them,
 * the bench times them.
 */
export function prepareWith(
  reference: RawPixels,
  engine: 'typescript' | 'wasm',
  memories?: WasmMemories,
): ReleasableSsimulacra2 {
  checkPixels(reference, 'reference');
  checkMinimum(reference);
  const { width, height } = reference.info;
  const info = { width, height, channels: reference.info.channels };
  const alpha = hasAlpha(reference);
  const referenceOpaque = opaque(reference);
  const prepare = engine === 'wasm' ? wasmSide(wasmEngine(), memories) : typescriptSide;
  // Over middle grey without alpha, else over the dark grey and then the light one. Opaque pixels
  // are linear values independent of the background (alpha 1 blends in nothing): one set of planes
  // serves every background unless the reference has transparent pixels.
  const first = prepare(reference, alpha ? 0.1 : 0.5);
  const light = referenceOpaque ? first : prepare(reference, 0.9);
  const kept = referenceOpaque ? [first] : [first, light];
  const score = (side: Side, distorted: RawPixels, background: number) =>
    scoreFromNorms(side.norms(distorted, background));
  return {
    width,
    height,
    bytes: kept.reduce((sum, side) => sum + side.bytes, 0),
    release: () => {
      for (const side of kept) side.release?.();
    },
    score(distorted: RawPixels): number {
      checkPixels(distorted, 'distorted');
      checkSizes({ info }, distorted);
      if (!alpha) return score(first, distorted, 0.5);
      const dark = score(first, distorted, 0.1);
      if (referenceOpaque && opaque(distorted)) return dark;
      return Math.min(dark, score(light, distorted, 0.9));
    },
  };
}

/**
 * A reference prepared over one background: the norms of every scale of a distorted image, blended
 * over `background`, against it (an opaque reference's one side serves both backgrounds).
 */
interface Side {
  readonly bytes: number;
  norms(distorted: RawPixels, background: number): ScaleNorms[];
  /** Gives a WebAssembly memory back for reuse (the TypeScript's planes are the garbage collector's). */
  release?(): void;
}

/** The reference's side in TypeScript: whole float32 planes (`PreparedScale`) of every scale. */
function typescriptSide(reference: RawPixels, background: number): Side {
  const scales = prepareOver(reference, background);
  return {
    bytes: scales.reduce((sum, scale) => sum + scale.width * scale.height * PREPARED_FLOATS_PER_PIXEL * 4, 0),
    norms: (distorted, over) => normsOver(scales, distorted, over),
  };
}

/** The reference's side in WebAssembly. */
const wasmSide =
  (module: WasmModule | undefined, memories: WasmMemories | undefined) =>
  (reference: RawPixels, background: number): Side => {
    if (!module) throw new Error('the WebAssembly SSIMULACRA2 cannot run here (relaxed SIMD with FMA)');
    let side: Side | undefined;
    try {
      side = prepareWasmSide(module, reference, background, scaleSizes(reference.info), BLUR, memories);
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
    }
    // Too large for one memory, or no memory to be had: the TypeScript's planes.
    return side ?? typescriptSide(reference, background);
  };

/** The width and height of each scale the metric compares an image of this size at. */
function scaleSizes({ width, height }: RawPixels['info']): Array<{ width: number; height: number }> {
  const sizes = [];
  for (let scale = 0, w = width, h = height; scale < SCALES; scale++) {
    // As the reference: the size tested is the previous scale's, so the last scale may be under 8 pixels.
    if (w < MIN_SIZE || h < MIN_SIZE) break;
    if (scale > 0) [w, h] = [(w + 1) >> 1, (h + 1) >> 1];
    sizes.push({ width: w, height: h });
  }
  return sizes;
}

/** Throws unless the two images have the same size, of at least 8x8. */
function checkSizes(reference: Pick<RawPixels, 'info'>, distorted: RawPixels): void {
  const a = reference.info;
  const b = distorted.info;
  if (a.width !== b.width || a.height !== b.height) {
    throw new InvalidArgumentError(
      `SSIMULACRA2 compares images of the same size, but the reference is ${a.width}x${a.height} ` +
        `and the distorted image ${b.width}x${b.height}`,
    );
  }
  checkMinimum(reference);
}

function checkMinimum(image: Pick<RawPixels, 'info'>): void {
  const { width, height } = image.info;
  if (width < MIN_SIZE || height < MIN_SIZE) {
    throw new InvalidArgumentError(
      `SSIMULACRA2 needs images of at least ${MIN_SIZE}x${MIN_SIZE} pixels, but these are ${width}x${height}`,
    );
  }
}

/** The reference's side of `scoreOver` at every scale. */
function prepareOver(reference: RawPixels, background: number): PreparedScale[] {
  let a: LinearImage = linearFromRaw(reference, background);
  const scales: PreparedScale[] = [];
  const count = scaleSizes(reference.info).length;
  for (let scale = 0; scale < count; scale++) {
    if (scale > 0) a = downsample(a);
    scales.push(prepareScale(a, BLUR));
  }
  return scales;
}

/** The norms of `distorted` at every scale against the reference's prepared scales. */
function normsOver(scales: readonly PreparedScale[], distorted: RawPixels, background: number): ScaleNorms[] {
  let b: LinearImage = linearFromRaw(distorted, background);
  const norms: ScaleNorms[] = [];
  for (let scale = 0; scale < scales.length; scale++) {
    if (scale > 0) b = downsample(b);
    norms.push(preparedScaleNorms(scales[scale]!, b, BLUR));
  }
  return norms;
}

/** The score with any alpha blended over a grey of level `background` (`ComputeSSIMULACRA2(orig, dist, bg)`). */
function scoreOver(reference: RawPixels, distorted: RawPixels, background: number): number {
  let a: LinearImage = linearFromRaw(reference, background);
  let b: LinearImage = linearFromRaw(distorted, background);
  const scales: ScaleNorms[] = [];
  const count = scaleSizes(reference.info).length;
  for (let scale = 0; scale < count; scale++) {
    if (scale > 0) {
      a = downsample(a);
      b = downsample(b);
    }
    scales.push(scaleNorms(a, b, BLUR));
  }
  return scoreFromNorms(scales);
}

/** True when `pixels` has no alpha channel or every alpha value is 255. */
function opaque(pixels: RawPixels): boolean {
  const { data, info } = pixels;
  if (!hasAlpha(pixels)) return true;
  for (let i = info.channels - 1; i < data.length; i += info.channels) if (data[i] !== 255) return false;
  return true;
}

function checkPixels(pixels: RawPixels, name: string): void {
  const { data, info } = pixels;
  const { width, height, channels } = info;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new InvalidArgumentError(
      `Expected a positive integer width and height for the ${name} image but got ${width}x${height}`,
    );
  }
  if (!Number.isInteger(channels) || channels < 1 || channels > 4) {
    throw new InvalidArgumentError(`Expected 1 to 4 channels for the ${name} image but got ${channels}`);
  }
  if (!(data instanceof Uint8Array) || data.length !== width * height * channels) {
    const got = data instanceof Uint8Array ? `${data.length} bytes` : 'something other than 8-bit samples';
    throw new InvalidArgumentError(
      `Expected ${width * height * channels} bytes of 8-bit pixels (${width}x${height}x${channels}) ` +
        `for the ${name} image but got ${got}`,
    );
  }
}
