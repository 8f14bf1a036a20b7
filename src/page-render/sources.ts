/**
 * Where each image group's pixels come from, best first: an original in the originals folder
 * whose name matches the group's stem (the naming rule read backwards); the original the
 * output folder's manifest says its renditions were made from, if that file is still there;
 * or else the largest rendition the page names, downloaded with the client's timeouts,
 * retries and size bound, from the API's own origin or one the user allowed.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import pLimit from 'p-limit';
import type { Dispatcher } from 'undici';
import { createDispatcher, fetchBytes, type HttpOptions } from '../client/http.js';
import { InvalidArgumentError, oneLine } from '../errors.js';
import { discoverOriginals, type Original } from '../renditions/discover.js';
import { openManifest } from '../renditions/manifest.js';
import { openStore } from '../storage/location.js';
import { isS3Url, parseS3Url, type S3Options } from '../storage/s3-url.js';
import type { MediaStore } from '../storage/store.js';
import type { ImageGroup } from './images.js';

export type SourceKind = 'original' | 'rendition';

export interface ResolvedGroup {
  group: ImageGroup;
  /** Further groups whose source turned out to be the same original file; rendered once, with `group`. */
  merged: ImageGroup[];
  kind: SourceKind;
  /** What `render` renders: the original file, or the downloaded rendition's bytes under its URL. */
  original: Original;
}

export interface UnresolvedGroup {
  group: ImageGroup;
  /** The file or URL that was tried, or the stem when nothing could be. */
  source: string;
  reason: string;
}

export interface ResolveOptions extends HttpOptions {
  /** A folder of originals, or `s3://bucket/prefix/`, searched recursively. */
  originals?: string | undefined;
  /** How to reach S3 for `s3://` locations. */
  s3?: S3Options | undefined;
  /** Base of root-relative rendition URLs, for downloads; its origin is one downloads may come from. */
  baseUrl?: string | undefined;
  /** Download the largest rendition when no original is found (default true). */
  download?: boolean;
  /** Further origins (`https://cdn.example.org`) that downloads may come from; others are refused. */
  downloadFrom?: string[] | undefined;
  /** The output folder: its manifest names earlier originals; it is left out of the originals folder. */
  outDir: string;
  /** Downloads at once (default 4). */
  downloadConcurrency?: number;
  /** Called after each download, done or failed. */
  onDownload?: (event: { done: number; total: number; url: string }) => void;
}

export interface Resolution {
  resolved: ResolvedGroup[];
  unresolved: UnresolvedGroup[];
  /** The buckets originals were found in: close them once rendered. */
  stores: MediaStore[];
}

export async function resolveSources(groups: ImageGroup[], options: ResolveOptions): Promise<Resolution> {
  const resolution: Resolution = { resolved: [], unresolved: [], stores: [] };
  const objects: Objects = new Map();
  const index = options.originals ? await indexOriginals(options.originals, options, objects, resolution.stores) : null;
  const rendered = await renderedFrom(
    groups.map((group) => group.stem),
    options,
    objects,
    resolution.stores,
  );
  const byFile = new Map<string, ResolvedGroup>();
  const toDownload: ImageGroup[] = [];
  // Where the page shows one stem in several formats (lake.max-*.jpg and lake.max-*.png),
  // each takes only an original of its own format: never one picture for the other.
  const perStem = new Map<string, number>();
  for (const group of groups) perStem.set(group.stem, (perStem.get(group.stem) ?? 0) + 1);
  for (const group of groups) {
    const strict = perStem.get(group.stem)! > 1;
    const match = index?.find(group.stem, group.ext, strict) ?? rendered.find(group.stem, group.ext, strict);
    if (match && 'ambiguous' in match) {
      const reason =
        `several originals in ${options.originals} are named '${path.posix.basename(group.stem)}' ` +
        `(${match.ambiguous.join(', ')}); keep one, or give each its own folder`;
      resolution.unresolved.push({ group, source: group.stem, reason });
    } else if (match) {
      // Two stems may find one original (by name, from different folders): render it once.
      const earlier = byFile.get(match.source);
      if (earlier) earlier.merged.push(group);
      else {
        const object = objects.get(match.source);
        const original = { source: match.source, stem: group.stem, ...(object && { object }) };
        byFile.set(match.source, { group, merged: [], kind: 'original', original });
      }
    } else {
      toDownload.push(group);
    }
  }
  resolution.resolved.push(...byFile.values());
  if (toDownload.length === 0) return resolution;

  if (options.download === false) {
    for (const group of toDownload) {
      const format = perStem.get(group.stem)! > 1 ? ` in its format (.${group.ext})` : '';
      const notFound = index
        ? `no original named '${path.posix.basename(group.stem)}'${format} in ${options.originals}`
        : 'no --originals folder given';
      resolution.unresolved.push({ group, source: group.stem, reason: `${notFound}, and downloads are off` });
    }
    return resolution;
  }
  const dispatcher = createDispatcher(options);
  try {
    const limit = pLimit(options.downloadConcurrency ?? 4);
    let done = 0;
    const outcomes = await Promise.all(
      toDownload.map((group) =>
        limit(async () => {
          const outcome = await download(group, dispatcher, options);
          options.onDownload?.({ done: ++done, total: toDownload.length, url: group.largest.url });
          return outcome;
        }),
      ),
    );
    for (const outcome of outcomes) {
      if ('reason' in outcome) resolution.unresolved.push(outcome);
      else resolution.resolved.push(outcome);
    }
  } finally {
    await dispatcher.close();
  }
  return resolution;
}

async function download(
  group: ImageGroup,
  dispatcher: Dispatcher,
  options: ResolveOptions,
): Promise<ResolvedGroup | UnresolvedGroup> {
  const url = downloadUrl(group.largest.url, options);
  if (!url.ok) return { group, source: url.href ?? group.largest.url, reason: url.reason };
  try {
    const data = await fetchBytes(url.href, dispatcher, options);
    return { group, merged: [], kind: 'rendition', original: { source: url.href, stem: group.stem, data } };
  } catch (error) {
    return { group, source: url.href, reason: oneLine(error).replace(`${url.href}: `, '') };
  }
}

/**
 * The URL a rendition is downloaded from: root-relative URLs against the base URL; only
 * http(s), and only from the base URL's origin or one in `downloadFrom`, so a page cannot
 * make the tool fetch from hosts the user did not name.
 */
function downloadUrl(
  url: string,
  options: ResolveOptions,
): { ok: true; href: string } | { ok: false; href?: string; reason: string } {
  const { baseUrl } = options;
  let parsed: URL;
  try {
    parsed = baseUrl ? new URL(url, baseUrl) : new URL(url);
  } catch {
    return { ok: false, reason: baseUrl ? 'not a valid URL' : 'a relative URL, and no --base-url to download it from' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return { ok: false, reason: `not downloaded: only http and https URLs are, and this one is ${parsed.protocol}` };
  const allowed = [...(baseUrl ? [new URL(baseUrl).origin] : []), ...(options.downloadFrom ?? [])];
  if (!allowed.includes(parsed.origin)) {
    const api = baseUrl
      ? `the API's origin (${new URL(baseUrl).origin})`
      : 'an origin downloads may come from (no --base-url)';
    return {
      ok: false,
      href: parsed.href,
      reason: `not downloaded: ${parsed.origin} is not ${api}; allow it with --download-from ${parsed.origin}`,
    };
  }
  return { ok: true, href: parsed.href };
}

type Match = { source: string } | { ambiguous: string[] };

/** Extensions that name one format: `jpeg` and `jpe` are `jpg`, `tiff` is `tif`. */
const SAME_FORMAT = new Map([
  ['jpeg', 'jpg'],
  ['jpe', 'jpg'],
  ['tiff', 'tif'],
]);
const sameFormat = (ext: string) => SAME_FORMAT.get(ext) ?? ext;

/**
 * One candidate, or, among several, the only one with the renditions' extension; else
 * ambiguous. `strict`: only candidates with the renditions' extension count at all.
 */
function pick(sources: string[] | undefined, ext: string, strict: boolean): Match | null {
  const sameExt = (sources ?? []).filter(
    (source) => sameFormat(path.extname(source).slice(1).toLowerCase()) === sameFormat(ext),
  );
  const candidates = strict ? sameExt : (sources ?? []);
  if (candidates.length <= 1) return candidates[0] ? { source: candidates[0] } : null;
  return sameExt.length === 1 ? { source: sameExt[0]! } : { ambiguous: candidates };
}

/** Originals in buckets, by their `s3://` URL. */
type Objects = Map<string, NonNullable<Original['object']>>;

/**
 * The originals the output folder's manifest says earlier runs rendered, by stem, where the
 * file or object is still there (not renditions of a download, whose source is an http URL):
 * the one whose renditions have the extension the page names, or the only one.
 */
async function renderedFrom(
  stems: string[],
  options: ResolveOptions,
  objects: Objects,
  stores: MediaStore[],
): Promise<{ find(stem: string, ext: string, strict: boolean): Match | null }> {
  const out = await openStore(options.outDir, options.s3);
  const entries = await openManifest(out)
    .then((manifest) => manifest.entriesFor(stems))
    .catch(() => ({}))
    .finally(() => out.close());
  const buckets = new Map<string, MediaStore>();
  const byStem = new Map<string, Array<{ ext: string; source: string }>>();
  for (const [key, entry] of Object.entries(entries)) {
    if (isS3Url(entry.source)) {
      const { bucket, prefix } = parseS3Url(entry.source.slice(0, entry.source.lastIndexOf('/') + 1));
      let store = buckets.get(bucket);
      if (!store) {
        store = await openStore(`s3://${bucket}/`, options.s3);
        buckets.set(bucket, store);
      }
      const name = prefix + entry.source.slice(entry.source.lastIndexOf('/') + 1);
      const found = await store.stat(name).catch(() => null);
      if (!found) continue;
      objects.set(entry.source, { store, key: name, stamp: found.stamp });
    } else if (!path.isAbsolute(entry.source) || !(await isFile(entry.source))) continue;
    const ext = path.posix.extname(key);
    const stem = key.slice(0, key.length - ext.length);
    byStem.set(stem, [...(byStem.get(stem) ?? []), { ext: ext.slice(1), source: entry.source }]);
  }
  stores.push(...buckets.values());
  return {
    find(stem, ext, strict) {
      const earlier = byStem.get(stem) ?? [];
      const match =
        earlier.length === 1 && !strict ? earlier[0] : earlier.find((entry) => entry.ext === sameFormat(ext));
      return match ? { source: match.source } : null;
    },
  };
}

const isFile = (file: string) =>
  stat(file).then(
    (info) => info.isFile(),
    () => false,
  );

/**
 * The originals of a folder or bucket prefix, found by stem (`landscapes/storm`) or, failing
 * that, by name (`storm`).
 */
async function indexOriginals(
  folder: string,
  options: ResolveOptions,
  objects: Objects,
  stores: MediaStore[],
): Promise<{ find(stem: string, ext: string, strict: boolean): Match | null }> {
  if (!isS3Url(folder)) {
    const info = await stat(folder).catch(() => null);
    if (!info?.isDirectory())
      throw new InvalidArgumentError(`--originals ${folder}: ${info ? 'is a file, not a folder' : 'no such folder'}`);
  }
  const discovered = await discoverOriginals([folder], options.outDir, options.s3);
  stores.push(...discovered.stores);
  const byStem = new Map<string, string[]>();
  const byName = new Map<string, string[]>();
  for (const original of discovered.originals) {
    if (original.object) objects.set(original.source, original.object);
    for (const [map, key] of [
      [byStem, original.stem],
      [byName, path.posix.basename(original.stem)],
    ] as const) {
      map.set(key, [...(map.get(key) ?? []), original.source]);
    }
  }
  return {
    find: (stem, ext, strict) =>
      pick(byStem.get(stem), ext, strict) ?? pick(byName.get(path.posix.basename(stem)), ext, strict),
  };
}
