/**
 * One original of a batch (render.ts): decide whether it is up to date, render it, write its
 * files through the store so they appear whole, record it, remove what it no longer writes.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { failureReason, oneLine, SourceError } from '../errors.js';
import type { Measured } from '../quality/auto.js';
import { MEDIA_CACHE_CONTROL, MEDIA_TYPES } from '../storage/media-headers.js';
import { isS3Url } from '../storage/s3-url.js';
import { type MediaStore, type Staged, sameStamp } from '../storage/store.js';
import type { Claims } from './claims.js';
import type { Original } from './discover.js';
import type { OutputFormat } from './formats.js';
import { buildImageObject, type ImageObject, type RenditionFile } from './image-object.js';
import { isIntact, type Manifest, type ManifestEntry } from './manifest.js';
import type { RenderOptions } from './options.js';
import { type EncodeSettings, encodeRenditions, readSourceInfo, type SourceInfo } from './pipeline.js';
import type { Plan } from './plan.js';
import { type PixelSize, RENDITION_KEYS, type RenditionKey } from './rules.js';
import { qualityTarget, type RenderSettings, settingsKey } from './settings.js';
import { changed, readAndHash, type SourceBytes, stampOf } from './source-bytes.js';

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
   * With `--quality auto`, for a lossy format: each rendition's encoder quality and SSIMULACRA2
   * score (as recorded when it was rendered, for one up to date).
   */
  measured?: Record<RenditionKey, Measured>;
  /**
   * Files an earlier rendering of this original wrote (in another format or naming) that
   * this one does not: removed, or, `planned`, to be removed. Paths under the output folder.
   */
  removed: string[];
}

/** What rendering one original needs from its batch. */
export interface Context {
  options: RenderOptions;
  settings: RenderSettings;
  /** Where the renditions go. */
  store: MediaStore;
  /** The manifest's entries for this run's images, as the run began. */
  entries: Record<string, ManifestEntry>;
  manifest: Manifest;
  /** Claims on images' keys (a local folder only); released once the manifest is written. */
  claims: Claims | null;
  releases: Array<() => Promise<void>>;
  /** The batch's warnings, for what an original's rendering has to say (it still renders). */
  warnings: string[];
}

/**
 * Renders one planned original: skipped when its hash, settings and files say it is up to
 * date; else its five renditions are encoded, staged, made to appear together, and then
 * recorded in the manifest; files of an earlier rendering it no longer writes are removed.
 */
export async function renderOne(context: Context, plan: Plan): Promise<RenderResult> {
  const { settings, options, store, manifest } = context;
  const { original, info, format, files } = plan;
  const source = original.data || original.object ? original.source : path.resolve(original.source);
  const result = (status: RenderStatus, recorded?: ManifestEntry['renditions']): RenderResult => ({
    source: original.source,
    status,
    original: info.size,
    format,
    files,
    ...measuredOf(recorded),
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
    if (
      previous &&
      previous.source !== source &&
      previous.sha256 !== sha256 &&
      !options.force &&
      (await stillThere(previous.source))
    ) {
      // Bytes in memory are a rendition downloaded by `render --page`: the original itself is the better source.
      const way = original.data ? 'render from that original (--originals)' : 'rename one';
      const reason =
        `would overwrite the renditions of ${previous.source}, rendered into this folder earlier ` +
        `(both are '${plan.key}'); ${way}, or use --force to replace them`;
      throw new SourceError('CONTENT_API_NAME_COLLISION', original.source, reason);
    }
    const upToDate = previous?.sha256 === sha256 && previous.settings === key && (await isIntact(store, previous));
    if (upToDate && !options.force) {
      // Hashed again (touched, moved, copied, or a manifest from before stamps): the same
      // content, so remember where it is now and its stamp, for the next run's fast path.
      if (
        stamp &&
        (!sameStamp(previous.stamp, stamp) || previous.source !== source || !previous.info) &&
        !options.dryRun
      ) {
        // Only spares the next run a hash (or a header read): not having it recorded is no failure.
        const { size, ...header } = info;
        await manifest
          .set(plan.key, { ...previous, source, stamp: settled, original: size, info: header })
          .catch(() => undefined);
      }
      return result('skipped', previous.renditions);
    }
    if (options.dryRun) return result('planned');
    bytes ??= await readAndHash(original, stamp);
    if (context.claims && !options.force) {
      const claim = await context.claims
        .claim(plan.key, source, bytes.sha256, stillThere)
        .catch((error: NodeJS.ErrnoException) => {
          throw new SourceError(
            'CONTENT_API_RENDER_FAILED',
            original.source,
            `cannot write renditions (${failureReason(error)})`,
            { cause: error },
          );
        });
      if (!claim.ok) {
        const reason =
          `would overwrite the renditions of ${claim.holder}, rendered into this folder by another run ` +
          `(both are '${plan.key}'); rename one, or use --force to replace them`;
        throw new SourceError('CONTENT_API_NAME_COLLISION', original.source, reason);
      }
      context.releases.push(claim.release);
    }

    const now = await readSourceInfo(original.source, bytes.input, settings.pixelLimit);
    if (now.format !== info.format || now.size.width !== info.size.width || now.size.height !== info.size.height)
      throw changed(original);
    // A local file is read by libvips as it renders: it must still be the file that was hashed.
    const unchanged = async () => {
      if (!original.data && !original.object && !sameStamp((await stampOf(original)).stamp, stamp))
        throw changed(original);
    };
    const written = await writeRenditions(context, original, bytes.input, info, format, files, unchanged);
    const larger = largerPng(info, format, written, original.data?.length ?? stamp?.size);
    if (larger) context.warnings.push(`${original.source}: ${larger}`);
    const under = underTarget(settings, format, written);
    if (under) context.warnings.push(`${original.source}: ${under}`);
    const { size, ...header } = info;
    const entry: ManifestEntry = {
      source,
      sha256: bytes.sha256,
      stamp: settled,
      settings: key,
      original: size,
      info: header,
      renditions: written,
    };
    await manifest.set(plan.key, entry).catch((error: unknown) => {
      throw unrecorded(original.source, error);
    });
    // Earlier renderings of the same original (another naming, or another format and so
    // another key) leave files this one no longer writes: remove them.
    const rendered = result('rendered', written);
    try {
      for (const old of rendered.removed) await store.remove(old);
      for (const [oldKey, entry] of Object.entries(context.entries)) {
        if (entry.source === source && oldKey !== plan.key) await manifest.delete(oldKey);
      }
    } catch (error) {
      throw new SourceError(
        'CONTENT_API_RENDER_FAILED',
        original.source,
        `rendered, but an earlier rendering's files could not be removed (${oneLine(error)})`,
        { cause: error },
      );
    }
    return rendered;
  } finally {
    await bytes?.release();
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

/** With `--quality auto`, the renditions whose highest quality stays under the target, if any, in words. */
function underTarget(settings: RenderSettings, format: OutputFormat, written: ManifestEntry['renditions']) {
  const target = qualityTarget(settings.quality.mode);
  if (target === null) return null;
  const under = RENDITION_KEYS.filter((key) => (written[key].score ?? target) < target);
  if (under.length === 0) return null;
  const scores = under.map((key) => `${key} ${written[key].score} at quality ${written[key].quality}`).join(', ');
  const hint = format === 'webp' ? ' (lossy WebP always halves colour resolution)' : '';
  return `SSIMULACRA2 ${target} not reached by ${format}${hint}: ${scores}; kept at the highest quality tried`;
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

/** The files the manifest's renderings of `source` wrote that `files` does not include. */
function staleFiles(
  entries: Record<string, ManifestEntry>,
  source: string,
  files: Record<RenditionKey, RenditionFile>,
): string[] {
  const kept = new Set(Object.values(files).map((file) => file.path));
  const earlier = Object.values(entries)
    .filter((entry) => entry.source === source)
    .flatMap((entry) => Object.values(entry.renditions).map((file) => file.path));
  return [...new Set(earlier)].filter((file) => !kept.has(file)).sort();
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
  const encode: EncodeSettings = { ...context.settings, format };
  const staged: Staged[] = [];
  const written = {} as ManifestEntry['renditions'];
  try {
    for await (const rendition of encodeRenditions(original.source, input, info, encode)) {
      for (const key of rendition.keys) {
        const file = files[key];
        if (file.width !== rendition.size.width || file.height !== rendition.size.height) {
          throw new SourceError(
            'CONTENT_API_RENDER_FAILED',
            original.source,
            `${key} came out ${rendition.size.width}x${rendition.size.height}, planned ${file.width}x${file.height}`,
          );
        }
        const headers = { contentType: MEDIA_TYPES[path.posix.extname(file.path)], cacheControl: MEDIA_CACHE_CONTROL };
        staged.push(await context.store.stage(file.path, rendition.data, headers));
        written[key] = {
          ...file,
          bytes: rendition.data.length,
          ...rendition.measured,
          ...(rendition.fingerprint && { fingerprint: rendition.fingerprint }),
        };
      }
    }
    await verify();
    await Promise.all(staged.map((object) => object.commit()));
    // In xs..xl order, whatever order the encodes finished in: the manifest is the same every run.
    return Object.fromEntries(RENDITION_KEYS.map((key) => [key, written[key]])) as ManifestEntry['renditions'];
  } catch (error) {
    await Promise.all(staged.map((object) => object.discard()));
    if (error instanceof SourceError) throw error;
    const reason = failureReason(error);
    throw new SourceError('CONTENT_API_RENDER_FAILED', original.source, `cannot write renditions (${reason})`, {
      cause: error,
    });
  }
}
