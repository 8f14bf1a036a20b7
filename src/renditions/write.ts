/**
 * An original's files written: every output encoded from one decode (cascade.ts), staged unseen and
 * made to appear together; and what an up-to-date original's records lack, read from its files as
 * stored (a placeholder, its files' versions).
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { failureReason, SourceError } from '../errors.js';
import type { ScorePool } from '../quality/score-pool.js';
import { MEDIA_TYPES, objectCacheControl } from '../storage/media-headers.js';
import type { MediaStore, Staged } from '../storage/store.js';
import { encodeRenditions } from './cascade.js';
import type { SourceInfo } from './decode.js';
import type { Original } from './discover.js';
import { keepsAlpha, type OutputFormat } from './formats.js';
import type { ManifestEntry } from './manifest.js';
import { type Placeholder, placeholderOf } from './placeholder.js';
import type { Output } from './plan.js';
import { RENDITION_KEYS, type RenditionKey, renditionVersion, versionOfSha256 } from './rules.js';
import type { RenderSettings } from './settings.js';

type Renditions = ManifestEntry['renditions'];

/** What writing needs of its batch. */
export interface Writing {
  settings: RenderSettings;
  store: MediaStore;
  scores: ScorePool | undefined;
}

/**
 * Encodes each output's renditions from one decode and stages them unseen; once all are there
 * and `verify` passes, makes them appear together. On failure none appears. Returns each
 * output's records, in the order of `outputs`.
 */
export async function writeRenditions(
  context: Writing,
  /** The original, its bytes (or path), its header, and whether its pixels are 16-bit RGB. */
  { original, input, info, rgb16 }: { original: Original; input: string | Buffer; info: SourceInfo; rgb16: boolean },
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
    for await (const rendition of encodeRenditions(original.source, input, info, settings, formats, scores, rgb16)) {
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

/** Renditions up to this size are read whole to make a placeholder that a manifest lacks. */
const PLACEHOLDER_SOURCE_BYTES = 4 * 2 ** 20;

/**
 * Which output (by index) a placeholder is made from: the first in a format that keeps transparency, if
 * any is written. A JPEG primary is flattened, where a WebP or AVIF alternate a browser picks instead
 * lets the page show through.
 */
const placeholderFrom = (formats: OutputFormat[]) => Math.max(0, formats.findIndex(keepsAlpha));

/**
 * The placeholder of an original whose `todo` outputs were just written, `smallest` their xs in the
 * format it is judged on: made from it, unless the output it is judged on (a format that keeps
 * transparency) was up to date and not written, when its record's placeholder holds (only a JPEG
 * alternate written again would call a transparent picture opaque, and paint the page under it).
 */
export async function placeholderAfterWrite(
  context: Pick<Writing, 'store'>,
  outputs: Output[],
  todo: Output[],
  previous: Array<ManifestEntry | undefined>,
  smallest: Buffer,
): Promise<Placeholder | undefined> {
  const at = placeholderFrom(outputs.map((output) => output.format));
  const entry = previous[at];
  if (todo.includes(outputs[at]!) || entry === undefined) return placeholderOf(smallest).catch(() => undefined);
  return recordedPlaceholder(context, [entry], [outputs[at]!]);
}

/**
 * The placeholder recorded for an original up to date, or, for a record from before placeholders,
 * one made from its smallest rendition as stored; none when that cannot be read.
 */
export async function recordedPlaceholder(
  context: Pick<Writing, 'store'>,
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

/** Whether every file a record names has its version (records from before versions have none). */
export const isVersioned = (renditions: Record<RenditionKey, { version?: string | undefined }>) =>
  RENDITION_KEYS.every((key) => renditions[key].version !== undefined);

/**
 * A record's renditions, each with its version: hashed from its file, once per file, where a
 * manifest from before versions has none (and then recorded by `refresh`); the same object when
 * none is missing, so an up-to-date original reads no file.
 */
export async function recordedVersions(
  store: MediaStore,
  original: Original,
  renditions: Renditions,
): Promise<Renditions> {
  if (isVersioned(renditions)) return renditions;
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
