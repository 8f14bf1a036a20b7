/**
 * SSIMULACRA2, version 2.1, as in cloudinary/ssimulacra2 (src/ssimulacra2.cc and src/ssimulacra2_main.cc):
 * a perceptual score of how close `distorted` looks to `reference`. 100 means identical pixels; about
 * 90 is visually lossless, 70 high quality, 50 medium, 30 low; strong distortions go below 0.
 *
 * Pure: raw 8-bit sRGB pixels in, a number out (src/quality/read.ts decodes files with sharp). Every
 * float32 step is rounded as the reference's FMA builds round it (see blur.ts for why that matters),
 * so on the same 8-bit pixels the score is the reference binary's to its printed 8 decimals. Files of
 * more than 8 bits per sample are scored after rounding to 8 bits, which the reference does not do.
 */
import { InvalidArgumentError } from '../errors.js';
import { downsample, hasAlpha, type LinearImage, linearFromRaw, type RawPixels } from './linear.js';
import { createRecursiveGaussian } from './recursive-gaussian.js';
import { scaleNorms } from './scale.js';
import { type ScaleNorms, scoreFromNorms } from './score.js';

export type { RawPixels } from './linear.js';

/** Scales 1:1 to 1:32 (`kNumScales`). */
const SCALES = 6;
/** The smallest width and height the reference accepts, and below which it stops adding scales. */
const MIN_SIZE = 8;
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
  const a = reference.info;
  const b = distorted.info;
  if (a.width !== b.width || a.height !== b.height) {
    throw new InvalidArgumentError(
      `SSIMULACRA2 compares images of the same size, but the reference is ${a.width}x${a.height} ` +
        `and the distorted image ${b.width}x${b.height}`,
    );
  }
  if (a.width < MIN_SIZE || a.height < MIN_SIZE) {
    throw new InvalidArgumentError(
      `SSIMULACRA2 needs images of at least ${MIN_SIZE}x${MIN_SIZE} pixels, but these are ${a.width}x${a.height}`,
    );
  }
  if (!hasAlpha(reference)) return scoreOver(reference, distorted, 0.5);
  const dark = scoreOver(reference, distorted, 0.1);
  // Fully opaque alpha blends to the same pixels over any background: the second score would be equal.
  if (opaque(reference) && opaque(distorted)) return dark;
  return Math.min(dark, scoreOver(reference, distorted, 0.9));
}

/** The score with any alpha blended over a grey of level `background` (`ComputeSSIMULACRA2(orig, dist, bg)`). */
function scoreOver(reference: RawPixels, distorted: RawPixels, background: number): number {
  let a: LinearImage = linearFromRaw(reference, background);
  let b: LinearImage = linearFromRaw(distorted, background);
  const scales: ScaleNorms[] = [];
  for (let scale = 0; scale < SCALES; scale++) {
    // As the reference: the size tested is the previous scale's, so the last scale may be under 8 pixels.
    if (a.width < MIN_SIZE || a.height < MIN_SIZE) break;
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
