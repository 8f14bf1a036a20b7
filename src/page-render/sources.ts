/**
 * Where each image group's pixels come from: an original in the originals folder whose
 * name matches the group's stem (the naming rule read backwards), or else the largest
 * rendition the page names, downloaded with the client's timeouts, retries and size bound.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import pLimit from 'p-limit';
import type { Dispatcher } from 'undici';
import { InvalidArgumentError, oneLine } from '../errors.js';
import { createDispatcher, fetchBytes, type HttpOptions } from '../client/http.js';
import { discoverOriginals, type Original } from '../renditions/discover.js';
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
  /** A folder of originals, searched recursively. */
  originals?: string | undefined;
  /** Base of root-relative rendition URLs, for downloads. */
  baseUrl?: string | undefined;
  /** Download the largest rendition when no original is found (default true). */
  download?: boolean;
  /** The output folder, left out of the originals folder when it is inside it. */
  outDir: string;
  /** Downloads at once (default 4). */
  downloadConcurrency?: number;
  /** Called after each download, done or failed. */
  onDownload?: (event: { done: number; total: number; url: string }) => void;
}

export interface Resolution {
  resolved: ResolvedGroup[];
  unresolved: UnresolvedGroup[];
}

export async function resolveSources(groups: ImageGroup[], options: ResolveOptions): Promise<Resolution> {
  const index = options.originals ? await indexOriginals(options.originals, options.outDir) : null;
  const resolution: Resolution = { resolved: [], unresolved: [] };
  const byFile = new Map<string, ResolvedGroup>();
  const toDownload: ImageGroup[] = [];
  for (const group of groups) {
    const match = index?.find(group.stem);
    if (match && 'ambiguous' in match) {
      const reason = `several originals in ${options.originals} are named '${path.posix.basename(group.stem)}' (${match.ambiguous.join(', ')}); keep one, or give each its own folder`;
      resolution.unresolved.push({ group, source: group.stem, reason });
    } else if (match) {
      // Two stems may find one original (by name, from different folders): render it once.
      const earlier = byFile.get(match.source);
      if (earlier) earlier.merged.push(group);
      else byFile.set(match.source, { group, merged: [], kind: 'original', original: { source: match.source, stem: group.stem } });
    } else {
      toDownload.push(group);
    }
  }
  resolution.resolved.push(...byFile.values());
  if (toDownload.length === 0) return resolution;

  if (options.download === false) {
    for (const group of toDownload) {
      const notFound = index ? `no original named '${path.posix.basename(group.stem)}' in ${options.originals}` : 'no --originals folder given';
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

async function download(group: ImageGroup, dispatcher: Dispatcher, options: ResolveOptions): Promise<ResolvedGroup | UnresolvedGroup> {
  const url = absoluteUrl(group.largest.url, options.baseUrl);
  if (!url.ok) return { group, source: group.largest.url, reason: url.reason };
  try {
    const data = await fetchBytes(url.href, dispatcher, options);
    return { group, merged: [], kind: 'rendition', original: { source: url.href, stem: group.stem, data } };
  } catch (error) {
    return { group, source: url.href, reason: oneLine(error).replace(`${url.href}: `, '') };
  }
}

function absoluteUrl(url: string, baseUrl: string | undefined): { ok: true; href: string } | { ok: false; reason: string } {
  let parsed: URL;
  try {
    parsed = baseUrl ? new URL(url, baseUrl) : new URL(url);
  } catch {
    return { ok: false, reason: baseUrl ? 'not a valid URL' : 'a relative URL, and no --base-url to download it from' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { ok: false, reason: `not downloaded: only http and https URLs are, and this one is ${parsed.protocol}` };
  return { ok: true, href: parsed.href };
}

type Match = { source: string } | { ambiguous: string[] };

/** The originals of a folder, found by stem (`landscapes/storm`) or, failing that, by name (`storm`). */
async function indexOriginals(folder: string, outDir: string): Promise<{ find(stem: string): Match | null }> {
  const info = await stat(folder).catch(() => null);
  if (!info?.isDirectory()) throw new InvalidArgumentError(`--originals ${folder}: ${info ? 'is a file, not a folder' : 'no such folder'}`);
  const { originals } = await discoverOriginals([folder], outDir);
  const byStem = new Map<string, string[]>();
  const byName = new Map<string, string[]>();
  for (const original of originals) {
    for (const [map, key] of [[byStem, original.stem], [byName, path.posix.basename(original.stem)]] as const) {
      map.set(key, [...(map.get(key) ?? []), original.source]);
    }
  }
  const pick = (sources: string[] | undefined): Match | null =>
    !sources ? null : sources.length === 1 ? { source: sources[0]! } : { ambiguous: sources };
  return { find: (stem) => pick(byStem.get(stem)) ?? pick(byName.get(path.posix.basename(stem))) };
}
