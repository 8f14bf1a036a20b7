/**
 * The rendition rules of the Content API (spec 2.5), in one pure module.
 *
 * `render`, `check`, `inspect` and `serve` all import these: the five boxes, the fit
 * arithmetic, the file naming and the srcset string live here and nowhere else.
 * No I/O and no sharp import, so anything can use it cheaply.
 */
import { createHash } from 'node:crypto';

/** Rendition keys, smallest first; this is also the srcset order. */
export const RENDITION_KEYS = ['xs', 'sm', 'md', 'lg', 'xl'] as const;
export type RenditionKey = (typeof RENDITION_KEYS)[number];

/** Side of the square bounding box of each rendition, in pixels. */
export const RENDITION_BOXES: Readonly<Record<RenditionKey, number>> = Object.freeze({
  xs: 300,
  sm: 600,
  md: 1200,
  lg: 2400,
  xl: 4800,
});

export interface PixelSize {
  width: number;
  height: number;
}

/**
 * The size of an image of `size` fitted inside a `box` x `box` square: aspect ratio kept,
 * never upscaled. The longer side becomes `box`; the shorter one is rounded to the nearest
 * pixel, and never below 1 (a 4801x10 original gives 300x1 at xs).
 */
export function fitWithinBox(size: PixelSize, box: number): PixelSize {
  assertPixelSize(size);
  const long = Math.max(size.width, size.height);
  if (long <= box) return { width: size.width, height: size.height };
  const scaleShort = (short: number) => Math.max(1, Math.round((short * box) / long));
  return size.width >= size.height
    ? { width: box, height: scaleShort(size.height) }
    : { width: scaleShort(size.width), height: box };
}

/** The five rendition sizes of an original of `size` (as displayed, after EXIF orientation). */
export function renditionSizes(size: PixelSize): Record<RenditionKey, PixelSize> {
  const entries = RENDITION_KEYS.map((key) => [key, fitWithinBox(size, RENDITION_BOXES[key])] as const);
  return Object.fromEntries(entries) as Record<RenditionKey, PixelSize>;
}

/**
 * Naming styles of rendition files (spec 4.2):
 * - `max`: `<name>.max-<n>x<n>.<ext>` (the default, Wagtail's `max-` filter spec)
 * - `underscore`: `<name>_<n>x<n>.<ext>`
 */
export type NamingStyle = 'max' | 'underscore';
export const NAMING_STYLES: readonly NamingStyle[] = ['max', 'underscore'];

/** The file name of a rendition: `renditionFileName('river', 300, 'jpg')` is `river.max-300x300.jpg`. */
export function renditionFileName(name: string, box: number, ext: string, style: NamingStyle = 'max'): string {
  return style === 'max' ? `${name}.max-${box}x${box}.${ext}` : `${name}_${box}x${box}.${ext}`;
}

export interface ParsedRenditionFileName {
  name: string;
  box: number;
  ext: string;
  style: NamingStyle;
}

const FILE_NAME_PATTERNS: ReadonlyArray<[NamingStyle, RegExp]> = [
  ['max', /^(?<name>.+)\.max-(?<w>\d+)x(?<h>\d+)\.(?<ext>[A-Za-z0-9]+)$/],
  ['underscore', /^(?<name>.+)_(?<w>\d+)x(?<h>\d+)\.(?<ext>[A-Za-z0-9]+)$/],
];

/**
 * Reads a rendition file name (or the last segment of a URL path) backwards.
 * Returns null when it follows neither naming style or its box is not square.
 */
export function parseRenditionFileName(fileNameOrPath: string): ParsedRenditionFileName | null {
  const fileName = fileNameOrPath.slice(fileNameOrPath.lastIndexOf('/') + 1);
  for (const [style, pattern] of FILE_NAME_PATTERNS) {
    const groups = pattern.exec(fileName)?.groups;
    if (!groups || groups.w !== groups.h) continue;
    return { name: groups.name!, box: Number(groups.w), ext: groups.ext!, style };
  }
  return null;
}

/**
 * The URL-safe form of a file or folder name, used for every `<name>` and folder written:
 * Unicode is decomposed (NFKD) and its combining marks dropped (`é` -> `e`), letters are
 * lower-cased, and every run of characters other than `a-z` and `0-9` becomes a single
 * `-`, trimmed at both ends. A name with nothing left becomes `image`.
 * `Évening Light (2).JPG` -> `evening-light-2` (the extension is removed by the caller).
 */
export function safeName(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return slug === '' ? 'image' : slug;
}

/**
 * True for a stem `render` makes (`old-works/evening-light`): safe names (`safeName`) joined by
 * `/`. A stem from elsewhere (a job's data) is taken only if it is one, so it stays below the
 * output, and neither it nor a rendition named from it can be one of the tool's own files
 * there (the manifest, its lock, the claims folder, a bucket's records, temporary files),
 * whose names all begin with `.`, which a safe name never does.
 */
export function isStem(stem: string): boolean {
  return stem.split('/').every((segment) => safeName(segment) === segment);
}

/** `<url> <width>w` entries joined by `, `, in xs..xl order (spec 2.5 rule 2). */
export function buildSrcset(sizes: Record<RenditionKey, { width: number; url: string }>): string {
  return RENDITION_KEYS.map((key) => `${sizes[key].url} ${sizes[key].width}w`).join(', ');
}

export interface SrcsetEntry {
  url: string;
  width: number;
}

/** Parses a srcset string; returns null for an entry that is not `<url> <n>w`. */
export function parseSrcset(srcset: string): SrcsetEntry[] | null {
  const entries: SrcsetEntry[] = [];
  for (const part of srcset.split(',')) {
    const match = /^\s*(\S+)\s+(\d+)w\s*$/.exec(part);
    if (!match) return null;
    entries.push({ url: match[1]!, width: Number(match[2]) });
  }
  return entries;
}

/**
 * The relative `width` and `height` of an Image object (spec 2.5: "not an integer pixel
 * count"). Rule: the longer side is 1 and the shorter side is its ratio to the longer,
 * rounded to 6 decimals. A 6000x4000 original gives `{ width: 1, height: 0.666667 }`. A side
 * shorter than that rounds to 0.000001, never 0 (the spec's sizes are positive): a strip
 * of 3,000,000x1 px is `{ width: 1, height: 0.000001 }`.
 */
export function relativeSize(size: PixelSize): { width: number; height: number } {
  assertPixelSize(size);
  const long = Math.max(size.width, size.height);
  const ratio = (side: number) => Math.max(1e-6, Math.round((side / long) * 1e6) / 1e6);
  return { width: ratio(size.width), height: ratio(size.height) };
}

/**
 * Joins the `--media-url` prefix and a path under the output folder into a URL; with the file's
 * `version` (`renditionVersion`), the URL carries it as its query, `?v=<version>`: a query, so the
 * file name stays the spec's (4.2), and a changed file is a new URL for every cache on the way.
 */
export function mediaUrl(prefix: string, relativePath: string, version?: string): string {
  const base = prefix.endsWith('/') ? prefix : `${prefix}/`;
  const url = base + relativePath.split('/').map(encodeURIComponent).join('/');
  return version === undefined ? url : `${url}?${VERSION_PARAMETER}=${version}`;
}

/** The query parameter of a rendition URL that holds its file's version. */
export const VERSION_PARAMETER = 'v';

/** Hex digits of a version: 8 (32 bits), so two contents of one file share a version once in 4 billion changes. */
const VERSION_DIGITS = 8;

/** The version of a file whose SHA-256 is `sha256` (hex): its first 8 hex digits. */
export function versionOfSha256(sha256: string): string {
  return sha256.slice(0, VERSION_DIGITS);
}

/** The version of a rendition file: the first 8 hex digits of its bytes' SHA-256 (`3f9a1c0e`). */
export function renditionVersion(bytes: Uint8Array): string {
  return versionOfSha256(createHash('sha256').update(bytes).digest('hex'));
}

/** The version a media URL carries (its `v` query parameter), or null when it carries none. */
export function urlVersion(url: string): string | null {
  try {
    return new URL(url, 'http://placeholder.invalid').searchParams.get(VERSION_PARAMETER);
  } catch {
    return null;
  }
}

export const DEFAULT_MEDIA_URL = '/media/';

/**
 * The inverse of `mediaUrl`: the path under the media folder of a rendition URL (absolute
 * or root-relative; query and fragment ignored). The path of `prefix` is removed; a URL
 * outside it is taken from the root (`/other/a.jpg` -> `other/a.jpg`). Null when the URL
 * cannot be decoded.
 */
export function mediaPath(url: string, prefix: string = DEFAULT_MEDIA_URL): string | null {
  try {
    const pathOf = (value: string) => decodeURIComponent(new URL(value, 'http://placeholder.invalid').pathname);
    const pathname = pathOf(url);
    const base = pathOf(prefix.endsWith('/') ? prefix : `${prefix}/`);
    return pathname.startsWith(base) ? pathname.slice(base.length) : pathname.replace(/^\/+/, '');
  } catch {
    return null;
  }
}

function assertPixelSize(size: PixelSize): void {
  const ok = (n: number) => Number.isInteger(n) && n >= 1;
  if (!ok(size.width) || !ok(size.height)) {
    throw new RangeError(`Expected positive integer pixel sizes but got ${size.width}x${size.height}`);
  }
}

/**
 * What a placeholder may hold, wherever it comes from (a render, a manifest record, a library
 * caller): a CSS hex colour and a base64 image data URI of at most 1,024 characters (a longer one,
 * from a hand-edited record, would be copied into every page's markup and every contact sheet).
 * It goes into an inline `style`, where HTML escaping keeps a value inside its attribute but not
 * inside its CSS declaration (`red; background-image: url(//elsewhere)` would have every visitor
 * fetch a URL).
 */
export const PLACEHOLDER_COLOR = /^#(?:[0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/i;
/** The longest preview URI: small enough for an inline `style` on every image of a page. */
export const PREVIEW_MAX_CHARS = 1024;
export const PLACEHOLDER_PREVIEW = new RegExp(
  `^(?=.{1,${PREVIEW_MAX_CHARS}}$)data:image/(?:avif|gif|jpeg|png|webp);base64,[A-Za-z0-9+/]+={0,2}$`,
);

/** Whether a placeholder from elsewhere (a queue's result) holds only what a placeholder may. */
export function isPlaceholder(value: { color: unknown; preview: unknown }): boolean {
  const { color, preview } = value;
  return (
    typeof color === 'string' &&
    PLACEHOLDER_COLOR.test(color) &&
    typeof preview === 'string' &&
    PLACEHOLDER_PREVIEW.test(preview)
  );
}
