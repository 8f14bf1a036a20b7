/**
 * The sharp side of reading an original: its header, checked against the pixel limit, and its
 * pixels decoded as every rendition is made from them (orientation applied, 16-bit RGB as 8-bit
 * sRGB); raw pixels back into sharp, and out of it as the metric scores them.
 */
import type { Metadata, Sharp, SharpOptions } from 'sharp';
import { SourceError, sourceErrorFromSharp } from '../errors.js';
import { sharp } from '../packages/sharp.js';
import type { RawPixels } from '../quality/linear.js';
import { isAnimationFormat, type SourceFormatInfo } from './formats.js';
import { PNG_HEADER_LIMIT, pngHeaderExcess } from './png-chunks.js';
import type { PixelSize } from './rules.js';

/** What an original's header says, with its size as displayed (EXIF orientation applied). */
export interface SourceInfo extends SourceFormatInfo {
  size: PixelSize;
}

/** Reads an original's header (no pixel decoding) and checks it against the pixel limit. */
export async function readSourceInfo(source: string, input: Buffer | string, pixelLimit: number): Promise<SourceInfo> {
  return (await readSourceHeader(source, input, pixelLimit)).info;
}

/**
 * `readSourceInfo`, and from the same read whether the pixels are 16-bit RGB (`isRgb16`): what a
 * render decodes by, which its records do not keep.
 */
export async function readSourceHeader(
  source: string,
  input: Buffer | string,
  pixelLimit: number,
): Promise<{ info: SourceInfo; rgb16: boolean }> {
  if (typeof input !== 'string' && input.length === 0)
    throw new SourceError('CONTENT_API_EMPTY_FILE', source, 'file is empty');
  const excess = await pngHeaderExcess(input);
  if (excess) {
    throw new SourceError(
      'CONTENT_API_METADATA_LIMIT',
      source,
      `PNG holds over ${PNG_HEADER_LIMIT / 2 ** 20} MiB of chunks before its pixels (mostly ` +
        `${excess.types.slice(0, 3).join(', ')}), more than is read: their memory would follow bytes, not pixels`,
    );
  }
  let meta: Metadata;
  try {
    // No limit on the header read: the check below says by how much an original is over.
    meta = await sharp(input, { limitInputPixels: false }).metadata();
  } catch (error) {
    throw sourceErrorFromSharp(source, error);
  }
  const pages = meta.pages ?? 1;
  const frameHeight = pages > 1 ? (meta.pageHeight ?? meta.height) : meta.height;
  // What may be decoded: an animation's frames, all of them; a TIFF's other pages (a pyramid's
  // smaller copies, a scan's next page) never, only the first.
  const frames = isAnimationFormat(meta.format) ? pages : 1;
  if (pixelLimit > 0 && meta.width * frameHeight * frames > pixelLimit) {
    throw new SourceError(
      'CONTENT_API_PIXEL_LIMIT',
      source,
      `${meta.width}x${frameHeight}${frames > 1 ? ` x ${frames} frames` : ''} ` +
        `exceeds the pixel limit of ${pixelLimit} (see --pixel-limit)`,
    );
  }
  const swap = (meta.orientation ?? 1) >= 5;
  const info: SourceInfo = {
    format: meta.format,
    compression: meta.compression,
    hasAlpha: meta.hasAlpha,
    pages,
    size: swap ? { width: frameHeight, height: meta.width } : { width: meta.width, height: frameHeight },
  };
  return { info, rgb16: isRgb16Space(meta) };
}

/** An original to decode: a file libvips reads itself, or bytes, and whether its pixels are 16-bit RGB. */
export interface Decode {
  input: Buffer | string;
  rgb16: boolean;
}

/** Whether `input` decodes to 16-bit RGB (a 16-bit PNG or TIFF, a 10-bit AVIF), from its header. */
export async function isRgb16(input: Buffer | string): Promise<boolean> {
  return isRgb16Space(await sharp(input, { limitInputPixels: false }).metadata());
}

const isRgb16Space = (meta: Pick<Metadata, 'space'>) => meta.space === 'rgb16';

/** The original opened for decoding, at most `pixelLimit` pixels (0: no limit), its frames or its first. */
export function open({ input, rgb16 }: Decode, pixelLimit: number, animated: boolean): Sharp {
  const options: SharpOptions = {
    limitInputPixels: pixelLimit > 0 ? pixelLimit : false,
    failOn: 'warning',
    autoOrient: true,
    animated,
  };
  // sharp works on 16-bit RGB in Display P3 (sRGB for everything else): it converts an embedded
  // profile to P3, and `withMetadata()`'s sRGB profile from P3, also for untagged pixels, which are
  // sRGB; but `toColourspace('srgb')` only drops the low bytes. Untagged 16-bit RGB came out more
  // saturated with `keepMetadata`, a tagged one less saturated without. As 8-bit sRGB from the start
  // it goes the way 8-bit originals do, which stay as they were.
  return rgb16 ? sharp(input, options).pipelineColourspace('srgb') : sharp(input, options);
}

/** Raw pixels as a sharp pipeline's input. */
export function fromRaw(data: Uint8Array, info: RawPixels['info']): Sharp {
  const channels = info.channels as 1 | 2 | 3 | 4;
  return sharp(data, { raw: { width: info.width, height: info.height, channels } });
}

/** 8-bit sRGB pixels of `image`, as scored. */
export const rawOf = (image: Sharp): Promise<RawPixels> =>
  image.toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });

/** What a JPEG's white background is. */
export const WHITE = '#ffffff';

/** Pixels with alpha, flattened onto white: what a JPEG shows of them. */
export const flattenRaw = (pixels: RawPixels): Promise<RawPixels> =>
  fromRaw(pixels.data, pixels.info).flatten({ background: WHITE }).raw().toBuffer({ resolveWithObject: true });
