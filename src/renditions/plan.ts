/**
 * Before anything is written, each original's header is read to know its output format and
 * so the exact files it will write; two originals that would write the same file are an
 * error for both.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { SourceError, someOf } from '../errors.js';
import { readSourceInfo, type SourceInfo } from './decode.js';
import type { Original } from './discover.js';
import { FILE_EXTENSIONS, type OutputFormat, outputFormatsFor, unsupportedReason } from './formats.js';
import type { RenditionFile } from './image-object.js';
import {
  type NamingStyle,
  RENDITION_BOXES,
  RENDITION_KEYS,
  type RenditionKey,
  renditionFileName,
  renditionSizes,
} from './rules.js';
import type { RenderSettings } from './settings.js';
import { readAndHash } from './source-bytes.js';

/** What planning reads of a batch's settings. */
export type PlanSettings = Pick<RenderSettings, 'naming' | 'formats' | 'pixelLimit'>;

/** The five files of an original in one format. */
export interface Output {
  format: OutputFormat;
  /** Its identity under the output folder: `<folders>/<name>.<ext>` (also its manifest key). */
  key: string;
  files: Record<RenditionKey, RenditionFile>;
}

/** What an original will become: its primary output (the Image object's), and its alternates. */
export interface Plan extends Output {
  original: Original;
  info: SourceInfo;
  /** The same renditions in the other formats `--formats` lists, in its order. */
  alternates: Output[];
}

/** A plan's outputs, the primary first. */
export const outputsOf = (plan: Plan): Output[] => [plan, ...plan.alternates];

/**
 * Reads the original's header (not its pixels) and plans its five files; `known` is the
 * header as recorded when the original is known unchanged, and spares the read.
 */
export async function planOriginal(original: Original, settings: PlanSettings, known?: SourceInfo): Promise<Plan> {
  const info =
    known ??
    (original.object
      ? await objectInfo(original, original.object, settings.pixelLimit)
      : await readSourceInfo(
          original.source,
          original.data ?? (await checkedPath(original.source)),
          settings.pixelLimit,
        ));
  const unsupported = unsupportedReason(info);
  if (unsupported) throw new SourceError('CONTENT_API_UNSUPPORTED_FORMAT', original.source, unsupported);
  const [primary, ...alternates] = outputFormatsFor(info, settings.formats).map((format): Output => {
    const ext = FILE_EXTENSIONS[format];
    return { format, key: `${original.stem}.${ext}`, files: plannedFiles(original.stem, info, ext, settings.naming) };
  });
  return { original, info, ...primary!, alternates };
}

function plannedFiles(
  stem: string,
  info: SourceInfo,
  ext: string,
  naming: NamingStyle,
): Record<RenditionKey, RenditionFile> {
  const sizes = renditionSizes(info.size);
  const dir = path.posix.dirname(stem);
  const entries = RENDITION_KEYS.map((key) => {
    const name = renditionFileName(path.posix.basename(stem), RENDITION_BOXES[key], ext, naming);
    return [key, { path: dir === '.' ? name : `${dir}/${name}`, ...sizes[key] }] as const;
  });
  return Object.fromEntries(entries) as Record<RenditionKey, RenditionFile>;
}

/** The path, once it is known to be a readable, non-empty regular file. */
async function checkedPath(source: string): Promise<string> {
  const info = await stat(source).catch((error: NodeJS.ErrnoException) => {
    throw new SourceError('CONTENT_API_UNREADABLE', source, `cannot read (${error.code ?? error.message})`, {
      cause: error,
    });
  });
  if (info.isDirectory()) throw new SourceError('CONTENT_API_UNREADABLE', source, 'is a folder');
  if (info.size === 0) throw new SourceError('CONTENT_API_EMPTY_FILE', source, 'file is empty');
  return source;
}

/** Header reads of an object in a bucket, smallest first: almost every image's header fits the first. */
const HEAD_SIZES = [64 * 1024, 1024 * 1024, 16 * 1024 * 1024];

/**
 * An object's header, from its first bytes (ranged reads), growing the read while the header
 * is longer; a header not found in them (a TIFF whose directory is at the end) is read from
 * a temporary copy of the whole object.
 */
async function objectInfo(
  original: Original,
  object: NonNullable<Original['object']>,
  pixelLimit: number,
): Promise<SourceInfo> {
  if (object.stamp.size === 0) throw new SourceError('CONTENT_API_EMPTY_FILE', original.source, 'object is empty');
  for (const size of HEAD_SIZES) {
    const head = await object.store.readHead(object.key, size).catch((error: Error) => {
      throw new SourceError(
        'CONTENT_API_UNREADABLE',
        original.source,
        `cannot read (${error.message.replace(`${original.source}: `, '')})`,
        { cause: error },
      );
    });
    if (head === null)
      throw new SourceError('CONTENT_API_UNREADABLE', original.source, 'no such object (removed since it was listed)');
    try {
      return await readSourceInfo(original.source, head, pixelLimit);
    } catch (error) {
      // Cut short, a header can look corrupt or of no known format; over the limit is an answer.
      if (head.length < size || (error as SourceError).code === 'CONTENT_API_PIXEL_LIMIT') throw error;
    }
  }
  const copy = await readAndHash(original, object.stamp);
  try {
    return await readSourceInfo(original.source, copy.input, pixelLimit);
  } finally {
    await copy.release();
  }
}

/**
 * Plans that share a key would write the same files (`Photo.jpg` and `photo.jpeg`, `scan.tif`
 * and `scan.jpg`, or `photo.jpg`'s WebP alternate and `photo.webp`): each becomes a failure
 * naming the other(s), three at most, by the first key it shares.
 */
export function splitCollisions(plans: Plan[]): { plans: Plan[]; errors: SourceError[] } {
  const byKey = new Map<string, Plan[]>();
  for (const plan of plans) {
    for (const { key } of outputsOf(plan)) {
      const group = byKey.get(key);
      if (group) group.push(plan);
      else byKey.set(key, [plan]);
    }
  }
  const result = { plans: [] as Plan[], errors: [] as SourceError[] };
  const failed = new Set<Plan>();
  for (const plan of plans) {
    if (outputsOf(plan).every(({ key }) => byKey.get(key)!.length === 1)) result.plans.push(plan);
  }
  for (const [key, group] of byKey) {
    if (group.length === 1) continue;
    for (const plan of group) {
      if (failed.has(plan)) continue;
      failed.add(plan);
      const others = someOf(group.filter((p) => p !== plan).map((p) => p.original.source));
      const which = group.length === 2 ? 'both are' : `all ${group.length} are`;
      // Downloaded renditions cannot be renamed: say why their names meet instead.
      const advice = plan.original.data
        ? 'the naming rule folds case, accents and punctuation together; neither is rendered'
        : 'rename one';
      const reason = `would write the same renditions as ${others} (${which} '${key}' in the output folder); ${advice}`;
      result.errors.push(new SourceError('CONTENT_API_NAME_COLLISION', plan.original.source, reason));
    }
  }
  return result;
}
