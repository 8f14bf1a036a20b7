/**
 * `render`: originals in, five renditions and an Image object out, for a whole batch.
 * Each original fails alone; files appear whole or not at all; unchanged originals whose
 * files are intact are skipped, by the manifest.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import pLimit from 'p-limit';
import { ContentApiError, oneLine, SourceError } from '../errors.js';
import { LocalStore } from '../storage/local.js';
import { isS3Url, openStore, type S3Options } from '../storage/location.js';
import { MEDIA_CACHE_CONTROL, MEDIA_TYPES } from '../storage/media-headers.js';
import { sweepSpools } from '../storage/spool.js';
import { sameStamp, type MediaStore, type Staged } from '../storage/store.js';
import { Claims } from './claims.js';
import { discoverOriginals, type Original } from './discover.js';
import { planOriginal, splitCollisions, type Plan } from './plan.js';
import { shardOf, type Shard } from './shard.js';
import type { ForceableFormat, OutputFormat, QualitySettings } from './formats.js';
import { buildImageObject, type ImageObject, type RenditionFile } from './image-object.js';
import { isIntact, openManifest, type Manifest, type ManifestEntry } from './manifest.js';
import { encodeRenditions, readSourceInfo, type EncodeSettings, type SourceInfo } from './pipeline.js';
import { resolveSettings, settingsKey, type Settings } from './settings.js';
import type { NamingStyle, PixelSize, RenditionKey } from './rules.js';
import { changed, readAndHash, stampOf, type SourceBytes } from './source-bytes.js';

export interface RenderOptions {
  /** Output folder, or `s3://bucket/prefix/`; renditions keep the originals' folder structure below it. */
  outDir: string;
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
  const discovered = await discoverOriginals(inputs, outLocation(options), options.s3);
  const { shard } = options;
  const originals = shard ? discovered.originals.filter((original) => shardOf(original.stem, shard.count) === shard.index) : discovered.originals;
  try {
    const rendered = report(await runBatch(originals, discovered.failures, settings, options));
    return { ...rendered, warnings: [...discovered.warnings, ...rendered.warnings] };
  } finally {
    await Promise.all(discovered.stores.map((store) => store.close()));
  }
}

const outLocation = (options: RenderOptions) => (isS3Url(options.outDir) ? options.outDir : path.resolve(options.outDir));

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
  const discovered = await discoverOriginals([source], outLocation(options), options.s3);
  try {
    const { results, errors } = await runBatch(discovered.originals, discovered.failures, settings, options);
    if (errors[0]) throw errors[0];
    return results[0]!;
  } finally {
    await Promise.all(discovered.stores.map((store) => store.close()));
  }
}

function report({ results, errors, warnings, notStarted }: Awaited<ReturnType<typeof runBatch>>): RenderReport {
  return { results, failures: errors.map((error) => ({ source: error.source, code: error.code, error: error.message })), warnings, notStarted };
}

async function runBatch(originals: Original[], failures: SourceError[], settings: Settings, options: RenderOptions) {
  const store = await openStore(options.outDir, options.s3);
  try {
    await store.open({ write: !options.dryRun, create: true });
    return await renderInto(store, originals, failures, settings, options);
  } finally {
    await store.close();
  }
}

async function renderInto(store: MediaStore, originals: Original[], failures: SourceError[], settings: Settings, options: RenderOptions) {
  const warnings: string[] = [];
  const manifest = await openManifest(store);
  const unreadable = manifest.warning;
  if (unreadable) warnings.push(unreadable);
  // Runs at once into one folder decide collisions on the files as they are now (claims.ts).
  const claims = store instanceof LocalStore && !options.dryRun ? new Claims(path.resolve(store.location)) : null;
  if (!options.dryRun) {
    const swept = (await store.sweep()) + (originals.some((original) => original.object) ? await sweepSpools() : 0);
    if (swept > 0) warnings.push(`removed ${swept} temporary file(s) left by an interrupted run`);
    const released = (await claims?.sweep()) ?? 0;
    if (released > 0) warnings.push(`released ${released} claim(s) left by an interrupted run`);
  }

  const errors: SourceError[] = [...failures];
  const limit = pLimit(settings.concurrency);
  const entries = await manifest.entriesFor([...new Set(originals.map((original) => original.stem))]);
  if (manifest.warning && manifest.warning !== unreadable) warnings.push(manifest.warning);
  const recorded = new Map(Object.values(entries).map((entry) => [entry.source, entry]));
  const planned = await Promise.all(
    originals.map((original) =>
      limit(() => planOriginal(original, settings, knownInfo(original, recorded, settings.pixelLimit)).catch((error: unknown) => keep(errors, error))),
    ),
  );
  const { plans, errors: collisions } = splitCollisions(planned.filter((plan) => plan !== undefined));
  errors.push(...collisions);

  const context: Context = { options, settings, store, entries, manifest, claims, releases: [] };
  const tally: Tally = { results: [], errors, notStarted: [], active: [], done: 0 };
  const total = plans.length + errors.length;
  const progress: Progress = (source, status) => options.onProgress?.({ done: tally.done, total, source, status, active: [...tally.active] });
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
  return { results: tally.results.sort(bySource), errors: errors.sort(bySource), warnings, notStarted: tally.notStarted.sort() };
}

/**
 * The header of an object in a bucket as recorded, while its listing says it is unchanged
 * (same stamp): planned without a read, so a rerun over an unchanged bucket reads no original.
 * (A local file's header is read: that costs one small read, and keeps every check as it was.)
 */
function knownInfo(original: Original, recorded: Map<string, ManifestEntry>, pixelLimit: number): SourceInfo | undefined {
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
async function renderAll(context: Context, plans: Plan[], limit: ReturnType<typeof pLimit>, tally: Tally, progress: Progress): Promise<void> {
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
async function flushManifest(manifest: Manifest, plans: Plan[], results: RenderResult[], errors: SourceError[]): Promise<void> {
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

const unrecorded = (source: string, error: unknown) =>
  new SourceError('CONTENT_API_RENDER_FAILED', source, `rendered, but not recorded in the manifest (${oneLine(error)}); the next run renders it again`, { cause: error });

interface Context {
  options: RenderOptions;
  settings: Settings;
  /** Where the renditions go. */
  store: MediaStore;
  /** The manifest's entries for this run's images, as the run began. */
  entries: Record<string, ManifestEntry>;
  manifest: Manifest;
  /** Claims on images' keys (a local folder only); released once the manifest is written. */
  claims: Claims | null;
  releases: Array<() => Promise<void>>;
}

async function renderOne(context: Context, plan: Plan): Promise<RenderResult> {
  const { settings, options, store, manifest } = context;
  const { original, info, format, files } = plan;
  const source = original.data || original.object ? original.source : path.resolve(original.source);
  const result = (status: RenderStatus): RenderResult => ({
    source: original.source,
    status,
    original: info.size,
    format,
    files,
    removed: status === 'skipped' ? [] : staleFiles(context.entries, source, files),
    image: buildImageObject(info.size, files, { mediaUrl: settings.mediaUrl, altText: options.altText?.(original) }),
  });
  const previous = context.entries[plan.key];
  const { stamp, settled } = await stampOf(original);
  // While an original's stamp is the one recorded when it was hashed, so is its hash: an
  // unchanged original is not read at all.
  let bytes: SourceBytes | undefined;
  let sha256 = previous?.source === source && sameStamp(previous.stamp, stamp) ? previous.sha256 : undefined;
  try {
    if (sha256 === undefined) {
      bytes = await readAndHash(original, stamp);
      sha256 = bytes.sha256;
    }
    const key = settingsKey(settings, format);
    if (previous && previous.source !== source && previous.sha256 !== sha256 && !options.force && (await stillThere(previous.source))) {
      // Bytes in memory are a rendition downloaded by `render --page`: the original itself is the better source.
      const way = original.data ? 'render from that original (--originals)' : 'rename one';
      const reason = `would overwrite the renditions of ${previous.source}, rendered into this folder earlier (both are '${plan.key}'); ${way}, or use --force to replace them`;
      throw new SourceError('CONTENT_API_NAME_COLLISION', original.source, reason);
    }
    const upToDate = previous?.sha256 === sha256 && previous.settings === key && (await isIntact(store, previous));
    if (upToDate && !options.force) {
      // Hashed again (touched, moved, copied, or a manifest from before stamps): the same
      // content, so remember where it is now and its stamp, for the next run's fast path.
      if (stamp && (!sameStamp(previous.stamp, stamp) || previous.source !== source || !previous.info) && !options.dryRun) {
        // Only spares the next run a hash (or a header read): not having it recorded is no failure.
        const { size, ...header } = info;
        await manifest.set(plan.key, { ...previous, source, stamp: settled, original: size, info: header }).catch(() => undefined);
      }
      return result('skipped');
    }
    if (options.dryRun) return result('planned');
    bytes ??= await readAndHash(original, stamp);
    if (context.claims && !options.force) {
      const claim = await context.claims.claim(plan.key, source, bytes.sha256, stillThere).catch((error: NodeJS.ErrnoException) => {
        throw new SourceError('CONTENT_API_RENDER_FAILED', original.source, `cannot write renditions (${error.code ?? oneLine(error)})`, { cause: error });
      });
      if (!claim.ok) {
        const reason = `would overwrite the renditions of ${claim.holder}, rendered into this folder by another run (both are '${plan.key}'); rename one, or use --force to replace them`;
        throw new SourceError('CONTENT_API_NAME_COLLISION', original.source, reason);
      }
      context.releases.push(claim.release);
    }

    const now = await readSourceInfo(original.source, bytes.input, settings.pixelLimit);
    if (now.format !== info.format || now.size.width !== info.size.width || now.size.height !== info.size.height) throw changed(original);
    // A local file is read by libvips as it renders: it must still be the file that was hashed.
    const unchanged = async () => {
      if (!original.data && !original.object && !sameStamp((await stampOf(original)).stamp, stamp)) throw changed(original);
    };
    const written = await writeRenditions(context, original, bytes.input, info, format, files, unchanged);
    const { size, ...header } = info;
    const entry: ManifestEntry = { source, sha256: bytes.sha256, stamp: settled, settings: key, original: size, info: header, renditions: written };
    await manifest.set(plan.key, entry).catch((error: unknown) => {
      throw unrecorded(original.source, error);
    });
    // Earlier renderings of the same original (another naming, or another format and so
    // another key) leave files this one no longer writes: remove them.
    const rendered = result('rendered');
    try {
      for (const old of rendered.removed) await store.remove(old);
      for (const [oldKey, entry] of Object.entries(context.entries)) {
        if (entry.source === source && oldKey !== plan.key) await manifest.delete(oldKey);
      }
    } catch (error) {
      throw new SourceError('CONTENT_API_RENDER_FAILED', original.source, `rendered, but an earlier rendering's files could not be removed (${oneLine(error)})`, { cause: error });
    }
    return rendered;
  } finally {
    await bytes?.release();
  }
}

/** The files the manifest's renderings of `source` wrote that `files` does not include. */
function staleFiles(entries: Record<string, ManifestEntry>, source: string, files: Record<RenditionKey, RenditionFile>): string[] {
  const kept = new Set(Object.values(files).map((file) => file.path));
  const earlier = Object.values(entries).filter((entry) => entry.source === source).flatMap((entry) => Object.values(entry.renditions).map((file) => file.path));
  return [...new Set(earlier)].filter((file) => !kept.has(file)).sort();
}

/** Whether an original recorded earlier is still there: a file that exists, or any object in a bucket (not looked up). */
const stillThere = (source: string) => (isS3Url(source) ? Promise.resolve(true) : stat(source).then((info) => info.isFile(), () => false));

/** Collects a SourceError; anything else is a bug or a batch-wide failure and propagates. */
function keep(errors: SourceError[], error: unknown): undefined {
  if (!(error instanceof SourceError)) throw error;
  errors.push(error);
  return undefined;
}

/**
 * Encodes each rendition and stages it unseen; once all five are there and `verify` passes,
 * makes them appear together. On failure none appears.
 */
async function writeRenditions(
  context: Context,
  original: Original,
  input: string | Buffer,
  info: SourceInfo,
  format: OutputFormat,
  files: Record<RenditionKey, RenditionFile>,
  verify: () => Promise<void>,
): Promise<ManifestEntry['renditions']> {
  const encode: EncodeSettings = { format, quality: context.settings.quality, keepMetadata: context.settings.keepMetadata, pixelLimit: context.settings.pixelLimit };
  const staged: Staged[] = [];
  const written = {} as ManifestEntry['renditions'];
  try {
    for await (const rendition of encodeRenditions(original.source, input, info, encode)) {
      for (const key of rendition.keys) {
        const file = files[key];
        if (file.width !== rendition.size.width || file.height !== rendition.size.height) {
          throw new SourceError('CONTENT_API_RENDER_FAILED', original.source, `${key} came out ${rendition.size.width}x${rendition.size.height}, planned ${file.width}x${file.height}`);
        }
        const headers = { contentType: MEDIA_TYPES[path.posix.extname(file.path)], cacheControl: MEDIA_CACHE_CONTROL };
        staged.push(await context.store.stage(file.path, rendition.data, headers));
        written[key] = { ...file, bytes: rendition.data.length };
      }
    }
    await verify();
    await Promise.all(staged.map((object) => object.commit()));
    return written;
  } catch (error) {
    await Promise.all(staged.map((object) => object.discard()));
    if (error instanceof SourceError) throw error;
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new SourceError('CONTENT_API_RENDER_FAILED', original.source, `cannot write renditions (${reason})`, { cause: error });
  }
}
