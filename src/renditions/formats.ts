/**
 * Which format a rendition is written in, and with which settings. Pure: it works on the
 * facts sharp reads from an original's header, so `--dry-run` can plan without decoding.
 */
import { MEDIA_TYPES } from '../storage/media-headers.js';

/** The web's formats: what browsers show, and so what renditions are written in. */
export const OUTPUT_FORMATS = ['jpeg', 'png', 'webp', 'avif', 'gif'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** The formats `--format` can force for every rendition. */
export const FORCEABLE_FORMATS = ['jpeg', 'png', 'webp', 'avif'] as const;
export type ForceableFormat = (typeof FORCEABLE_FORMATS)[number];

/** What `--formats` lists: the forceable formats, and `keep` for the original's own. */
export const FORMAT_CHOICES = ['keep', ...FORCEABLE_FORMATS] as const;
export type FormatChoice = (typeof FORMAT_CHOICES)[number];

/** Other names of formats, as file extensions spell them: `--format jpg` is `--format jpeg`. */
export const FORMAT_SPELLINGS: Readonly<Record<string, string>> = { jpg: 'jpeg' };
export const spelledOut = (format: unknown) =>
  typeof format === 'string' ? (FORMAT_SPELLINGS[format.toLowerCase()] ?? format.toLowerCase()) : format;

export const FILE_EXTENSIONS: Readonly<Record<OutputFormat, string>> = {
  jpeg: 'jpg',
  png: 'png',
  webp: 'webp',
  avif: 'avif',
  gif: 'gif',
};

/** A format's media type, as `<source type>`, an alternate's `type` and HTTP's Content-Type name it. */
export const mediaTypeOf = (format: OutputFormat): string => MEDIA_TYPES[`.${FILE_EXTENSIONS[format]}`]!;

/** Header facts about an original that decide its output. */
export interface SourceFormatInfo {
  /** sharp's decoder name: jpeg, png, webp, gif, heif, tiff, ... */
  format: string;
  /** For heif: `av1` (AVIF) or `hevc` (HEIC). */
  compression?: string | undefined;
  hasAlpha: boolean;
  /** Number of frames; more than one for an animated GIF or WebP. */
  pages: number;
}

/** Thrown message for originals that are not raster images we render. */
export function unsupportedReason(info: SourceFormatInfo): string | null {
  if (info.format === 'svg') return 'SVG is a vector format; renditions are made from raster originals';
  if (info.format === 'pdf') return 'PDF is not an image format; export the page as an image first';
  if (info.format === 'heif' && info.compression === 'hevc')
    return 'HEIC is not supported by this build; convert it to JPEG first';
  return null;
}

/**
 * The output format: the original's own for web formats (JPEG, PNG, WebP, AVIF, GIF); JPEG
 * for others (TIFF, ...), or PNG when they have transparency; `force` overrides all.
 */
export function outputFormatFor(info: SourceFormatInfo, force?: ForceableFormat): OutputFormat {
  if (force) return force;
  switch (info.format) {
    case 'jpeg':
    case 'png':
    case 'webp':
    case 'gif':
      return info.format;
    case 'heif':
      return info.compression === 'av1' ? 'avif' : info.hasAlpha ? 'png' : 'jpeg';
    default:
      // TIFF, JPEG 2000, ...: formats browsers do not show.
      return info.hasAlpha ? 'png' : 'jpeg';
  }
}

/**
 * The output formats of an original for `--formats`, primary first, each once: `keep` is the
 * original's own (`outputFormatFor`), so `keep,jpeg` on a JPEG original writes JPEG once.
 */
export function outputFormatsFor(info: SourceFormatInfo, formats: readonly FormatChoice[]): OutputFormat[] {
  const resolved = formats.map((choice) => outputFormatFor(info, choice === 'keep' ? undefined : choice));
  return [...new Set(resolved)];
}

/** Whether `format` keeps transparency: every output format but JPEG, which is flattened onto white. */
export const keepsAlpha = (format: OutputFormat): boolean => format !== 'jpeg';

/** The formats whose frames are an animation, decoded together; other pages (a TIFF's) are not. */
export const isAnimationFormat = (format: string | undefined): boolean => format === 'gif' || format === 'webp';

/** The formats with an encoder quality, which `--quality auto` chooses; PNG and GIF are lossless. */
export const isLossy = (format: OutputFormat): format is 'jpeg' | 'webp' | 'avif' =>
  format === 'jpeg' || format === 'webp' || format === 'avif';

/** GIF and WebP keep their animation; other outputs take the first frame. */
export function keepsAnimation(info: SourceFormatInfo, output: OutputFormat): boolean {
  return info.pages > 1 && isAnimationFormat(output) && isAnimationFormat(info.format);
}

/**
 * Whether an alternate in `alternate` shows only the first frame of an animation that the primary
 * format keeps: offered in markup, a browser would take it and show a still picture.
 */
export function stillOfAnimation(info: SourceFormatInfo, primary: OutputFormat, alternate: OutputFormat): boolean {
  return keepsAnimation(info, primary) && !keepsAnimation(info, alternate);
}
