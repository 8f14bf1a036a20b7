/**
 * An output location open for rendering, and a batch rendered in it: each original planned,
 * then rendered (render-one.ts) at most `concurrency` at once, each failing alone.
 */
import path from 'node:path';
import pLimit from 'p-limit';
import { oneLine, SourceError } from '../errors.js';
import { sweepStaleTempsIn } from '../fs/atomic.js';
import { isInside } from '../fs/paths.js';
import { walkFolders } from '../fs/walk.js';
import { sharp } from '../packages/sharp.js';
import { ScorePool } from '../quality/score-pool.js';
import { LocalStore } from '../storage/local.js';
import { openStore } from '../storage/location.js';
import { sweepSpools } from '../storage/spool.js';
import { type MediaStore, type Stamp, sameStamp } from '../storage/store.js';
import { Claims } from './claims.js';
import type { SourceInfo } from './decode.js';
import type { Original } from './discover.js';
import { MANIFEST_RECORDS, type ManifestEntry, openManifest, type RecordSummary, stemOfKey } from './manifest.js';
import { type RenderOptions, type RenderProgress, resolveConcurrency } from './options.js';
import { type Plan, planOriginal, splitCollisions } from './plan.js';
import { type Context, renderOne } from './render-one.js';
import { count, type RenderCounts, type RenderResult, zeroCounts } from './result.js';
import { qualityTarget, type RenderSettings, resolveSettings } from './settings.js';
import { type Stamped, stampOf } from './source-bytes.js';
import { skippedUnchanged, skipsBySummary } from './up-to-date.js';

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
  /** Originals by how they ended, and files of earlier renderings removed and kept: kept when results are not. */
  counts: RenderCounts;
}

/** Opens `options.outDir` for rendering with `settings` (see `resolveSettings`). */
export async function openRenderSession(
  options: RenderOptions,
  settings: RenderSettings = resolveSettings(options),
): Promise<RenderSession> {
  const concurrency = resolveConcurrency(options.concurrency);
  // The batch's own pool when the caller gave none and the settings search: closed with the session.
  const searches = qualityTarget(settings.quality.mode) !== null;
  const owned = searches && !options.scorePool ? new ScorePool() : undefined;
  const scores = searches ? (options.scorePool ?? owned) : undefined;
  const store = await openStore(options.outDir, options.s3);
  try {
    await store.open({ write: !options.dryRun, create: options.createOutDir ?? true });
    const manifest = await openManifest(store, { migrate: !options.dryRun, index: !options.dryRun });
    // Runs at once into one folder decide collisions on the files as they are now (claims.ts).
    const claims =
      store instanceof LocalStore && !options.dryRun
        ? new Claims(path.resolve(store.location), (key) => manifest.entry(key))
        : null;
    // Said once, in the first batch's report.
    const opened = manifest.warning;
    let pending: string[] = opened ? [opened] : [];
    let opening = true;
    return {
      async render(originals, failures = []) {
        const warnings = pending;
        pending = [];
        manifest.refresh();
        // Every batch, not only the first: a worker killed mid-job (its temporaries left in the
        // folders this job writes) is swept by the next worker that runs it, or a job like it.
        if (!options.dryRun) warnings.push(...(await sweep(store, claims, originals, opening, options.signal)));
        opening = false;
        const open = { options, settings, store, manifest, claims, scores };
        return renderInto(open, concurrency, originals, failures, warnings, opened);
      },
      close: () => Promise.all([store.close(), owned?.close()]).then(() => undefined),
    };
  } catch (error) {
    await Promise.all([store.close(), owned?.close()]);
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

/**
 * The folders of a local output a batch of `originals` writes temporaries into (see `sweep`):
 * their renditions' and records' folders, and, when the session opens, every folder holding
 * records and so renditions (a key's records folder mirrors its renditions' folder).
 */
async function tempFolders(root: string, originals: Original[], opening: boolean): Promise<string[]> {
  const records = path.join(root, MANIFEST_RECORDS);
  const folders = new Set([root, records]);
  const add = (folder: string) => {
    if (isInside(folder, root)) folders.add(folder);
  };
  for (const folder of new Set(originals.map((original) => path.dirname(original.stem)))) {
    add(path.join(root, folder));
    add(path.join(records, folder));
  }
  if (opening) {
    for await (const folder of walkFolders(records, { followLinks: false, onUnreadable: () => {} })) {
      add(path.join(root, folder));
      add(path.join(records, folder));
    }
  }
  return [...folders];
}

/**
 * Originals planned and rendered together: their records are read at once, and a batch of any
 * size holds no more than this many plans and records (each original's result is the caller's).
 */
const CHUNK = 256;

/**
 * `originals` by stem, in chunks of about `CHUNK` that never split a stem: originals that would
 * write the same key share a stem (plan.ts `splitCollisions`), so each chunk sees its collisions.
 */
function* chunksByStem(originals: Original[]): Generator<Original[]> {
  const sorted = [...originals].sort((a, b) => (a.stem < b.stem ? -1 : a.stem > b.stem ? 1 : 0));
  let chunk: Original[] = [];
  for (const original of sorted) {
    if (chunk.length >= CHUNK && chunk.at(-1)!.stem !== original.stem) {
      yield chunk;
      chunk = [];
    }
    chunk.push(original);
  }
  if (chunk.length > 0) yield chunk;
}

async function renderInto(
  open: Pick<Context, 'options' | 'settings' | 'store' | 'manifest' | 'claims' | 'scores'>,
  concurrency: number,
  originals: Original[],
  failures: SourceError[],
  warnings: string[],
  /** The manifest's warning when the session opened, said already. */
  opened: string | undefined,
): Promise<Batch> {
  const { options, settings, manifest } = open;
  const limit = pLimit(concurrency);
  // Read, never set: sharp's threads are the application's (the CLI's: src/cli/threads.ts).
  const context: Context = { ...open, stuckClaims: [], warnings, threads: sharp.concurrency() };
  const tally: Tally = {
    results: [],
    errors: [...failures],
    notStarted: [],
    active: [],
    done: 0,
    counts: zeroCounts(),
  };
  const total = originals.length + failures.length;
  const progress: Progress = (source, status) =>
    options.onProgress?.({ done: tally.done, total, source, status, active: [...tally.active] });
  for (const error of failures) {
    tally.done++;
    progress(error.source, 'failed');
  }
  try {
    for (const whole of chunksByStem(originals)) {
      if (options.signal?.aborted) {
        tally.notStarted.push(...whole.map((original) => original.source));
        continue;
      }
      await manifest.settle(whole[0]!.stem);
      const chunk = await skipUnchanged(context, whole, tally, progress);
      if (chunk.length === 0) continue;
      const entries = await manifest.entriesFor([...new Set(chunk.map((original) => original.stem))]);
      const byStem = new Map<string, Record<string, ManifestEntry>>();
      for (const [key, entry] of Object.entries(entries)) {
        const stem = stemOfKey(key);
        byStem.set(stem, { ...byStem.get(stem), [key]: entry });
      }
      const planned = await Promise.all(
        chunk.map((original) =>
          limit(async () => {
            const recorded = byStem.get(original.stem) ?? {};
            const stamped = await stampOf(original);
            const known = knownInfo(original, stamped.stamp, recorded, settings.pixelLimit);
            const plan = await planOriginal(original, settings, known);
            return { ...plan, recorded, stamped };
          }).catch((error: unknown) => {
            keep(tally.errors, error);
            tally.done++;
            progress(original.source, 'failed');
          }),
        ),
      );
      const { plans, errors: collisions } = splitCollisions(planned.filter((plan) => plan !== undefined));
      for (const error of collisions) {
        tally.errors.push(error);
        tally.done++;
        progress(error.source, 'failed');
      }
      await renderAll(context, plans as RecordedPlan[], limit, tally, progress);
    }
  } finally {
    await manifest.settle();
    // A claim that cannot be removed (the folder turned read-only, say) must not cost the batch its
    // report: the next run into this folder takes it over, its writer being gone.
    const stuck = context.stuckClaims;
    if (stuck.length > 0) {
      warnings.push(
        `${stuck.length} claim(s) in the output folder could not be removed (${oneLine(stuck[0])}); ` +
          'the next run into it takes them over',
      );
    }
  }
  if (manifest.warning && manifest.warning !== opened) warnings.push(manifest.warning);
  // The metric's threads, when they could not start (node --jitless, an address-space limit).
  warnings.push(...(open.scores?.takeNotices() ?? []));
  const bySource = (a: { source: string }, b: { source: string }) => a.source.localeCompare(b.source);
  return {
    results: tally.results.sort(bySource),
    errors: tally.errors.sort(bySource),
    warnings,
    notStarted: tally.notStarted.sort(),
    counts: tally.counts,
  };
}

/**
 * The originals of a chunk up to date with nothing to write, found from their records' summaries in
 * the records folders' indexes (`skippedUnchanged`), counted as skipped without a record read; the
 * others, to be planned and rendered from their records. An original whose stem another of the chunk
 * shares is left to planning, which says they collide.
 */
async function skipUnchanged(context: Context, chunk: Original[], tally: Tally, progress: Progress) {
  if (!skipsBySummary(context.options)) return chunk;
  const summaries = await context.manifest.summariesFor([...new Set(chunk.map((original) => original.stem))]);
  if (summaries.size === 0) return chunk;
  const rest: Original[] = [];
  for (const [index, original] of chunk.entries()) {
    const recorded = summaries.get(original.stem);
    const shared = chunk[index - 1]?.stem === original.stem || chunk[index + 1]?.stem === original.stem;
    const outcome = recorded && !shared ? await skippedAsRecorded(context, original, recorded) : undefined;
    if (!outcome) {
      rest.push(original);
      continue;
    }
    count(tally.counts, outcome);
    tally.done++;
    progress(original.source, outcome.status);
  }
  return rest;
}

/** `skippedUnchanged` for an original planned from its records' summaries; undefined when it cannot be told so. */
async function skippedAsRecorded(context: Context, original: Original, recorded: Record<string, RecordSummary>) {
  const stamped = await stampOf(original);
  const known = knownInfo(original, stamped.stamp, recorded, context.settings.pixelLimit);
  if (!known) return undefined;
  const plan = await planOriginal(original, context.settings, known).catch(() => undefined);
  return plan && skippedUnchanged(context, plan, recorded, stamped);
}

/** A plan with its image's records and its original's stamp, as the batch read them. */
type RecordedPlan = Plan & { recorded: Record<string, ManifestEntry>; stamped: Stamped };

/**
 * The header of an original as recorded, while its stamp (a file's stat, an object's listing)
 * says it is unchanged: planned without a read, so a rerun over an unchanged archive reads no
 * original.
 */
function knownInfo(
  original: Original,
  stamp: Stamp | undefined,
  recorded: Record<string, RecordSummary>,
  pixelLimit: number,
): SourceInfo | undefined {
  if (original.data || stamp === undefined) return undefined;
  const source = original.object ? original.source : path.resolve(original.source);
  const entry = Object.values(recorded).find((each) => each.source === source && sameStamp(each.stamp, stamp));
  if (!entry?.info) return undefined;
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
  counts: RenderCounts;
}

type Progress = (source: string, status: RenderProgress['status']) => void;

/** Renders every plan, `limit` at a time, each failing alone; after an interruption, starts none. */
async function renderAll(
  context: Context,
  plans: RecordedPlan[],
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
          const outcome = await renderOne(context, plan, plan.recorded, plan.stamped);
          count(tally.counts, outcome);
          if (outcome.result) tally.results.push(outcome.result);
          status = outcome.status;
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

/** Collects a SourceError; anything else is a bug or a batch-wide failure and propagates. */
function keep(errors: SourceError[], error: unknown): undefined {
  if (!(error instanceof SourceError)) throw error;
  errors.push(error);
  return undefined;
}
