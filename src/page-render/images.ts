/**
 * The images of a page, grouped by the files they show. An Image's source is named by its
 * rendition URLs: the largest rendition's path under the media folder, its file name read
 * backwards by the naming rule, gives `<folders>/<name>` and an extension. Images whose
 * renditions are the same files (same path, name and extension, whatever the size suffix or
 * host) share a source and are rendered once; `lake.max-*.jpg` and `lake.max-*.png` do not.
 */
import path from 'node:path';
import { type FoundImage, findImages, formatPath, type JsonPath } from '../page/walk.js';
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
  /** The extension of the renditions the page names, lower-cased (`jpg`); `''` when they have none. */
  ext: string;
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
    const named = largest && sourceOf(largest.url, mediaUrl);
    if (!largest || !named) {
      const reason = largest
        ? `cannot read a file path from the URL ${largest.url}`
        : 'no rendition with a url, width and height to name its source';
      unusable.push({ path: found.path, reason });
      continue;
    }
    const group = groups.get(named.key);
    if (group) group.images.push(found);
    else groups.set(named.key, { stem: named.stem, ext: named.ext, images: [found], largest });
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
 * `/media/landscapes/Storm.max-4800x4800.jpg` -> stem `landscapes/storm`, ext `jpg`: the
 * folders below the media folder and the `<name>` of the file name, each made safe as
 * `render` makes them. A file name that follows neither naming style gives its name without
 * the extension. `key` is the same without the safe-making: what tells the files apart.
 */
function sourceOf(url: string, mediaUrl: string): { key: string; stem: string; ext: string } | null {
  const relative = mediaPath(url, mediaUrl);
  if (relative === null) return null;
  const segments = relative.split('/').filter((segment) => segment !== '');
  const file = segments.pop();
  if (!file) return null;
  const parsed = parseRenditionFileName(file);
  const name = parsed?.name ?? path.posix.parse(file).name;
  const ext = (parsed?.ext ?? path.posix.extname(file).slice(1)).toLowerCase();
  return { key: `${[...segments, name].join('/')}.${ext}`, stem: [...segments, name].map(safeName).join('/'), ext };
}
