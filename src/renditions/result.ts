/**
 * What rendering an original says: its result (the files of each format, the Image object, what was
 * measured, removed and kept) and a batch's counts of them.
 */
import type { Measured } from '../quality/auto.js';
import { mediaTypeOf, type OutputFormat, stillOfAnimation } from './formats.js';
import { buildImageObject, type ImageObject, type RenditionFile, renditionUrls } from './image-object.js';
import type { ManifestEntry } from './manifest.js';
import type { Placeholder } from './placeholder.js';
import type { Output, Plan } from './plan.js';
import { buildSrcset, type PixelSize, RENDITION_KEYS, type RenditionKey } from './rules.js';
import type { RenderSettings } from './settings.js';

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
  /**
   * True when the original is an animation the primary format keeps and this one shows its first
   * frame only (an AVIF or PNG of an animated GIF): markup leaves it out. Absent otherwise.
   */
  firstFrameOnly?: true;
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

type Renditions = ManifestEntry['renditions'];

/** What an original's result is made of, besides how it ended and its files. */
export interface Described {
  plan: Plan;
  outputs: Output[];
  settings: RenderSettings;
  /** Its Image object's alt text (asked only when a result is made). */
  altText: () => string | null | undefined;
  removed: string[];
  kept: string[];
}

/** An original's result: `renditions` by output (undefined: none written or recorded), its placeholder. */
export function describeResult(
  { plan, outputs, settings, altText, removed, kept }: Described,
  status: RenderStatus,
  renditions: Array<Renditions | undefined>,
  placeholder?: Placeholder,
): RenderResult {
  const { original, info } = plan;
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
      ...(stillOfAnimation(info, plan.format, alternate.format) && { firstFrameOnly: true as const }),
    })),
    removed,
    kept,
    ...(placeholder && { placeholder }),
    image: buildImageObject(info.size, primary!.files, { mediaUrl, altText: altText(), urlVersions }),
  };
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
    type: mediaTypeOf(output.format),
    files,
    bytes: distinct ? [...distinct.values()].reduce((sum, size) => sum + size, 0) : null,
    ...measuredOf(recorded),
  };
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
