/**
 * The files of earlier renderings of an original that its outputs no longer write (another naming,
 * a format no longer listed): found from its records, kept and named in its new records, or removed
 * with `prune`.
 */
import { stat } from 'node:fs/promises';
import { oneLine, SourceError } from '../errors.js';
import { isS3Url } from '../storage/s3-url.js';
import type { MediaStore } from '../storage/store.js';
import type { Manifest, ManifestEntry, RecordSummary } from './manifest.js';
import { type Output, outputsOf, type Plan } from './plan.js';
import { RENDITION_KEYS } from './rules.js';

type Renditions = ManifestEntry['renditions'];

/** The files an entry names: its renditions, and those of earlier renderings kept under its key. */
const namedBy = (entry: ManifestEntry) => [
  ...Object.values(entry.renditions).map((file) => file.path),
  ...(entry.kept ?? []),
];

/** The files the manifest's renderings of `source` wrote (and kept) that none of `outputs` writes. */
export function staleFiles(recorded: Record<string, RecordSummary>, source: string, outputs: Output[]): string[] {
  // No set, no array of the files written: a few files each, for every original of a rerun.
  const stale: string[] = [];
  const consider = (file: string) => {
    if (stale.includes(file)) return;
    for (const output of outputs) for (const key of RENDITION_KEYS) if (output.files[key].path === file) return;
    stale.push(file);
  };
  for (const entry of Object.values(recorded)) {
    if (entry.source !== source) continue;
    for (const key of RENDITION_KEYS) consider(entry.renditions[key].path);
    for (const file of entry.kept ?? []) consider(file);
  }
  return stale.sort();
}

/**
 * Without `prune`, the files an output's earlier record named that its new renditions do not (another
 * naming), for its new record to keep naming: a later `--prune` finds them there.
 */
export function keptFrom(
  previous: ManifestEntry | undefined,
  renditions: Renditions,
  prune: boolean,
): { kept?: string[] } {
  if (!previous || prune) return {};
  const written = new Set(Object.values(renditions).map((file) => file.path));
  const kept = [...new Set(namedBy(previous))].filter((file) => !written.has(file)).sort();
  return kept.length > 0 ? { kept } : {};
}

/**
 * Whether an original recorded earlier is still there: a file that exists, or any object in a
 * bucket (not looked up).
 */
export const stillThere = (source: string) =>
  isS3Url(source)
    ? Promise.resolve(true)
    : stat(source).then(
        (info) => info.isFile(),
        () => false,
      );

/**
 * With `prune`: removes the files of earlier renderings of this original that none of its outputs
 * writes now, and forgets their records (another key: another format, or a format no longer listed).
 */
export async function removeStale(
  { store, manifest }: { store: MediaStore; manifest: Manifest },
  plan: Plan,
  recorded: Record<string, ManifestEntry>,
  stale: string[],
  source: string,
): Promise<void> {
  const keys = new Set(outputsOf(plan).map((output) => output.key));
  try {
    for (const old of stale) await store.remove(old);
    for (const [oldKey, entry] of Object.entries(recorded)) {
      if (entry.source !== source) continue;
      // (A key still written stops naming them in `refresh`, or is rewritten without them.)
      if (!keys.has(oldKey)) await manifest.delete(oldKey);
    }
  } catch (error) {
    throw new SourceError(
      'CONTENT_API_RENDER_FAILED',
      plan.original.source,
      `rendered, but an earlier rendering's files could not be removed (${oneLine(error)})`,
      { cause: error },
    );
  }
}
