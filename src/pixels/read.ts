/**
 * The thin sharp side of the metric and the fingerprints: a file or buffer decoded to the raw 8-bit
 * sRGB pixels that `ssimulacra2` scores and `fingerprint` reads, and the JPEG probe a sample of tiles
 * is chosen by. Here, so that quality/ never imports sharp.
 */
import { sourceErrorFromSharp } from '../errors.js';
import { sharp } from '../packages/sharp.js';
import { PROBE_QUALITY, type Probe, probeBlocks } from '../quality/auto.js';
import type { RawPixels } from '../quality/linear.js';

/**
 * The pixels of `input` (a path or encoded bytes) as displayed: EXIF orientation applied, converted
 * to 8-bit sRGB (an embedded ICC profile is honoured; grey becomes RGB), alpha kept.
 *
 * @param name what to call the input in an error (defaults to the path, or "image buffer").
 * @throws SourceError naming the input when it is missing or cannot be decoded.
 */
export async function rawPixels(input: string | Uint8Array, name?: string): Promise<RawPixels> {
  try {
    const { data, info } = await sharp(input, { autoOrient: true, failOn: 'error' })
      .toColourspace('srgb')
      .raw({ depth: 'uchar' })
      .toBuffer({ resolveWithObject: true });
    return { data, info: { width: info.width, height: info.height, channels: info.channels } };
  } catch (error) {
    throw sourceErrorFromSharp(name ?? (typeof input === 'string' ? input : 'image buffer'), error);
  }
}

/**
 * The probe `samplePixels` ranks a rendition's tiles by: `probeBlocks(pixels)` (a quarter of the
 * blocks of its green channel, or grey), and the same after a JPEG round trip at PROBE_QUALITY.
 */
export async function jpegProbe(pixels: RawPixels): Promise<Probe> {
  const plain = probeBlocks(pixels);
  const { width, height } = plain.info;
  const jpeg = await sharp(plain.data, { raw: { width, height, channels: 1 } })
    .jpeg({ quality: PROBE_QUALITY })
    .toBuffer();
  const { data, info } = await sharp(jpeg).toColourspace('b-w').raw().toBuffer({ resolveWithObject: true });
  return { plain, lossy: { data, info: { width: info.width, height: info.height, channels: info.channels } } };
}
