/**
 * The images of a page, grouped by the original they were rendered from. An Image's source
 * is named by its rendition URLs: the largest rendition's path under the media folder, its
 * file name read backwards by the naming rule, gives `<folders>/<name>` (the stem). Images
 * with the same stem share a source and are rendered once.
 */
import path from 'node:path';
import { findImages, formatPath, type FoundImage, type JsonPath } from '../page/walk.js';
import { mediaPath, parseRenditionFileName, safeName } from '../renditions/rules.js';

/** A rendition the page names for an image, with its pixel size as the page gives it. */
export interface NamedRendition {
  key: string;
  url: string;
  width: number;
  height: number;
}

export interface ImageGroup {
  /** Where the renditions go under the output folder: `landscapes/storm`. */
  stem: string;
  /** Every Image that shows this source, in page order. */
  images: FoundImage[];
  /** The largest rendition the page names for it (of the first image): the fallback source. */
  largest: NamedRendition;
}

export interface UnusableImage {
  path: JsonPath;
  reason: string;
}

export interface PageImages {
  groups: ImageGroup[];
  /** Images whose source cannot be named: no rendition with a URL and a pixel size. */
  unusable: UnusableImage[];
}

/** Finds every Image in `json` and groups them by stem; `mediaUrl` is the media folder's URL prefix. */
export function groupPageImages(json: unknown, mediaUrl: string): PageImages {
  const groups = new Map<string, ImageGroup>();
  const unusable: UnusableImage[] = [];
  for (const found of findImages(json)) {
    const largest = largestRendition(found.image.sizes);
    const stem = largest && stemOf(largest.url, mediaUrl);
    if (!largest || !stem) {
      const reason = largest ? `cannot read a file path from the URL ${largest.url}` : 'no rendition with a url, width and height to name its source';
      unusable.push({ path: found.path, reason });
      continue;
    }
    const group = groups.get(stem);
    if (group) group.images.push(found);
    else groups.set(stem, { stem, images: [found], largest });
  }
  return { groups: [...groups.values()], unusable };
}

/** The JSON paths of a group's images, formatted (`$.presentation_stage.thumbnail`). */
export function groupPaths(group: ImageGroup): string[] {
  return group.images.map((image) => formatPath(image.path));
}

function largestRendition(sizes: unknown): NamedRendition | null {
  let best: NamedRendition | null = null;
  for (const [key, entry] of Object.entries((sizes ?? {}) as Record<string, unknown>)) {
    const { url, width, height } = (entry ?? {}) as Record<string, unknown>;
    if (typeof url !== 'string' || url === '' || !Number.isInteger(width) || !Number.isInteger(height)) continue;
    const candidate = { key, url, width: width as number, height: height as number };
    if (!best || candidate.width * candidate.height >= best.width * best.height) best = candidate;
  }
  return best;
}

/**
 * `/media/landscapes/Storm.max-4800x4800.jpg` -> `landscapes/storm`: the folders below the
 * media folder and the `<name>` of the file name, each made safe as `render` makes them. A
 * file name that follows neither naming style gives its name without the extension.
 */
function stemOf(url: string, mediaUrl: string): string | null {
  const relative = mediaPath(url, mediaUrl);
  if (relative === null) return null;
  const segments = relative.split('/').filter((segment) => segment !== '');
  const file = segments.pop();
  if (!file) return null;
  const name = parseRenditionFileName(file)?.name ?? path.posix.parse(file).name;
  return [...segments, name].map(safeName).join('/');
}
