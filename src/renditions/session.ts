/**
 * An output location open for rendering, and a batch rendered in it: each original planned,
 * then rendered (render-one.ts) at most `concurrency` at once, each failing alone.
 */
import path from 'node:path';
import pLimit from 'p-limit';
import sharp from 'sharp';
import { ContentApiError, oneLine, SourceError } from '../errors.js';
import { sweepStaleTempsIn } from '../fs/atomic.js';
import { isInside } from '../fs/paths.js';
import { LocalStore } from '../storage/local.js';
import { openStore } from '../storage/location.js';
import { sweepSpools } from '../storage/spool.js';
import { type MediaStore, sameStamp } from '../storage/store.js';
import { Claims } from './claims.js';
import type { Original } from './discover.js';
import { type Manifest, type ManifestEntry, openManifest, readManifest } from './manifest.js';
import { type RenderOptions, type RenderProgress, resolveConcurrency } from './options.js';
import type { SourceInfo } from './pipeline.js';
import { type Plan, planOriginal, splitCollisions } from './plan.js';
import { type Context, type RenderResult, renderOne, unrecorded } from './render-one.js';
import { type RenderSettings, resolveSettings } from './settings.js';

/**
 * An output location open for rendering: its store, manifest and claims, with the temporary
 * files of interrupted runs swept once. A local run renders one batch in a session; a queue
 * worker keeps one per output location and settings, and renders each job's originals in it.
 */
export interface RenderSession {
  /** Renders these originals (with `failures` found before, reported with them) as one batch. */
  render(originals: Original[], failures?: SourceError[]): Promise<Batch>;
  close(): Promise<void>;
}

/** What `RenderSession.render` returns: `RenderReport` with the failures as errors, to be thrown or reported. */
export interface Batch {
  results: RenderResult[];
  errors: SourceError[];
  warnings: string[];
  notStarted: string[];
}

/** Opens `options.outDir` for rendering with `settings` (see `resolveSettings`). */
export async function openRenderSession(
  options: RenderOptions,
  settings: RenderSettings = resolveSettings(options),
): Promise<RenderSession> {
  const concurrency = resolveConcurrency(options.concurrency);
  const store = await openStore(options.outDir, options.s3);
  try {
    await store.open({ write: !options.dryRun, create: options.createOutDir ?? true });
    const manifest = await openManifest(store);
    // Runs at once into one folder decide collisions on the files as they are now (claims.ts).
    const claims = store instanceof LocalStore && !options.dryRun ? new Claims(path.resolve(store.location)) : null;
    // Said once, in the first batch's report.
    const opened = manifest.warning;
    let pending: string[] = opened ? [opened] : [];
    let opening = true;
    return {
      async render(originals, failures = []) {
        const warnings = pending;
        pending = [];
        // Every batch, not only the first: a worker killed mid-job (its temporaries left in the
        // folders this job writes) is swept by the next worker that runs it, or a job like it.
        if (!options.dryRun) warnings.push(...(await sweep(store, claims, originals, opening, options.signal)));
        opening = false;
        const open = { options, settings, store, manifest, claims };
        return renderInto(open, concurrency, originals, failures, warnings, opened);
      },
      close: () => store.close(),
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/**
 * Removes what interrupted runs left: temporary files, copies of bucket objects (if any is
 * read), dead claims (the last two when the session opens). In a local folder, only where a run
 * writes temporaries is looked at: the folder itself (the manifest), the folders of these
 * originals' renditions and, when the session opens, every folder the manifest records
 * renditions in; never the whole tree, which may be `/` or `/proc`. A temporary file is
 * removed only when its writer is gone (atomic.ts): a live run's, here or elsewhere, stays.
 */
async function sweep(
  store: MediaStore,
  claims: Claims | null,
  originals: Original[],
  opening: boolean,
  signal: AbortSignal | undefined,
): Promise<string[]> {
  const warnings: string[] = [];
  let swept = 0;
  if (store instanceof LocalStore) {
    const folders = await tempFolders(path.resolve(store.location), originals, opening);
    swept += (await sweepStaleTempsIn(folders, { signal })).length;
  } else if (opening) swept += await store.sweep();
  if (opening && originals.some((original) => original.object)) swept += await sweepSpools();
  if (swept > 0) warnings.push(`removed ${swept} temporary file(s) left by an interrupted run`);
  const released = opening ? ((await claims?.sweep()) ?? 0) : 0;
  if (released > 0) warnings.push(`released ${released} claim(s) left by an interrupted run`);
  return warnings;
}

/** The folders of a local output a batch of `originals` writes temporaries into (see `sweep`). */
async function tempFolders(root: string, originals: Original[], opening: boolean): Promise<string[]> {
  const keys = originals.map((original) => original.stem);
  if (opening) {
    const { entries } = await readManifest(root).catch(() => ({ entries: {} }));
    for (const entry of Object.values(entries)) keys.push(...Object.values(entry.renditions).map((r) => r.path));
  }
  const folders = new Set([root]);
  for (const key of keys) {
    const folder = path.join(root, path.dirname(key));
    if (isInside(folder, root)) folders.add(folder);
  }
  return [...folders];
}

async function renderInto(
  open: Pick<Context, 'options' | 'settings' | 'store' | 'manifest' | 'claims'>,
  concurrency: number,
  originals: Original[],
  failures: SourceError[],
  warnings: string[],
  /** The manifest's warning when the session opened, said already. */
  opened: string | undefined,
): Promise<Batch> {
  const { options, settings, manifest } = open;
  const errors: SourceError[] = [...failures];
  const limit = pLimit(concurrency);
  const entries = await manifest.entriesFor([...new Set(originals.map((original) => original.stem))]);
  if (manifest.warning && manifest.warning !== opened) warnings.push(manifest.warning);
  const recorded = new Map(Object.values(entries).map((entry) => [entry.source, entry]));
  const planned = await Promise.all(
    originals.map((original) =>
      limit(() =>
        planOriginal(original, settings, knownInfo(original, recorded, settings.pixelLimit)).catch((error: unknown) =>
          keep(errors, error),
        ),
      ),
    ),
  );
  const { plans, errors: collisions } = splitCollisions(planned.filter((plan) => plan !== undefined));
  errors.push(...collisions);

  // Read, never set: sharp's threads are the application's (the CLI's: src/cli/threads.ts).
  const context: Context = { ...open, entries, releases: [], warnings, threads: sharp.concurrency() };
  const tally: Tally = { results: [], errors, notStarted: [], active: [], done: 0 };
  const total = plans.length + errors.length;
  const progress: Progress = (source, status) =>
    options.onProgress?.({ done: tally.done, total, source, status, active: [...tally.active] });
  for (const error of errors) {
    tally.done++;
    progress(error.source, 'failed');
  }

  try {
    await renderAll(context, plans, limit, tally, progress);
    if (!options.dryRun) await flushManifest(manifest, plans, tally.results, errors);
  } finally {
    // A claim that cannot be removed (the folder turned read-only, say) must not cost the batch its
    // report: the next run into this folder takes it over, its writer being gone.
    const released = await Promise.allSettled(context.releases.map((release) => release()));
    const stuck = released.filter((outcome) => outcome.status === 'rejected');
    if (stuck.length > 0) {
      warnings.push(
        `${stuck.length} claim(s) in the output folder could not be removed (${oneLine(stuck[0]!.reason)}); ` +
          'the next run into it takes them over',
      );
    }
  }
  const bySource = (a: { source: string }, b: { source: string }) => a.source.localeCompare(b.source);
  return {
    results: tally.results.sort(bySource),
    errors: errors.sort(bySource),
    warnings,
    notStarted: tally.notStarted.sort(),
  };
}

/**
 * The header of an object in a bucket as recorded, while its listing says it is unchanged
 * (same stamp): planned without a read, so a rerun over an unchanged bucket reads no original.
 * (A local file's header is read: that costs one small read, and keeps every check as it was.)
 */
function knownInfo(
  original: Original,
  recorded: Map<string, ManifestEntry>,
  pixelLimit: number,
): SourceInfo | undefined {
  const entry = original.object && recorded.get(original.source);
  if (!entry?.info || !sameStamp(entry.stamp, original.object!.stamp)) return undefined;
  const { width, height } = entry.original;
  if (pixelLimit > 0 && width * height * entry.info.pages > pixelLimit) return undefined; // read it, to say by how much
  return { ...entry.info, size: entry.original };
}

/** Where a batch stands: what finished, what failed, what is under way, what never started. */
interface Tally {
  results: RenderResult[];
  errors: SourceError[];
  notStarted: string[];
  /** Sources under way, in the order they started. */
  active: string[];
  done: number;
}

type Progress = (source: string, status: RenderProgress['status']) => void;

/** Renders every plan, `limit` at a time, each failing alone; after an interruption, starts none. */
async function renderAll(
  context: Context,
  plans: Plan[],
  limit: ReturnType<typeof pLimit>,
  tally: Tally,
  progress: Progress,
): Promise<void> {
  await Promise.all(
    plans.map((plan) =>
      limit(async () => {
        const { source } = plan.original;
        if (context.options.signal?.aborted) {
          tally.notStarted.push(source);
          return;
        }
        tally.active.push(source);
        progress(source, 'started');
        let status: RenderProgress['status'] = 'failed';
        try {
          const result = await renderOne(context, plan);
          tally.results.push(result);
          status = result.status;
        } catch (error) {
          keep(tally.errors, error);
        }
        tally.active.splice(tally.active.indexOf(source), 1);
        tally.done++;
        progress(source, status);
      }),
    ),
  );
}

/**
 * Writes the manifest's last changes. When it cannot be written (a full disk, a read-only
 * folder), the originals rendered whose records are lost fail, saying so: their files are in
 * place, but the next run renders them again. The report is still complete.
 */
async function flushManifest(
  manifest: Manifest,
  plans: Plan[],
  results: RenderResult[],
  errors: SourceError[],
): Promise<void> {
  try {
    await manifest.flush();
  } catch (error) {
    if (!(error instanceof ContentApiError)) throw error;
    const lost = new Set(manifest.unwritten().map((key) => plans.find((plan) => plan.key === key)?.original.source));
    for (const [index, result] of [...results.entries()].reverse()) {
      if (result.status !== 'rendered' || !lost.has(result.source)) continue;
      results.splice(index, 1);
      errors.push(unrecorded(result.source, error));
    }
  }
}

/** Collects a SourceError; anything else is a bug or a batch-wide failure and propagates. */
function keep(errors: SourceError[], error: unknown): undefined {
  if (!(error instanceof SourceError)) throw error;
  errors.push(error);
  return undefined;
}
