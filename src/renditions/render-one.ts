/**
 * One original of a batch (render.ts): decide whether it is up to date, render it, write its
 * files through the store so they appear whole, record it, remove what it no longer writes.
 */
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { failureReason, oneLine, SourceError } from '../errors.js';
import { aimOf, type Measured } from '../quality/auto.js';
import type { ScorePool } from '../quality/score-pool.js';
import { isScorable, SCORABLE_SIZE } from '../quality/ssimulacra2.js';
import { MEDIA_TYPES, objectCacheControl } from '../storage/media-headers.js';
import { isS3Url } from '../storage/s3-url.js';
import { type MediaStore, type Staged, sameStamp } from '../storage/store.js';
import { formatBytes } from '../units.js';
import { encodeRenditions } from './cascade.js';
import type { Claims } from './claims.js';
import { readSourceInfo, type SourceInfo } from './decode.js';
import type { Original } from './discover.js';
import {
  FILE_EXTENSIONS,
  isAnimationFormat,
  isLossy,
  keepsAlpha,
  keepsAnimation,
  type OutputFormat,
} from './formats.js';
import { buildImageObject, type ImageObject, type RenditionFile, renditionUrls } from './image-object.js';
import { isIntact, type Manifest, type ManifestEntry } from './manifest.js';
import type { RenderOptions } from './options.js';
import { type Placeholder, placeholderOf } from './placeholder.js';
import { type Output, outputsOf, type Plan } from './plan.js';
import {
  buildSrcset,
  type PixelSize,
  RENDITION_KEYS,
  type RenditionKey,
  renditionVersion,
  versionOfSha256,
} from './rules.js';
import { qualityTarget, type RenderSettings } from './settings.js';
import { settingsKey } from './settings-key.js';
import { changed, readAndHash, type SourceBytes, type Stamped, stampOf } from './source-bytes.js';

/** An original rendered whose manifest record could not be written. */
export const unrecorded = (source: string, error: unknown) =>
  new SourceError(
    'CONTENT_API_RENDER_FAILED',
    source,
    `rendered, but not recorded in the manifest (${oneLine(error)}); the next run renders it again`,
    { cause: error },
  );

/** `rendered`: files written; `skipped`: up to date; `planned`: what `dryRun` would write. */
export type RenderStatus = 'rendered' | 'skipped' | 'planned';

/** An original's renditions in one format. */
interface OutputResult {
  format: OutputFormat;
  /** The rendition files, xs..xl, with paths under the output folder. */
  files: Record<RenditionKey, RenditionFile>;
  /** Bytes of the files, each file once; null when planned. */
  bytes: number | null;
  /**
   * With `--quality auto`, for a lossy format: each rendition's encoder quality and SSIMULACRA2
   * score (as recorded when it was rendered, for one up to date).
   */
  measured?: Record<RenditionKey, Measured>;
}

/** An original's renditions in one more format (`--formats`): the same sizes, the same pixels. */
export interface AlternateResult extends OutputResult {
  /** Its MIME type, as a `<source type>` names it: `image/avif`. */
  type: string;
  /** `<url> <width>w` entries in xs..xl order, as the Image object's `srcset`. */
  srcset: string;
}

/** An original rendered: its primary format (the Image object's), and its alternates. */
export interface RenderResult extends OutputResult {
  source: string;
  status: RenderStatus;
  image: ImageObject;
  /** The original's pixel size as displayed. */
  original: PixelSize;
  /** The same renditions in the other formats `--formats` lists, in its order. */
  alternates: AlternateResult[];
  /** What a page shows while a rendition loads: the dominant colour and a tiny preview; none when planned. */
  placeholder?: Placeholder;
  /**
   * Files an earlier rendering of this original wrote (in another format or naming) that this
   * one does not, removed with `prune` (or, `planned`, to be removed). Paths under the output folder.
   */
  removed: string[];
  /** The same files, kept: without `prune`, nothing is removed. */
  kept: string[];
}

/** How one original ended; its result where the batch keeps results (`collectResults`). */
export interface RenderOutcome extends Pick<RenderResult, 'status' | 'removed' | 'kept'> {
  result?: RenderResult;
}

/** How a batch's originals ended, and the files of earlier renderings removed and kept. */
export type RenderCounts = Record<RenderStatus, number> & { removed: number; kept: number };

export const zeroCounts = (): RenderCounts => ({ rendered: 0, skipped: 0, planned: 0, removed: 0, kept: 0 });

/** The counts of `results`. */
export function countsOf(results: Array<Pick<RenderResult, 'status' | 'removed' | 'kept'>>): RenderCounts {
  const counts = zeroCounts();
  for (const result of results) count(counts, result);
  return counts;
}

/** Adds `result` to `counts`. */
export function count(counts: RenderCounts, result: Pick<RenderResult, 'status' | 'removed' | 'kept'>): void {
  counts[result.status]++;
  counts.removed += result.removed.length;
  counts.kept += result.kept.length;
}

/** What rendering one original needs from its batch. */
export interface Context {
  options: RenderOptions;
  settings: RenderSettings;
  /** Where the renditions go. */
  store: MediaStore;
  manifest: Manifest;
  /** Claims on images' keys (a local folder only); each released once its original's records are written. */
  claims: Claims | null;
  /** Why claims could not be released (a folder turned read-only), for the batch to warn once. */
  stuckClaims: unknown[];
  /** The batch's warnings, for what an original's rendering has to say (it still renders). */
  warnings: string[];
  /** libvips' threads per pipeline (`sharp.concurrency()`, the host's) as the batch began: AVIF's bytes follow them. */
  threads: number;
  /** Where `--quality auto` scores (undefined when the settings search nothing). */
  scores: ScorePool | undefined;
}

type Renditions = ManifestEntry['renditions'];

/**
 * Renders one planned original: skipped when its hash, settings and files say every output is up
 * to date; else the outputs that are not (all with `force`) are encoded from one decode, staged,
 * made to appear together, and then recorded in the manifest; files of an earlier rendering it
 * no longer writes (another naming, a format no longer listed) are removed.
 */
export async function renderOne(
  context: Context,
  plan: Plan,
  /** The records of the plan's stem (`landscapes/dune`), by key, as the batch read them. */
  recorded: Record<string, ManifestEntry>,
  /** The original's stamp, taken before anything was read of it (source-bytes.ts). */
  { stamp, settled }: Stamped,
): Promise<RenderOutcome> {
  const { settings, options, store, manifest } = context;
  const { original, info } = plan;
  const outputs = outputsOf(plan);
  const source = original.data || original.object ? original.source : path.resolve(original.source);
  const stale = staleFiles(recorded, source, outputs);
  const prune = Boolean(options.prune);
  const removed = prune ? stale : [];
  const kept = prune ? [] : stale;
  // Its result, only where the batch keeps results: a rerun of an archive builds no Image object.
  const result = (
    status: RenderStatus,
    renditions: Array<Renditions | undefined>,
    placeholder?: Placeholder,
  ): RenderOutcome => ({
    status,
    removed,
    kept,
    ...(options.collectResults !== false && { result: describeResult(status, renditions, placeholder) }),
  });
  const describeResult = (
    status: RenderStatus,
    renditions: Array<Renditions | undefined>,
    placeholder?: Placeholder,
  ): RenderResult => {
    const [primary, ...alternates] = outputs.map((output, index) => describeOutput(output, renditions[index]));
    const { mediaUrl, urlVersions } = settings;
    return {
      source: original.source,
      status,
      original: info.size,
      format: plan.format,
      files: primary!.files,
      bytes: primary!.bytes,
      ...(primary!.measured && { measured: primary!.measured }),
      alternates: alternates.map((alternate) => ({
        ...alternate,
        srcset: buildSrcset(renditionUrls(alternate.files, mediaUrl, urlVersions)),
      })),
      removed,
      kept,
      ...(placeholder && { placeholder }),
      image: buildImageObject(info.size, primary!.files, {
        mediaUrl,
        altText: options.altText?.(original),
        urlVersions,
      }),
    };
  };
  const previous = outputs.map((output) => recorded[output.key]);
  // An output up to date, hashed again (touched, moved, copied, or a manifest from before
  // stamps): the same content, so its record learns where it is now and its stamp, for the next
  // run's fast path; and, from a manifest before versions, its files' versions (`renditions`).
  // That only spares the next run a hash or a read: no failure if lost.
  const refresh = async (
    output: Output,
    entry: ManifestEntry,
    placeholder: Placeholder | undefined,
    renditions: Renditions = entry.renditions,
  ) => {
    const same = sameStamp(entry.stamp, stamp) && entry.source === source && entry.info;
    // A placeholder made anew: the record had none, or one from before `transparent` of an original with alpha.
    const made =
      placeholder && (!entry.placeholder || (entry.placeholder.transparent === undefined && entry.info?.hasAlpha));
    const moved = stamp !== undefined && !(same && !made);
    // With `prune`, its earlier files removed: its record stops naming them (that write must not be lost).
    const pruned = prune && entry.kept !== undefined;
    if (!moved && !pruned && renditions === entry.renditions) return;
    const { size, ...header } = info;
    const { kept: _, ...rest } = entry;
    const update = {
      ...(pruned ? rest : entry),
      ...(moved && { source, stamp: settled, original: size, info: header, ...(placeholder && { placeholder }) }),
      renditions,
    };
    await manifest.set(output.key, update).catch((error: unknown) => {
      if (pruned) throw unrecorded(original.source, error);
    });
  };
  // While an original's stamp is the one recorded when it was hashed, so is its hash: an
  // unchanged original is not read at all.
  let bytes: SourceBytes | undefined;
  const releases: Array<() => Promise<void>> = [];
  let sha256 = previous.find((entry) => entry?.source === source && sameStamp(entry.stamp, stamp))?.sha256;
  try {
    if (sha256 === undefined) {
      bytes = await readAndHash(original, stamp);
      sha256 = bytes.sha256;
    }
    for (const [index, output] of outputs.entries())
      await refuseCollision(context, plan, output, source, previous[index], sha256);
    const keys = outputs.map((output) => settingsKey(settings, output.format, { threads: context.threads }));
    const fresh = await Promise.all(
      previous.map(async (entry, index) =>
        Boolean(entry && entry.sha256 === sha256 && entry.settings === keys[index] && (await isIntact(store, entry))),
      ),
    );
    // The records of the outputs kept (up to date, not forced), each file with its version.
    const recordedSoFar = await Promise.all(
      previous.map((entry, index) =>
        fresh[index] && !options.force ? recordedVersions(store, original, entry!.renditions) : undefined,
      ),
    );
    if (fresh.every(Boolean) && !options.force) {
      const placeholder = await recordedPlaceholder(context, previous as ManifestEntry[], outputs);
      if (!options.dryRun) {
        // Files removed first: a record stops naming them only once they are gone.
        if (prune) await removeStale(context, plan, recorded, stale, source);
        await Promise.all(
          outputs.map((output, index) => refresh(output, previous[index]!, placeholder, recordedSoFar[index])),
        );
      }
      return result('skipped', recordedSoFar, placeholder);
    }
    // Planned: the outputs up to date keep their records (and bytes); the others would be written.
    if (options.dryRun) return result('planned', recordedSoFar);
    bytes ??= await readAndHash(original, stamp);
    const todo = outputs.filter((_, index) => options.force || !fresh[index]);
    for (const output of todo) releases.push(await claim(context, plan, output, source, bytes.sha256));

    const now = await readSourceInfo(original.source, bytes.input, settings.pixelLimit);
    if (now.format !== info.format || now.size.width !== info.size.width || now.size.height !== info.size.height)
      throw changed(original);
    // A local file is read by libvips as it renders: it must still be the file that was hashed.
    const unchanged = async () => {
      if (!original.data && !original.object && !sameStamp((await stampOf(original)).stamp, stamp))
        throw changed(original);
    };
    const { written, smallest } = await writeRenditions(context, original, bytes.input, info, todo, unchanged);
    const still = todo.filter(
      (output) => info.pages > 1 && isAnimationFormat(info.format) && !keepsAnimation(info, output.format),
    );
    if (still.length > 0) {
      const formats = still.map((output) => output.format).join(', ');
      context.warnings.push(
        `${original.source}: animated (${info.pages} frames); its ${formats} renditions show the first frame only`,
      );
    }
    for (const unsearched of [animatedUnsearched(settings, info, todo), tooSmallToScore(settings, info, todo)]) {
      if (unsearched) context.warnings.push(`${original.source}: ${unsearched}`);
    }
    const placeholder = await placeholderOf(smallest).catch(() => undefined);
    const { size, ...header } = info;
    for (const [index, output] of todo.entries()) {
      const renditions = written[index]!;
      const larger = largerPng(info, output.format, renditions, original.data?.length ?? stamp?.size);
      if (larger) context.warnings.push(`${original.source}: ${larger}`);
      const under = underTarget(settings, output.format, renditions);
      if (under) context.warnings.push(`${original.source}: ${under}`);
      const entry: ManifestEntry = {
        source,
        sha256: bytes.sha256,
        stamp: settled,
        settings: settingsKey(settings, output.format, { threads: context.threads }),
        original: size,
        info: header,
        ...(placeholder && { placeholder }),
        renditions,
        ...keptFrom(previous[outputs.indexOf(output)], renditions, prune),
      };
      await manifest.set(output.key, entry).catch((error: unknown) => {
        throw unrecorded(original.source, error);
      });
    }
    if (prune) await removeStale(context, plan, recorded, stale, source);
    await Promise.all(
      outputs.map((output, index) =>
        todo.includes(output) ? undefined : refresh(output, previous[index]!, placeholder, recordedSoFar[index]),
      ),
    );
    const renditions = outputs.map((output, index) =>
      todo.includes(output) ? written[todo.indexOf(output)] : recordedSoFar[index],
    );
    const larger = largerAlternates(outputs, renditions);
    if (larger) context.warnings.push(`${original.source}: ${larger}`);
    return result('rendered', renditions, placeholder);
  } finally {
    await bytes?.release();
    // Once the records are written (or the original failed): another run's claim now sees the record.
    for (const outcome of await Promise.allSettled(releases.map((release) => release())))
      if (outcome.status === 'rejected') context.stuckClaims.push(outcome.reason);
  }
}

/**
 * An earlier rendering of another original wrote this output's files (both are `output.key`):
 * refused unless `force`, or that original is gone, or it was the same bytes.
 */
async function refuseCollision(
  context: Context,
  plan: Plan,
  output: Output,
  source: string,
  previous: ManifestEntry | undefined,
  sha256: string,
): Promise<void> {
  const { original } = plan;
  if (
    !previous ||
    previous.source === source ||
    previous.sha256 === sha256 ||
    context.options.force ||
    !(await stillThere(previous.source))
  )
    return;
  // Bytes in memory are a rendition downloaded by `render --page`: the original itself is the better source.
  const way = original.data ? 'render from that original (--originals)' : 'rename one';
  const reason =
    `would overwrite the renditions of ${previous.source}, rendered into this folder earlier ` +
    `(both are '${output.key}'); ${way}, or use --force to replace them`;
  throw new SourceError('CONTENT_API_NAME_COLLISION', original.source, reason);
}

/**
 * Claims `output.key` for this run (a local folder): another run's original with that key is a
 * collision. Returns the claim's release.
 */
async function claim(
  context: Context,
  plan: Plan,
  output: Output,
  source: string,
  sha256: string,
): Promise<() => Promise<void>> {
  if (!context.claims || context.options.force) return async () => {};
  const { original } = plan;
  const claimed = await context.claims.claim(output.key, source, sha256, stillThere).catch((error: Error) => {
    throw new SourceError(
      'CONTENT_API_RENDER_FAILED',
      original.source,
      `cannot write renditions (${failureReason(error)})`,
      {
        cause: error,
      },
    );
  });
  if (!claimed.ok) {
    const reason =
      `would overwrite the renditions of ${claimed.holder}, rendered into this folder by another run ` +
      `(both are '${output.key}'); rename one, or use --force to replace them`;
    throw new SourceError('CONTENT_API_NAME_COLLISION', original.source, reason);
  }
  return claimed.release;
}

/** Renditions up to this size are read whole to make a placeholder that a manifest lacks. */
const PLACEHOLDER_SOURCE_BYTES = 4 * 2 ** 20;

/**
 * Which output (by index) a placeholder is made from: the first in a format that keeps transparency, if
 * any is written. A JPEG primary is flattened, where a WebP or AVIF alternate a browser picks instead
 * lets the page show through.
 */
const placeholderFrom = (formats: OutputFormat[]) => Math.max(0, formats.findIndex(keepsAlpha));

/**
 * The placeholder recorded for an original up to date, or, for a record from before placeholders,
 * one made from its smallest rendition as stored; none when that cannot be read.
 */
async function recordedPlaceholder(
  context: Context,
  entries: ManifestEntry[],
  /** The outputs the entries record, in their order. */
  outputs: Output[],
): Promise<Placeholder | undefined> {
  const recorded = entries.find((entry) => entry.placeholder)?.placeholder;
  // A record from before `transparent`: opaque, unless its original has alpha (then made again, once).
  if (recorded && (recorded.transparent !== undefined || !entries[0]!.info?.hasAlpha))
    return { ...recorded, transparent: recorded.transparent ?? false };
  const from = entries[placeholderFrom(outputs.map((output) => output.format))]!;
  const smallest = await context.store.readHead(from.renditions.xs.path, PLACEHOLDER_SOURCE_BYTES).catch(() => null);
  return smallest ? placeholderOf(smallest).catch(() => undefined) : undefined;
}

/**
 * What an output's result says: its files (each with its version, once written), their bytes and,
 * with `--quality auto`, what was measured.
 */
function describeOutput(output: Output, recorded: Renditions | undefined) {
  const distinct = recorded && new Map(Object.values(recorded).map((file) => [file.path, file.bytes]));
  const files = Object.fromEntries(
    RENDITION_KEYS.map((key) => {
      const version = recorded?.[key].version;
      return [key, version === undefined ? output.files[key] : { ...output.files[key], version }];
    }),
  ) as Record<RenditionKey, RenditionFile>;
  return {
    format: output.format,
    type: MEDIA_TYPES[`.${FILE_EXTENSIONS[output.format]}`]!,
    files,
    bytes: distinct ? [...distinct.values()].reduce((sum, size) => sum + size, 0) : null,
    ...measuredOf(recorded),
  };
}

/**
 * A record's renditions, each with its version: hashed from its file, once per file, where a
 * manifest from before versions has none (and then recorded by `refresh`); the same object when
 * none is missing, so an up-to-date original reads no file.
 */
async function recordedVersions(store: MediaStore, original: Original, renditions: Renditions): Promise<Renditions> {
  if (RENDITION_KEYS.every((key) => renditions[key].version !== undefined)) return renditions;
  const hashed = new Map<string, Promise<string>>();
  const versionOf = (file: string) => {
    const known = hashed.get(file);
    if (known) return known;
    const version = (async () => {
      const hash = createHash('sha256');
      for await (const chunk of (await store.read(file)).body) hash.update(chunk as Buffer);
      return versionOfSha256(hash.digest('hex'));
    })();
    hashed.set(file, version);
    return version;
  };
  try {
    const entries = await Promise.all(
      RENDITION_KEYS.map(async (key) => {
        const file = renditions[key];
        return [key, file.version === undefined ? { ...file, version: await versionOf(file.path) } : file] as const;
      }),
    );
    return Object.fromEntries(entries) as Renditions;
  } catch (error) {
    throw new SourceError(
      'CONTENT_API_RENDER_FAILED',
      original.source,
      `cannot read its renditions for their URLs' versions (${failureReason(error)})`,
      { cause: error },
    );
  }
}

/**
 * With `prune`: removes the files of earlier renderings of this original that none of its outputs
 * writes now, and forgets their records (another key: another format, or a format no longer listed).
 */
async function removeStale(
  context: Context,
  plan: Plan,
  recorded: Record<string, ManifestEntry>,
  stale: string[],
  source: string,
): Promise<void> {
  const keys = new Set(outputsOf(plan).map((output) => output.key));
  try {
    for (const old of stale) await context.store.remove(old);
    for (const [oldKey, entry] of Object.entries(recorded)) {
      if (entry.source !== source) continue;
      // (A key still written stops naming them in `refresh`, or is rewritten without them.)
      if (!keys.has(oldKey)) await context.manifest.delete(oldKey);
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

/** `measured` for a result: the recorded quality and score of each rendition, when all have one. */
function measuredOf(recorded: ManifestEntry['renditions'] | undefined): Pick<RenderResult, 'measured'> {
  if (!recorded) return {};
  const measured: Partial<Record<RenditionKey, Measured>> = {};
  for (const key of RENDITION_KEYS) {
    const { quality, score, scored } = recorded[key];
    if (quality === undefined || score === undefined || scored === undefined) return {};
    measured[key] = { quality, score, scored };
  }
  return { measured: measured as Record<RenditionKey, Measured> };
}

/**
 * With `--quality auto`, what an animation's lossy renditions were encoded at instead, if any kept
 * the animation: the search scores still pictures.
 */
function animatedUnsearched(settings: RenderSettings, info: SourceInfo, outputs: readonly Output[]): string | null {
  if (qualityTarget(settings.quality.mode) === null) return null;
  const kept = outputs
    .map((output) => output.format)
    .filter(isLossy)
    .filter((format) => keepsAnimation(info, format));
  if (kept.length === 0) return null;
  const fixed = kept.map((format) => `--${format}-quality ${settings.quality[format]}`).join(', ');
  return (
    `animated (${info.pages} frames): --quality ${settings.quality.mode} scores still pictures, ` +
    `so its ${kept.join(', ')} renditions are at ${fixed}`
  );
}

/**
 * With `--quality auto`, the still renditions too small for SSIMULACRA2 to score (under 8x8: a tiny or
 * a thin original), if any, in words: they keep the fixed quality.
 */
function tooSmallToScore(settings: RenderSettings, info: SourceInfo, outputs: readonly Output[]): string | null {
  if (qualityTarget(settings.quality.mode) === null) return null;
  const lossy = outputs.filter((output) => isLossy(output.format) && !keepsAnimation(info, output.format));
  const keys = RENDITION_KEYS.filter((key) => lossy.some((output) => !isScorable(output.files[key])));
  if (keys.length === 0) return null;
  const formats = [...new Set(lossy.map((output) => output.format))].filter(isLossy);
  const fixed = formats.map((format) => `--${format}-quality ${settings.quality[format]}`).join(', ');
  const sizes = [...new Set(keys.map((key) => `${lossy[0]!.files[key].width}x${lossy[0]!.files[key].height}`))];
  const which = keys.length === RENDITION_KEYS.length ? 'all its renditions' : `its ${keys.join(', ')} renditions`;
  return (
    `${which} (${sizes.length > 1 ? `${sizes[0]} to ${sizes.at(-1)}` : sizes[0]}) are too small for ` +
    `--quality ${settings.quality.mode} to score (SSIMULACRA2 needs ${SCORABLE_SIZE} pixels): at ${fixed}`
  );
}

/**
 * With `--quality auto`, the renditions whose highest quality stays under the score aimed at (the
 * target, TILE_MARGIN over it on a sample of tiles), if any, in words, with why where a setting says.
 */
function underTarget(settings: RenderSettings, format: OutputFormat, written: Renditions) {
  const target = qualityTarget(settings.quality.mode);
  if (target === null) return null;
  const aim = (key: RenditionKey) => aimOf(target, written[key].scored ?? 'rendition');
  const under = RENDITION_KEYS.filter((key) => (written[key].score ?? Number.POSITIVE_INFINITY) < aim(key));
  if (under.length === 0) return null;
  const scores = under
    .map((key) => {
      const { score, quality, scored } = written[key];
      return `${key} ${score}${scored === 'tiles' ? ` on tiles (aiming at ${aim(key)})` : ''} at quality ${quality}`;
    })
    .join(', ');
  let hint = '';
  if (format === 'webp') hint = ' (lossy WebP always halves colour resolution)';
  if (format === 'jpeg' && settings.jpeg.chroma === '4:2:0') {
    hint = ' (4:2:0 chroma halves colour resolution; --jpeg-chroma 4:4:4 keeps it)';
  }
  return `SSIMULACRA2 ${target} not reached by ${format}${hint}: ${scores}; kept at the highest quality tried`;
}

/** The bytes of an output's files, each file once (lg and xl of a small original are one file). */
const totalBytes = (renditions: Renditions) =>
  [...new Map(Object.values(renditions).map((file) => [file.path, file.bytes])).values()].reduce((a, b) => a + b, 0);

/**
 * The alternates whose files weigh more than the primary's (a WebP of a flat PNG, a JPEG of line art),
 * in words, if any: offering them would make a browser download more for the same picture, so
 * markup (`pictureHtml`) leaves them out.
 */
function largerAlternates(outputs: Output[], renditions: Array<Renditions | undefined>): string | null {
  const [primary, ...alternates] = renditions.map((each) => (each ? totalBytes(each) : undefined));
  if (primary === undefined) return null;
  const larger = alternates.flatMap((bytes, index) =>
    bytes !== undefined && bytes > primary ? [`${outputs[index + 1]!.format} (${formatBytes(bytes)})`] : [],
  );
  if (larger.length === 0) return null;
  return (
    `its ${larger.join(', ')} alternate renditions are larger than its ${outputs[0]!.format} ones ` +
    `(${formatBytes(primary)}): markup leaves them out, as a browser would download more for the same picture`
  );
}

/**
 * Why a PNG rendition at its PNG original's own pixel size came out larger than the original file,
 * if it did: the original was compressed harder than libpng does at these settings.
 */
function largerPng(
  info: SourceInfo,
  format: OutputFormat,
  written: ManifestEntry['renditions'],
  originalBytes: number | undefined,
): string | null {
  if (format !== 'png' || info.format !== 'png' || originalBytes === undefined) return null;
  const same = Object.values(written).find((f) => f.width === info.size.width && f.height === info.size.height);
  if (!same || same.bytes <= originalBytes) return null;
  return (
    `its ${same.width}x${same.height} PNG rendition (${same.bytes} bytes) is larger than the original file ` +
    `(${originalBytes} bytes) at the same size: the original is compressed harder than libpng at these settings; ` +
    'try --png-compression 9, --png-palette lossy, or --format webp'
  );
}

/** The files an entry names: its renditions, and those of earlier renderings kept under its key. */
const namedBy = (entry: ManifestEntry) => [
  ...Object.values(entry.renditions).map((file) => file.path),
  ...(entry.kept ?? []),
];

/** The files the manifest's renderings of `source` wrote (and kept) that none of `outputs` writes. */
function staleFiles(recorded: Record<string, ManifestEntry>, source: string, outputs: Output[]): string[] {
  // Arrays, not sets: a few files each, for every original of a rerun.
  const written = outputs.flatMap((output) => RENDITION_KEYS.map((key) => output.files[key].path));
  const stale: string[] = [];
  for (const entry of Object.values(recorded)) {
    if (entry.source !== source) continue;
    for (const file of namedBy(entry)) if (!written.includes(file) && !stale.includes(file)) stale.push(file);
  }
  return stale.sort();
}

/**
 * Without `prune`, the files an output's earlier record named that its new renditions do not (another
 * naming), for its new record to keep naming: a later `--prune` finds them there.
 */
function keptFrom(previous: ManifestEntry | undefined, renditions: Renditions, prune: boolean): { kept?: string[] } {
  if (!previous || prune) return {};
  const written = new Set(Object.values(renditions).map((file) => file.path));
  const kept = [...new Set(namedBy(previous))].filter((file) => !written.has(file)).sort();
  return kept.length > 0 ? { kept } : {};
}

/**
 * Whether an original recorded earlier is still there: a file that exists, or any object in a
 * bucket (not looked up).
 */
const stillThere = (source: string) =>
  isS3Url(source)
    ? Promise.resolve(true)
    : stat(source).then(
        (info) => info.isFile(),
        () => false,
      );

/**
 * Encodes each output's renditions from one decode and stages them unseen; once all are there
 * and `verify` passes, makes them appear together. On failure none appears. Returns each
 * output's records, in the order of `outputs`.
 */
async function writeRenditions(
  context: Context,
  original: Original,
  input: string | Buffer,
  info: SourceInfo,
  outputs: Output[],
  verify: () => Promise<void>,
): Promise<{ written: Renditions[]; smallest: Buffer }> {
  const staged: Staged[] = [];
  const written = outputs.map(() => ({}) as Renditions);
  let smallest: Buffer | undefined;
  const formats = outputs.map((output) => output.format);
  const from = placeholderFrom(formats);
  try {
    const { settings, scores } = context;
    for await (const rendition of encodeRenditions(original.source, input, info, settings, formats, scores)) {
      const at = formats.indexOf(rendition.format);
      const version = renditionVersion(rendition.data);
      for (const key of rendition.keys) {
        const file = outputs[at]!.files[key];
        if (file.width !== rendition.size.width || file.height !== rendition.size.height) {
          throw new SourceError(
            'CONTENT_API_RENDER_FAILED',
            original.source,
            `${key} came out ${rendition.size.width}x${rendition.size.height}, planned ${file.width}x${file.height}`,
          );
        }
        const headers = {
          contentType: MEDIA_TYPES[path.posix.extname(file.path)],
          cacheControl: objectCacheControl(context.settings.urlVersions),
        };
        staged.push(await context.store.stage(file.path, rendition.data, headers));
        if (key === 'xs' && at === from) smallest = rendition.data;
        written[at]![key] = {
          ...file,
          bytes: rendition.data.length,
          version,
          ...rendition.measured,
          ...(rendition.fingerprint && { fingerprint: rendition.fingerprint }),
        };
      }
    }
    await verify();
    await Promise.all(staged.map((object) => object.commit()));
    // In xs..xl order, whatever order the encodes finished in: the manifest is the same every run.
    return {
      written: written.map(
        (renditions) => Object.fromEntries(RENDITION_KEYS.map((key) => [key, renditions[key]])) as Renditions,
      ),
      smallest: smallest!,
    };
  } catch (error) {
    await Promise.all(staged.map((object) => object.discard()));
    if (error instanceof SourceError) throw error;
    const reason = failureReason(error);
    throw new SourceError('CONTENT_API_RENDER_FAILED', original.source, `cannot write renditions (${reason})`, {
      cause: error,
    });
  }
}
