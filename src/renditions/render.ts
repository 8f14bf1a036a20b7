/**
 * `render`: originals in, five renditions and an Image object out, for a whole batch.
 * Each original fails alone; files appear whole or not at all; unchanged originals whose
 * files are intact are skipped, by the manifest.
 */
import path from 'node:path';
import pLimit from 'p-limit';
import { ContentApiError, SourceError } from '../errors.js';
import { LocalStore } from '../storage/local.js';
import { openStore, type S3Options } from '../storage/location.js';
import { sweepSpools } from '../storage/spool.js';
import { type MediaStore, sameStamp } from '../storage/store.js';
import { Claims } from './claims.js';
import { discoverOriginals, type Original } from './discover.js';
import type { ForceableFormat, OutputFormat, QualitySettings } from './formats.js';
import type { ImageObject, RenditionFile } from './image-object.js';
import { type Manifest, type ManifestEntry, openManifest } from './manifest.js';
import type { SourceInfo } from './pipeline.js';
import { type Plan, planOriginal, splitCollisions } from './plan.js';
import { type Context, renderOne, unrecorded } from './render-one.js';
import type { NamingStyle, PixelSize, RenditionKey } from './rules.js';
import { resolveSettings, type Settings } from './settings.js';
import { inShard, type Shard } from './shard.js';

export interface RenderOptions {
  /** Output folder, or `s3://bucket/prefix/`; renditions keep the originals' folder structure below it. */
  outDir: string;
  /** Make the output folder when it is not there (default true). */
  createOutDir?: boolean;
  /** How to reach S3 for `s3://` locations (default: the AWS SDK's environment and config files). */
  s3?: S3Options;
  /** URL prefix of the output folder in Image objects (default `/media/`). */
  mediaUrl?: string;
  /** `max`: `<name>.max-<n>x<n>.<ext>` (default); `underscore`: `<name>_<n>x<n>.<ext>`. */
  naming?: NamingStyle;
  /** Convert every original to this format instead of keeping web formats. */
  format?: ForceableFormat;
  quality?: Partial<QualitySettings>;
  /** Keep EXIF, XMP and IPTC metadata (default: stripped). */
  keepMetadata?: boolean;
  /** Largest original, in pixels, that will be decoded; 0 for no limit. */
  pixelLimit?: number;
  /** Originals rendered at once (default: the machine's cores). */
  concurrency?: number;
  /** Render every original again, even when the manifest says it is up to date. */
  force?: boolean;
  /** Plan only: report what would be written, write nothing. */
  dryRun?: boolean;
  /** The alt text of an original's Image object (default: null). */
  altText?: (original: Original) => string | null | undefined;
  /** Called after each original, rendered, skipped or failed. */
  onProgress?: (event: RenderProgress) => void;
  /** Stops starting new originals; those under way finish. */
  signal?: AbortSignal;
  /** Render only this shard of the originals (see `shardOf`); all shards together are the whole batch. */
  shard?: Shard | undefined;
}

export interface RenderProgress {
  /** Originals finished (rendered, skipped, planned or failed). */
  done: number;
  total: number;
  /** The original this event is about. */
  source: string;
  /** `started`: the original is now under way; else how it finished. */
  status: RenderStatus | 'failed' | 'started';
  /** The originals under way after this event, in the order they started. */
  active: string[];
}

/** `rendered`: files written; `skipped`: up to date; `planned`: what `dryRun` would write. */
export type RenderStatus = 'rendered' | 'skipped' | 'planned';

export interface RenderResult {
  source: string;
  status: RenderStatus;
  image: ImageObject;
  /** The original's pixel size as displayed. */
  original: PixelSize;
  format: OutputFormat;
  /** The rendition files, xs..xl, with paths under the output folder. */
  files: Record<RenditionKey, RenditionFile>;
  /**
   * Files an earlier rendering of this original wrote (in another format or naming) that
   * this one does not: removed, or, `planned`, to be removed. Paths under the output folder.
   */
  removed: string[];
}

export interface RenderFailure {
  source: string;
  code: string;
  error: string;
}

export interface RenderReport {
  results: RenderResult[];
  failures: RenderFailure[];
  warnings: string[];
  /** Originals never started because the run was interrupted (`signal`): neither rendered nor failed. */
  notStarted: string[];
}

/**
 * Renders every original under `inputs` (files and folders) into `options.outDir`.
 * Throws only when the batch cannot run at all (bad options, output folder not writable);
 * each original's own failure is in the report.
 */
export async function renderOriginals(inputs: string[], options: RenderOptions): Promise<RenderReport> {
  const settings = resolveSettings(options);
  const discovered = await discoverOriginals(inputs, options.outDir, options.s3);
  const originals = inShard(discovered.originals, options.shard);
  try {
    const rendered = report(await runBatch(originals, discovered.failures, settings, options));
    return { ...rendered, warnings: [...discovered.warnings, ...rendered.warnings] };
  } finally {
    await Promise.all(discovered.stores.map((store) => store.close()));
  }
}

/**
 * Renders originals already named with their place under the output folder (`stem`),
 * files or bytes in memory: what `render --page` does once it has found each image's source.
 */
export async function renderSources(originals: Original[], options: RenderOptions): Promise<RenderReport> {
  return report(await runBatch(originals, [], resolveSettings(options), options));
}

/** Renders one original file; throws its `SourceError` if it fails. */
export async function renderOriginal(source: string, options: RenderOptions): Promise<RenderResult> {
  const settings = resolveSettings({ ...options, concurrency: 1 });
  const discovered = await discoverOriginals([source], options.outDir, options.s3);
  try {
    const { results, errors } = await runBatch(discovered.originals, discovered.failures, settings, options);
    if (errors[0]) throw errors[0];
    return results[0]!;
  } finally {
    await Promise.all(discovered.stores.map((store) => store.close()));
  }
}

function report({ results, errors, warnings, notStarted }: Awaited<ReturnType<typeof runBatch>>): RenderReport {
  return {
    results,
    failures: errors.map((error) => ({ source: error.source, code: error.code, error: error.message })),
    warnings,
    notStarted,
  };
}

async function runBatch(originals: Original[], failures: SourceError[], settings: Settings, options: RenderOptions) {
  const session = await openRenderSession(options, settings);
  try {
    return await session.render(originals, failures);
  } finally {
    await session.close();
  }
}

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
  settings: Settings = resolveSettings(options),
): Promise<RenderSession> {
  const store = await openStore(options.outDir, options.s3);
  try {
    await store.open({ write: !options.dryRun, create: options.createOutDir ?? true });
    const manifest = await openManifest(store);
    // Runs at once into one folder decide collisions on the files as they are now (claims.ts).
    const claims = store instanceof LocalStore && !options.dryRun ? new Claims(path.resolve(store.location)) : null;
    // Said once, in the first batch's report.
    const opened = manifest.warning;
    let pending: string[] = opened ? [opened] : [];
    let swept = options.dryRun;
    return {
      async render(originals, failures = []) {
        const warnings = pending;
        pending = [];
        if (!swept) {
          swept = true;
          warnings.push(...(await sweep(store, claims, originals)));
        }
        return renderInto({ options, settings, store, manifest, claims }, originals, failures, warnings, opened);
      },
      close: () => store.close(),
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/** Removes what interrupted runs left: temporary files, copies of bucket objects (if any is read), dead claims. */
async function sweep(store: MediaStore, claims: Claims | null, originals: Original[]): Promise<string[]> {
  const warnings: string[] = [];
  const swept = (await store.sweep()) + (originals.some((original) => original.object) ? await sweepSpools() : 0);
  if (swept > 0) warnings.push(`removed ${swept} temporary file(s) left by an interrupted run`);
  const released = (await claims?.sweep()) ?? 0;
  if (released > 0) warnings.push(`released ${released} claim(s) left by an interrupted run`);
  return warnings;
}

async function renderInto(
  open: Pick<Context, 'options' | 'settings' | 'store' | 'manifest' | 'claims'>,
  originals: Original[],
  failures: SourceError[],
  warnings: string[],
  /** The manifest's warning when the session opened, said already. */
  opened: string | undefined,
): Promise<Batch> {
  const { options, settings, manifest } = open;
  const errors: SourceError[] = [...failures];
  const limit = pLimit(settings.concurrency);
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

  const context: Context = { ...open, entries, releases: [] };
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
    await Promise.all(context.releases.map((release) => release()));
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
