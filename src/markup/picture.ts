/**
 * Responsive markup for a rendered image: a `<picture>` whose `<source>`s offer the alternate
 * formats (AVIF, WebP, ...) and whose `<img>` is the primary format, or the `<img>` alone.
 * Pure: strings in, a string out; no sharp, no I/O (docs/guides/markup.md).
 */
import { escapeText, InvalidArgumentError } from '../errors.js';
import { keepsAlpha, mediaTypeOf, OUTPUT_FORMATS } from '../renditions/formats.js';
import type { ImageObject } from '../renditions/image-object.js';
import { PLACEHOLDER_COLOR, PLACEHOLDER_PREVIEW, PREVIEW_MAX_CHARS, type RenditionKey } from '../renditions/rules.js';

/** A low-quality stand-in shown in the image's box until its bytes arrive. */
export interface MarkupPlaceholder {
  /** The image's average colour, a CSS hex colour (`#rrggbb`). */
  color: string;
  /** A tiny preview as a `data:image/...;base64,` URI. */
  preview: string;
  /** The image shows what is beneath it through: no placeholder is painted (it would stay visible). */
  transparent?: boolean;
}

/** What the markup is made from: a `RenderResult` is one (its other fields are ignored). */
export interface MarkupImage {
  /** The Image object: the primary format's renditions, its alt text. */
  image: ImageObject;
  /**
   * The same renditions in other formats: offered AVIF first, then WebP (a browser takes the first it
   * shows); one whose `bytes` are more than the primary's is left out, and a JPEG one when the
   * placeholder says the image is transparent (a browser would show it flattened), and one that
   * shows only the first frame of an animation (`firstFrameOnly`: a browser would show a still).
   */
  alternates?: ReadonlyArray<{ type: string; srcset: string; bytes?: number | null; firstFrameOnly?: boolean }>;
  /** The bytes of the primary's files, when known: an alternate that weighs more is not offered. */
  bytes?: number | null;
  placeholder?: MarkupPlaceholder;
}

export interface PictureOptions {
  /**
   * The `sizes` attribute: how wide the image is drawn, for the browser's choice of rendition.
   * Default: `auto, 100vw` when lazy, `100vw` when eager (`DEFAULT_SIZES`).
   */
  sizes?: string;
  /** `lazy` (default): fetched when the image nears the viewport; `eager` for an image seen on arrival. */
  loading?: 'lazy' | 'eager';
}

/**
 * The default `sizes`. A lazy image is fetched after layout, so `auto` lets the browser take the
 * width it drew the image at (Chromium 126 and later); a browser that does not know `auto`
 * skips it (the HTML rules for a `sizes` entry it cannot parse) and takes `100vw`, what it would
 * assume without `sizes`: never too small a file, though too large a one for a narrower box. An
 * eager image is chosen before layout, and HTML allows `auto` only for a lazy one.
 */
export const DEFAULT_SIZES: Readonly<Record<'lazy' | 'eager', string>> = Object.freeze({
  lazy: 'auto, 100vw',
  eager: '100vw',
});

/**
 * The rendition of `<img src>`, `width` and `height`. Only a client that ignores `srcset` fetches
 * `src` (feed readers, mail clients, scrapers): a browser that reads `srcset` never does, so a
 * larger file costs it nothing. md (at most 1200x1200) looks sharp in a column of a page or a feed
 * at a few hundred KB; xs would be blurred there, xl can weigh megabytes.
 */
const FALLBACK: RenditionKey = 'md';

/** An attribute value's text, safe between double quotes: nothing in it can end the attribute or open a tag. */
const attribute = (value: string | number) =>
  String(value)
    .replace(/&/g, '&amp;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');

const tag = (name: string, attributes: Array<[string, string | number]>) =>
  `<${name} ${attributes.map(([key, value]) => `${key}="${attribute(value)}"`).join(' ')}>`;

/** A value quoted for an error message: one line, at most 80 characters. */
const quoted = (value: string) => `'${escapeText(value.length > 80 ? `${value.slice(0, 77)}...` : value)}'`;

/** The placeholder as an inline style: only what rules.ts says a placeholder may hold is taken. */
function placeholderStyle({ color, preview }: MarkupPlaceholder): string {
  if (typeof color !== 'string' || !PLACEHOLDER_COLOR.test(color))
    throw new InvalidArgumentError(
      `Expected a CSS hex colour (#rrggbb) for the placeholder's color but got ${quoted(String(color))}`,
    );
  if (typeof preview !== 'string' || !PLACEHOLDER_PREVIEW.test(preview))
    throw new InvalidArgumentError(
      `Expected a data:image/<format>;base64, URI of at most ${PREVIEW_MAX_CHARS} characters for the ` +
        `placeholder's preview but got ${quoted(String(preview))}`,
    );
  return `background: ${color} url(${preview}) center / cover no-repeat`;
}

/** The options, checked and defaulted: throws `InvalidArgumentError` naming a bad one (before any work, for a CLI). */
export function resolvePictureOptions(options: PictureOptions): { sizes: string; loading: 'lazy' | 'eager' } {
  const { loading = 'lazy' } = options;
  if (loading !== 'lazy' && loading !== 'eager')
    throw new InvalidArgumentError(`Expected lazy or eager for loading but got ${quoted(String(loading))}`);
  const { sizes = DEFAULT_SIZES[loading] } = options;
  if (typeof sizes !== 'string' || sizes.trim() === '')
    throw new InvalidArgumentError(`Expected a sizes value such as '100vw' but got ${quoted(String(sizes))}`);
  // An entry's size is its last word: `auto`, `100vw` or `(min-width: 600px) 50vw`.
  const autos = topLevelEntries(sizes).map((entry) => /(^|[\s)])auto$/i.test(entry.trim()) && entry.trim());
  if (loading === 'eager' && autos.some(Boolean))
    throw new InvalidArgumentError(`Expected a sizes value without auto for an eager image but got ${quoted(sizes)}`);
  if (autos.some((auto, at) => auto && (at > 0 || auto.toLowerCase() !== 'auto'))) {
    throw new InvalidArgumentError(
      'Expected auto only as the first entry of sizes, on its own (a browser skips it anywhere else) ' +
        `but got ${quoted(sizes)}`,
    );
  }
  return { sizes: sizes.trim(), loading };
}

/** The comma-separated entries of a `sizes` value, commas inside parentheses (`min(50vw, 600px)`) kept. */
function topLevelEntries(sizes: string): string[] {
  const entries: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < sizes.length; i++) {
    const c = sizes[i];
    if (c === '(') depth++;
    else if (c === ')') depth = Math.max(0, depth - 1);
    else if (c === ',' && depth === 0) {
      entries.push(sizes.slice(start, i));
      start = i + 1;
    }
  }
  entries.push(sizes.slice(start));
  return entries;
}

/**
 * A `srcset` with each width once: an original smaller than the larger boxes gives lg and xl (or
 * more) the same file and width, and HTML allows one candidate per width. The first is kept.
 */
function distinctWidths(srcset: string): string {
  const seen = new Set<string>();
  return srcset
    .split(/,\s+/)
    .filter((candidate) => {
      const width = /\s(\d+w)$/.exec(candidate)?.[1] ?? candidate;
      if (seen.has(width)) return false;
      seen.add(width);
      return true;
    })
    .join(', ');
}

/**
 * The HTML of one image: `<picture>` with a `<source type srcset sizes>` per alternate, AVIF
 * first, then WebP, then any other in order (`PREFERRED_TYPES`), then the `<img>`; without
 * alternates, the `<img>` alone. The `<img>` has the primary format's `srcset`, `sizes`
 * (`DEFAULT_SIZES` unless given), `src` and the real `width` and `height` of its md rendition (the
 * box is reserved before a byte arrives: no layout shift), `alt` (empty when the alt text is null:
 * the image is then taken as decorative), `loading` (lazy by default) and `decoding="async"`, and
 * with a placeholder a `style` that paints it in the box until the image covers it, unless the
 * image is transparent (it would never be covered). Every attribute value is HTML-escaped. Throws
 * `InvalidArgumentError` for bad options or a placeholder that is not a hex colour and a base64
 * image data URI.
 */
export function pictureHtml(item: MarkupImage, options: PictureOptions = {}): string {
  const { sizes, loading } = resolvePictureOptions(options);
  const { image, placeholder, bytes } = item;
  // An alternate heavier than the primary: a browser would take it, and download more for the same picture;
  // one that holds no transparency, of an image that has some: a browser would show it flattened; one
  // that shows the first frame of an animation only: a browser would show a still.
  const alternates = (item.alternates ?? []).filter(
    (each) =>
      !(typeof bytes === 'number' && (each.bytes ?? 0) > bytes) &&
      !(placeholder?.transparent && OPAQUE_TYPES.includes(each.type)) &&
      !each.firstFrameOnly,
  );
  const fallback = image.sizes[FALLBACK];
  const img = tag('img', [
    ['src', fallback.url],
    ['srcset', distinctWidths(image.srcset)],
    ['sizes', sizes],
    ['width', fallback.width],
    ['height', fallback.height],
    ['alt', image.alt_text ?? ''],
    ['loading', loading],
    ['decoding', 'async'],
    ...(placeholder && !placeholder.transparent ? [['style', placeholderStyle(placeholder)] as [string, string]] : []),
  ]);
  if (alternates.length === 0) return img;
  const sources = smallestFirst(alternates).map(({ type, srcset }) =>
    tag('source', [
      ['type', type],
      ['srcset', distinctWidths(srcset)],
      ['sizes', sizes],
    ]),
  );
  return ['<picture>', ...sources.map((source) => `  ${source}`), `  ${img}`, '</picture>'].join('\n');
}

/** Types that hold no transparency: a JPEG alternate of an image with transparency is flattened onto white. */
const OPAQUE_TYPES = OUTPUT_FORMATS.filter((format) => !keepsAlpha(format)).map(mediaTypeOf);

/**
 * The formats a browser should prefer, smallest files first for the same look: it takes the first
 * `<source>` whose type it shows, so this order, not that of `--formats`, decides what visitors download.
 */
const PREFERRED_TYPES = ['image/avif', 'image/webp'];

/** `alternates` in `PREFERRED_TYPES` order, any other type after them in its own order. */
function smallestFirst<T extends { type: string }>(alternates: ReadonlyArray<T>): T[] {
  const rank = (type: string) => {
    const at = PREFERRED_TYPES.indexOf(type);
    return at === -1 ? PREFERRED_TYPES.length : at;
  };
  return [...alternates].sort((a, b) => rank(a.type) - rank(b.type));
}

/** The HTML of several images, one after another, each as `pictureHtml` makes it, a line apart. */
export function picturesHtml(items: Iterable<MarkupImage>, options: PictureOptions = {}): string {
  resolvePictureOptions(options);
  return Array.from(items, (item) => pictureHtml(item, options)).join('\n');
}
