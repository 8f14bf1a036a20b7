/**
 * Walks a page's JSON: every object with its JSON path, and every Image wherever it sits
 * (stage, list stage, blocks, works, overlays, inquiry artwork images, banners, summaries,
 * related presentations).
 */
import { escapeText } from '../errors.js';
import type { ImageLike } from '../renditions/verify.js';

export type JsonPath = Array<string | number>;

/** As `MAX_JSON_DEPTH` of `json-text.ts`: deeper values are not walked. */
export const MAX_WALK_DEPTH = 256;

/** `['$', 'presentation_stage', 'body', 2, 'value']` -> `$.presentation_stage.body[2].value`. */
export function formatPath(path: JsonPath): string {
  return path
    .map((part, i) =>
      typeof part === 'number'
        ? `[${part}]`
        : i === 0
          ? part
          : /^[A-Za-z_$][\w$]*$/.test(part)
            ? `.${part}`
            : `[${quoteKey(part)}]`,
    )
    .join('');
}

/**
 * A key as a JSON string, with what JSON leaves raw (C1 controls, bidi overrides, U+2028) escaped
 * too: paths get printed.
 */
function quoteKey(key: string): string {
  return escapeText(JSON.stringify(key));
}

export interface FoundObject {
  path: JsonPath;
  value: Record<string, unknown>;
}

/**
 * Every object (not array) in `json`, depth first, parents before children. Iterative, so a
 * deep value cannot overflow the stack; values nested deeper than `MAX_WALK_DEPTH` are not
 * visited (`validatePage` reports such a page as a whole).
 */
export function* findObjects(json: unknown, path: JsonPath = ['$']): Generator<FoundObject> {
  const stack: Array<{ value: unknown; path: JsonPath; depth: number }> = [{ value: json, path, depth: 1 }];
  while (stack.length > 0) {
    const { value, path: at, depth } = stack.pop()!;
    if (typeof value !== 'object' || value === null || depth > MAX_WALK_DEPTH) continue;
    const entries: Array<[string | number, unknown]> = Array.isArray(value)
      ? [...value.entries()]
      : Object.entries(value);
    if (!Array.isArray(value)) yield { path: at, value: value as Record<string, unknown> };
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      if (typeof child === 'object' && child !== null)
        stack.push({ value: child, path: [...at, key], depth: depth + 1 });
    }
  }
}

export interface FoundImage {
  path: JsonPath;
  image: ImageLike & Record<string, unknown>;
  /** Page-level and block-level images carry a srcset; nested ones may omit it (spec 2.5). */
  srcsetRequired: boolean;
}

const SRCSET_REQUIRED = [
  /^\$\.(presentation_stage|list_presentation_stage)\.(thumbnail|feature_large_image|feature_small_image)$/,
  /^\$\.presentation_stage\.body\[\d+\]\.value\.image$/,
];

/** An object is an Image when it has a `sizes` object and a relative `width` or a `srcset`. */
export function isImage(value: Record<string, unknown>): boolean {
  return (
    typeof value.sizes === 'object' &&
    value.sizes !== null &&
    !Array.isArray(value.sizes) &&
    ('width' in value || 'srcset' in value)
  );
}

export function* findImages(json: unknown): Generator<FoundImage> {
  for (const { path, value } of findObjects(json)) {
    if (!isImage(value)) continue;
    const at = formatPath(path);
    yield { path, image: value, srcsetRequired: SRCSET_REQUIRED.some((pattern) => pattern.test(at)) };
  }
}
