/**
 * The images of a page, grouped by the files they show. An Image's source is named by its
 * rendition URLs: the largest rendition's path under the media folder, its file name read
 * backwards by the naming rule, gives `<folders>/<name>` and an extension. Images whose
 * renditions are the same files (same path, name and extension, whatever the size suffix or
 * host) share a source and are rendered once; `lake.max-*.jpg` and `lake.max-*.png` do not.
 *
 * Every other `{url, width, height}` object that `check --verify-files` verifies (a Social/SEO
 * `meta.thumb`) is tied to a source the same way, and to one rendition key by the size box in
 * its file name: it joins the Images of that source, or is a source of its own.
 */
import path from 'node:path';
import { mediaReferences } from '../check/media.js';
import { type FoundImage, findImages, findObjects, formatPath, type JsonPath } from '../page/walk.js';
import {
  mediaPath,
  parseRenditionFileName,
  RENDITION_BOXES,
  RENDITION_KEYS,
  type RenditionKey,
  safeName,
} from '../renditions/rules.js';

/** A rendition the page names for an image, with its pixel size as the page gives it. */
export interface NamedRendition {
  key: string;
  url: string;
  width: number;
  height: number;
}

/**
 * A `{url, width, height}` object outside the Images that names one rendition of a source
 * (`meta.thumb`): rewritten to that rendition, as the Images are to theirs.
 */
export interface SizedReference {
  /** Where the object is: `$.meta.thumb`. */
  path: JsonPath;
  /** The object as the page has it. */
  value: Record<string, unknown>;
  /** The rendition its file name's size box names (`.max-1200x1200.` is `md`). */
  key: RenditionKey;
  url: string;
  width: number;
  height: number;
}

export interface ImageGroup {
  /** Where the renditions go under the output folder: `landscapes/storm`. */
  stem: string;
  /** The extension of the renditions the page names, lower-cased (`jpg`); `''` when they have none. */
  ext: string;
  /** Every Image that shows this source, in page order; none where only references name it. */
  images: FoundImage[];
  /** Every sized reference outside the Images that names one of its renditions, in page order. */
  references: SizedReference[];
  /**
   * The largest rendition the page names for it (of the first image, or else the largest
   * reference): the fallback source.
   */
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
  /** Sized references that name no rendition of ours (no size box in the file name): left as they are. */
  unusableReferences: UnusableImage[];
}

/**
 * Finds every Image in `json` and groups them by stem, then adds each sized reference to the
 * group of its source, or to a group of its own; `mediaUrl` is the media folder's URL prefix.
 */
export function groupPageImages(json: unknown, mediaUrl: string): PageImages {
  const groups = new Map<string, ImageGroup>();
  const unusable: UnusableImage[] = [];
  const imagePaths: string[] = [];
  for (const found of findImages(json)) {
    imagePaths.push(formatPath(found.path));
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
    else groups.set(named.key, { stem: named.stem, ext: named.ext, images: [found], references: [], largest });
  }
  const unusableReferences: UnusableImage[] = [];
  for (const reference of sizedReferences(json, mediaUrl, insidePaths(imagePaths))) {
    const named = sourceOf(reference.url, mediaUrl);
    const key = named && RENDITION_KEYS.find((k) => RENDITION_BOXES[k] === named.box);
    if (!named || !key) {
      const reason = named
        ? `${named.file} names no rendition: its name has no size box (.max-<n>x<n>. or _<n>x<n>., ` +
          `n one of ${Object.values(RENDITION_BOXES).join(', ')}); left as it is`
        : `cannot read a file path from the URL ${reference.url}; left as it is`;
      unusableReferences.push({ path: reference.path, reason });
      continue;
    }
    const sized = { ...reference, key };
    const group = groups.get(named.key);
    if (!group) {
      const { url, width, height } = sized;
      const largest = { key, url, width, height };
      groups.set(named.key, { stem: named.stem, ext: named.ext, images: [], references: [sized], largest });
      continue;
    }
    group.references.push(sized);
    // A source that only references name is downloaded, when it must be, as the largest of them.
    if (group.images.length === 0 && sized.width * sized.height > group.largest.width * group.largest.height) {
      const { url, width, height } = sized;
      group.largest = { key, url, width, height };
    }
  }
  return { groups: [...groups.values()], unusable, unusableReferences };
}

/** The JSON paths of a group's images, then of its references, formatted (`$.presentation_stage.thumbnail`). */
export function groupPaths(group: ImageGroup): string[] {
  return [...group.images, ...group.references].map((found) => formatPath(found.path));
}

/** Whether a formatted JSON path is one of `paths` or inside one. */
export function insidePaths(paths: string[]): (at: string) => boolean {
  return (at) => paths.some((image) => at === image || at.startsWith(`${image}.`) || at.startsWith(`${image}[`));
}

/**
 * The `{url, width, height}` objects outside the Images that `check --verify-files` verifies
 * (its `mediaReferences`: under the media URL prefix), with their JSON paths.
 */
function sizedReferences(
  json: unknown,
  mediaUrl: string,
  inImage: (at: string) => boolean,
): Array<Omit<SizedReference, 'key'>> {
  const objects = new Map<string, { path: JsonPath; value: Record<string, unknown> }>();
  for (const found of findObjects(json)) objects.set(formatPath([...found.path, 'url']), found);
  return mediaReferences(json, mediaUrl).flatMap((reference) => {
    const found = objects.get(reference.path);
    if (!reference.size || !found || inImage(reference.path)) return [];
    return [{ path: found.path, value: found.value, url: reference.url, ...reference.size }];
  });
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
 * `/media/landscapes/Storm.max-4800x4800.jpg` -> stem `landscapes/storm`, ext `jpg`, box 4800:
 * the folders below the media folder and the `<name>` of the file name, each made safe as
 * `render` makes them. A file name that follows neither naming style gives its name without
 * the extension, and no box. `key` is the same without the safe-making: what tells the files apart.
 */
function sourceOf(
  url: string,
  mediaUrl: string,
): { key: string; stem: string; ext: string; file: string; box: number | null } | null {
  const relative = mediaPath(url, mediaUrl);
  if (relative === null) return null;
  const segments = relative.split('/').filter((segment) => segment !== '');
  const file = segments.pop();
  if (!file) return null;
  const parsed = parseRenditionFileName(file);
  const name = parsed?.name ?? path.posix.parse(file).name;
  const ext = (parsed?.ext ?? path.posix.extname(file).slice(1)).toLowerCase();
  const stem = [...segments, name].map(safeName).join('/');
  return { key: `${[...segments, name].join('/')}.${ext}`, stem, ext, file, box: parsed?.box ?? null };
}
