/**
 * Every media file a page names, for `--verify-files`: each rendition of each Image, every
 * other `{url, width, height}` object under the media prefix (the Social/SEO `meta.thumb`),
 * and any other string that is a URL under the media prefix (it must exist and be an image).
 */
import { findImages, formatPath, type JsonPath } from '../page/walk.js';
import { RENDITION_KEYS } from '../renditions/rules.js';
import { urlPath } from './probe.js';

export interface MediaReference {
  /** JSON path of the string that names the file (`...sizes.md.url`, `$.meta.thumb.url`). */
  path: string;
  url: string;
  /** The pixel size the page gives the file, when it gives one. */
  size?: { width: number; height: number };
}

const isUrlLike = (value: string) => value.startsWith('/') || /^https?:\/\//i.test(value);

function underPrefix(value: string, prefix: string): boolean {
  if (!isUrlLike(value) || /\s/.test(value)) return false;
  try {
    return urlPath(value).startsWith(urlPath(prefix.endsWith('/') ? prefix : `${prefix}/`));
  } catch {
    return false;
  }
}

const sized = (value: Record<string, unknown>) =>
  typeof value.url === 'string' && Number.isInteger(value.width) && Number.isInteger(value.height);

/**
 * Every media reference in `json`, each JSON path once; renditions whatever their prefix, the
 * rest under `mediaPrefix`.
 */
export function mediaReferences(json: unknown, mediaPrefix: string): MediaReference[] {
  const references: MediaReference[] = [];
  const renditions = new Set<string>();
  for (const { path, image } of findImages(json)) {
    const sizes = image.sizes as Record<string, unknown>;
    for (const key of RENDITION_KEYS) {
      const size = sizes[key];
      if (typeof size !== 'object' || size === null || !sized(size as Record<string, unknown>)) continue;
      const { url, width, height } = size as { url: string; width: number; height: number };
      const at = formatPath([...path, 'sizes', key, 'url']);
      renditions.add(at);
      references.push({ path: at, url, size: { width, height } });
    }
  }
  const visit = (value: unknown, path: JsonPath, key: string | number | undefined): void => {
    if (typeof value === 'string') {
      if (key === 'srcset' || !underPrefix(value, mediaPrefix)) return;
      const at = formatPath(path);
      if (!renditions.has(at)) references.push({ path: at, url: value });
    } else if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) visit(item, [...path, i], i);
    } else if (typeof value === 'object' && value !== null) {
      const object = value as Record<string, unknown>;
      const at = formatPath([...path, 'url']);
      if (sized(object) && !renditions.has(at) && underPrefix(object.url as string, mediaPrefix)) {
        references.push({
          path: at,
          url: object.url as string,
          size: { width: object.width as number, height: object.height as number },
        });
        renditions.add(at);
      }
      for (const [name, child] of Object.entries(object)) visit(child, [...path, name], name);
    }
  };
  visit(json, ['$'], undefined);
  return references;
}
