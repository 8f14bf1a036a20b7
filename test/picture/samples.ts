/**
 * The samples the fingerprint tests run on (samples/originals), and the sharp helpers they share:
 * raw pixels in and out, renditions sized as render sizes them, colours mapped pixel by pixel.
 */
import path from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { fingerprint } from '../../src/picture/index.js';
import { rawPixels } from '../../src/pixels/read.js';
import type { RawPixels } from '../../src/quality/linear.js';

export const SAMPLES = path.resolve(import.meta.dirname, '../../samples/originals');
export const FILES = [
  'Yellow Flower.jpg',
  'dandelion.jpg',
  'ladybird.jpg',
  'marigold.png',
  'raindrops.webp',
  'landscapes/dune.jpg',
  'landscapes/storm.jpg',
];

export function image(pixels: RawPixels): Sharp {
  const { width, height, channels } = pixels.info;
  return sharp(pixels.data, { raw: { width, height, channels: channels as 1 | 2 | 3 | 4 } });
}

export async function raw(pipeline: Sharp): Promise<RawPixels> {
  const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true });
  return { data, info: { width: info.width, height: info.height, channels: info.channels } };
}

/** The rendition's pixels for `box`, as render sizes them: inside the box, never enlarged. */
export function rendition(original: RawPixels, box: number): Promise<RawPixels> {
  return raw(image(original).resize(box, box, { fit: 'inside', withoutEnlargement: true }));
}

/** `pixels` with each pixel's colour replaced by `f` of it (alpha kept). */
export function mapColours(pixels: RawPixels, f: (r: number, g: number, b: number) => number[]): RawPixels {
  const { channels } = pixels.info;
  const data = Buffer.from(pixels.data);
  for (let i = 0; i < data.length; i += channels) {
    const [r, g, b] = f(data[i]!, data[i + 1]!, data[i + 2]!);
    data[i] = Math.round(Math.min(255, Math.max(0, r!)));
    data[i + 1] = Math.round(Math.min(255, Math.max(0, g!)));
    data[i + 2] = Math.round(Math.min(255, Math.max(0, b!)));
  }
  return { data, info: pixels.info };
}

/** Each sample's pixels and their fingerprint, by file name (FILES). */
export async function readSamples(): Promise<{ originals: Map<string, RawPixels>; references: Map<string, string> }> {
  const originals = new Map<string, RawPixels>();
  const references = new Map<string, string>();
  for (const file of FILES) {
    // The largest rendition's pixels: every sample is under 4800 px, so the original's own size.
    const pixels = await rawPixels(path.join(SAMPLES, file));
    originals.set(file, pixels);
    references.set(file, fingerprint(pixels));
  }
  return { originals, references };
}
