/**
 * One original of a batch (render.ts): decide whether it is up to date (up-to-date.ts), render it,
 * write its files through the store so they appear whole (write.ts), record it, and keep or remove
 * what it no longer writes (earlier.ts); its result (result.ts) and what it has to say (diagnostics.ts).
 */
import path from 'node:path';
import { failureReason, oneLine, SourceError } from '../errors.js';
import type { ScorePool } from '../quality/score-pool.js';
import { type MediaStore, sameStamp } from '../storage/store.js';
import type { Claims } from './claims.js';
import { readSourceHeader } from './decode.js';
import {
  animatedUnsearched,
  firstFrameOnly,
  flattenedAlternates,
  largerAlternates,
  largerPng,
  tooSmallToScore,
  underTarget,
} from './diagnostics.js';
import { keptFrom, removeStale, staleFiles, stillThere } from './earlier.js';
import type { Manifest, ManifestEntry } from './manifest.js';
import type { RenderOptions } from './options.js';
import type { Placeholder } from './placeholder.js';
import { type Output, outputsOf, type Plan } from './plan.js';
import { type Described, describeResult, type RenderOutcome, type RenderStatus } from './result.js';
import type { RenderSettings } from './settings.js';
import { settingsKey } from './settings-key.js';
import { changed, readAndHash, type SourceBytes, type Stamped, stampOf } from './source-bytes.js';
import { lacksPlaceholder, sameOriginal, upToDate } from './up-to-date.js';
import { placeholderAfterWrite, recordedPlaceholder, recordedVersions, writeRenditions } from './write.js';

/** An original rendered whose manifest record could not be written. */
export const unrecorded = (source: string, error: unknown) =>
  new SourceError(
    'CONTENT_API_RENDER_FAILED',
    source,
    `rendered, but not recorded in the manifest (${oneLine(error)}); the next run renders it again`,
    { cause: error },
  );

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
  const described: Described = { plan, outputs, settings, altText: () => options.altText?.(original), removed, kept };
  const result = (
    status: RenderStatus,
    renditions: Array<Renditions | undefined>,
    placeholder?: Placeholder,
  ): RenderOutcome => ({
    status,
    removed,
    kept,
    ...(options.collectResults !== false && { result: describeResult(described, status, renditions, placeholder) }),
  });
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
    // A placeholder made anew: the record had none, or one from before `transparent` of an original with alpha.
    const made = placeholder && lacksPlaceholder(entry);
    const moved = stamp !== undefined && !(sameOriginal(entry, source, stamp) && !made);
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
    const hash = sha256;
    const fresh = await Promise.all(previous.map((entry, index) => upToDate(store, entry, hash, keys[index]!)));
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

    const { info: now, rgb16 } = await readSourceHeader(original.source, bytes.input, settings.pixelLimit);
    if (now.format !== info.format || now.size.width !== info.size.width || now.size.height !== info.size.height)
      throw changed(original);
    // A local file is read by libvips as it renders: it must still be the file that was hashed.
    const unchanged = async () => {
      if (!original.data && !original.object && !sameStamp((await stampOf(original)).stamp, stamp))
        throw changed(original);
    };
    const { written, smallest } = await writeRenditions(
      context,
      { original, input: bytes.input, info, rgb16 },
      todo,
      unchanged,
    );
    const still = [
      firstFrameOnly(info, todo, outputs[0]!.format),
      animatedUnsearched(settings, info, todo),
      tooSmallToScore(settings, info, todo),
    ];
    for (const said of still) if (said) context.warnings.push(`${original.source}: ${said}`);
    const placeholder = await placeholderAfterWrite(context, outputs, todo, previous, smallest);
    const { size, ...header } = info;
    const originalBytes = original.data?.length ?? stamp?.size;
    for (const [index, output] of todo.entries()) {
      const renditions = written[index]!;
      const larger = largerPng(info, output.format, renditions, originalBytes, settings.keepMetadata);
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
    const flattened = flattenedAlternates(outputs, placeholder);
    if (flattened) context.warnings.push(`${original.source}: ${flattened}`);
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
