/**
 * The rendition rules of spec 2.5 checked on an Image object as served: the other side of
 * `render`, built on the same `rules.ts`. Pure; `inspect` and `check` both use it.
 *
 * Rounding: libvips rounds the shorter side, Wagtail truncates it; both are correct, so a
 * size is accepted within one pixel of the exact scaled value.
 */
import {
  fitWithinBox,
  type PixelSize,
  parseRenditionFileName,
  parseSrcset,
  RENDITION_BOXES,
  RENDITION_KEYS,
  type RenditionKey,
} from './rules.js';

/** Stable rule ids, each with the one-line explanation the README and reports show. */
export const IMAGE_RULES = {
  'image-keys': 'sizes has all five keys, xs sm md lg xl',
  'image-box': 'each rendition fits inside its square box (300, 600, 1200, 2400, 4800 px)',
  'image-upscaled': 'no rendition is larger than the original (the largest rendition)',
  'image-aspect': 'each rendition keeps the aspect ratio, within a pixel of rounding',
  'image-size':
    "each rendition's longer side is its box, or the original's when that is smaller " +
    '(lg and xl then equal the original)',
  'image-srcset-present': 'srcset is present on the page-level and block-level images',
  'image-srcset-order': 'srcset lists five "<url> <width>w" entries, in xs..xl order',
  'image-srcset-url': "each srcset URL is that size's URL",
  'image-srcset-width': "each srcset width descriptor is that size's width",
  'image-file-name': "each file name is <name>.max-<n>x<n>.<ext> or <name>_<n>x<n>.<ext> with its key's box",
  'image-relative-size':
    "width/height agree with the renditions' aspect ratio (within a pixel on the largest rendition's short side)",
} as const;

export type ImageRule = keyof typeof IMAGE_RULES;

/** A broken rule, at a path relative to the Image object (`sizes.md.width`, `srcset`). */
export interface ImageFinding {
  rule: ImageRule;
  path: string;
  message: string;
}

export interface VerifyImageOptions {
  /** Whether this image must carry a srcset (see `image-srcset-present`). */
  srcsetRequired?: boolean;
}

interface SizeEntry extends PixelSize {
  url?: unknown;
}

/** The Image fields this module reads; anything else is the schema's business. */
export interface ImageLike {
  width?: unknown;
  height?: unknown;
  sizes?: unknown;
  srcset?: unknown;
}

const isSize = (value: unknown): value is SizeEntry => {
  const entry = value as SizeEntry | null;
  return (
    typeof entry === 'object' &&
    entry !== null &&
    Number.isInteger(entry.width) &&
    Number.isInteger(entry.height) &&
    entry.width > 0 &&
    entry.height > 0
  );
};

/** Checks one Image object against the rendition rules; returns every broken rule. */
export function verifyImage(image: ImageLike, options: VerifyImageOptions = {}): ImageFinding[] {
  const findings: ImageFinding[] = [];
  const add = (rule: ImageRule, path: string, message: string) => findings.push({ rule, path, message });
  const sizes = (typeof image.sizes === 'object' && image.sizes !== null ? image.sizes : {}) as Record<string, unknown>;
  const present = RENDITION_KEYS.filter((key) => isSize(sizes[key]));
  for (const key of RENDITION_KEYS) {
    if (!(key in sizes)) add('image-keys', 'sizes', `${key} is missing`);
  }
  const entries = Object.fromEntries(present.map((key) => [key, sizes[key] as SizeEntry])) as Partial<
    Record<RenditionKey, SizeEntry>
  >;

  // The reference original: the xl rendition, or the largest one present.
  const largest = present
    .map((key) => entries[key]!)
    .reduce<SizeEntry | undefined>((a, b) => (!a || b.width * b.height > a.width * a.height ? b : a), undefined);
  const reference = entries.xl ?? largest;
  for (const key of present) {
    const entry = entries[key]!;
    const box = RENDITION_BOXES[key];
    const at = `sizes.${key}`;
    if (entry.width > box || entry.height > box)
      add('image-box', at, `${key} is ${entry.width}x${entry.height}, outside its ${box}x${box} box`);
    if (!reference) continue;
    if (entry.width > reference.width || entry.height > reference.height) {
      add(
        'image-upscaled',
        at,
        `${key} is ${entry.width}x${entry.height}, larger than the original ${reference.width}x${reference.height}`,
      );
    }
    if (!keepsAspect(entry, reference)) {
      add(
        'image-aspect',
        at,
        `${key} is ${entry.width}x${entry.height}, not the aspect ratio of ${reference.width}x${reference.height}`,
      );
    }
    const expected = fitWithinBox(reference, box);
    if (Math.max(entry.width, entry.height) !== Math.max(expected.width, expected.height)) {
      add(
        'image-size',
        at,
        `${key} is ${entry.width}x${entry.height}; ` +
          `fitted to its ${box} px box the original gives ${expected.width}x${expected.height}`,
      );
    }
    if (typeof entry.url === 'string') {
      const parsed = parseRenditionFileName(entry.url.split(/[?#]/)[0]!);
      if (!parsed)
        add(
          'image-file-name',
          `${at}.url`,
          `${key} file name does not follow <name>.max-<n>x<n>.<ext> or <name>_<n>x<n>.<ext>`,
        );
      else if (parsed.box !== box)
        add('image-file-name', `${at}.url`, `${key} file is named for a ${parsed.box} px box, not ${box}`);
    }
  }

  checkSrcset(image.srcset, entries, options, add);
  if (
    reference &&
    typeof image.width === 'number' &&
    typeof image.height === 'number' &&
    image.width > 0 &&
    image.height > 0
  ) {
    if (!keepsAspect(reference, { width: image.width, height: image.height })) {
      add(
        'image-relative-size',
        'width',
        `width/height ${image.width}/${image.height} ` +
          `disagree with the largest rendition's ${reference.width}x${reference.height}`,
      );
    }
  }
  return findings;
}

/** True when `size` has the aspect of `reference` within one pixel on its shorter side. */
function keepsAspect(size: PixelSize, reference: PixelSize): boolean {
  if (size.width >= size.height) return Math.abs(size.height - (size.width * reference.height) / reference.width) <= 1;
  return Math.abs(size.width - (size.height * reference.width) / reference.height) <= 1;
}

function checkSrcset(
  srcset: unknown,
  entries: Partial<Record<RenditionKey, SizeEntry>>,
  options: VerifyImageOptions,
  add: (rule: ImageRule, path: string, message: string) => void,
): void {
  if (srcset === undefined || srcset === null) {
    if (options.srcsetRequired) add('image-srcset-present', 'srcset', 'srcset is missing');
    return;
  }
  const parsed = typeof srcset === 'string' ? parseSrcset(srcset) : null;
  if (!parsed || parsed.length !== RENDITION_KEYS.length) {
    add('image-srcset-order', 'srcset', `srcset is not five "<url> <width>w" entries`);
    return;
  }
  const urls = RENDITION_KEYS.map((key) => entries[key]?.url);
  if (parsed.some((entry, i) => entry.url !== urls[i]) && parsed.every((entry) => urls.includes(entry.url))) {
    add('image-srcset-order', 'srcset', 'srcset entries are not in xs..xl order');
    return;
  }
  RENDITION_KEYS.forEach((key, i) => {
    const entry = entries[key];
    const item = parsed[i]!;
    if (!entry) return;
    if (item.url !== entry.url)
      add(
        'image-srcset-url',
        'srcset',
        `entry ${i + 1} URL ${item.url} is not the ${key} URL ` +
          `${typeof entry.url === 'string' ? entry.url : JSON.stringify(entry.url)}`,
      );
    if (item.width !== entry.width)
      add(
        'image-srcset-width',
        'srcset',
        `entry ${i + 1} (${key}) says ${item.width}w but ${key} is ${entry.width} px wide`,
      );
  });
}
