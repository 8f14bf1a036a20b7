/**
 * The Image object of spec 2.5, built from the renditions written for an original.
 */
import { buildSrcset, mediaUrl, type PixelSize, RENDITION_KEYS, type RenditionKey, relativeSize } from './rules.js';

/** One entry of an Image's `sizes`: a rendition's real pixel size and its URL. */
export interface RenditionSize {
  width: number;
  height: number;
  url: string;
}

/** An Image object as the Content API serves it (spec 2.5). */
export interface ImageObject {
  /** Relative width: the longer side is 1 (see `relativeSize`). */
  width: number;
  /** Relative height: the longer side is 1. */
  height: number;
  alt_text: string | null;
  sizes: Record<RenditionKey, RenditionSize>;
  /** `<url> <width>w` entries in xs..xl order. */
  srcset: string;
}

/**
 * A rendition file: its path under the output folder (with `/`), its pixel size and, once it is
 * written, its version (`renditionVersion`: the first 8 hex digits of its bytes' SHA-256).
 */
export interface RenditionFile extends PixelSize {
  path: string;
  version?: string;
}

export interface ImageObjectOptions {
  /** Prefix of every URL; the file's path under the output folder follows it. */
  mediaUrl: string;
  altText?: string | null | undefined;
  /**
   * Whether each URL carries its file's version, `?v=<version>` (default true; a file without
   * one, not yet written, has none): the render setting `urlVersions`.
   */
  urlVersions?: boolean | undefined;
}

/**
 * Each rendition's size and URL (an Image's `sizes`): `files` below the output folder, under
 * `prefix`, each URL with its file's version unless `urlVersions` is false.
 */
export function renditionUrls(
  files: Record<RenditionKey, RenditionFile>,
  prefix: string,
  urlVersions = true,
): Record<RenditionKey, RenditionSize> {
  const entries = RENDITION_KEYS.map((key) => {
    const { width, height, path, version } = files[key];
    return [key, { width, height, url: mediaUrl(prefix, path, urlVersions ? version : undefined) }];
  });
  return Object.fromEntries(entries) as Record<RenditionKey, RenditionSize>;
}

/** Builds the Image object for an original of `original` size whose renditions are `files`. */
export function buildImageObject(
  original: PixelSize,
  files: Record<RenditionKey, RenditionFile>,
  options: ImageObjectOptions,
): ImageObject {
  const sizes = renditionUrls(files, options.mediaUrl, options.urlVersions);
  return {
    ...relativeSize(original),
    alt_text: options.altText ?? null,
    sizes,
    srcset: buildSrcset(sizes),
  };
}
