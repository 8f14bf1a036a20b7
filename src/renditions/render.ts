/**
 * `render`: originals in, five renditions and an Image object out, for a whole batch.
 * Each original fails alone; files appear whole or not at all; unchanged originals whose
 * files are intact are skipped, by the manifest.
 */
import type { SourceError } from '../errors.js';
import { discoverOriginals, type Original } from './discover.js';
import { isLossy } from './formats.js';
import type { RenderOptions } from './options.js';
import type { RenderCounts, RenderResult } from './result.js';
import { openRenderSession } from './session.js';
import { qualityTarget, type RenderSettings, resolveSettings } from './settings.js';
import { inShard } from './shard.js';

export type { RenderOptions, RenderProgress } from './options.js';
export type { AlternateResult, RenderCounts, RenderResult, RenderStatus } from './result.js';

export interface RenderFailure {
  source: string;
  code: string;
  error: string;
}

export interface RenderReport {
  /** Each original's result, in the order of their sources; none with `collectResults: false`. */
  results: RenderResult[];
  /** Originals by how they ended, and files of earlier renderings removed and kept. */
  counts: RenderCounts;
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
    return { ...rendered, warnings: [...settingsWarnings(settings), ...discovered.warnings, ...rendered.warnings] };
  } finally {
    await Promise.all(discovered.stores.map((store) => store.close()));
  }
}

/**
 * Renders originals already named with their place under the output folder (`stem`),
 * files or bytes in memory: what `render --page` does once it has found each image's source.
 */
export async function renderSources(originals: Original[], options: RenderOptions): Promise<RenderReport> {
  const settings = resolveSettings(options);
  const rendered = report(await runBatch(originals, [], settings, options));
  return { ...rendered, warnings: [...settingsWarnings(settings), ...rendered.warnings] };
}

/** Renders one original file; throws its `SourceError` if it fails. */
export async function renderOriginal(source: string, options: RenderOptions): Promise<RenderResult> {
  const settings = resolveSettings(options);
  const discovered = await discoverOriginals([source], options.outDir, options.s3);
  try {
    const { results, errors } = await runBatch(discovered.originals, discovered.failures, settings, {
      ...options,
      concurrency: 1,
    });
    if (errors[0]) throw errors[0];
    return results[0]!;
  } finally {
    await Promise.all(discovered.stores.map((store) => store.close()));
  }
}

/** What the settings ask for that no original can give, or that some visitors cannot see, said once for the batch. */
function settingsWarnings(settings: RenderSettings): string[] {
  return [qualityWarning(settings), fallbackWarning(settings)].filter((warning) => warning !== null);
}

function qualityWarning({ formats, quality }: RenderSettings): string | null {
  if (qualityTarget(quality.mode) === null) {
    return quality.sample ? null : '--no-quality-sample does nothing with --quality fixed: it is for --quality auto';
  }
  if (formats.some((choice) => choice === 'keep' || isLossy(choice))) return null;
  return (
    `--quality ${quality.mode} searches nothing here: ${formats.join(', ')} renditions are lossless ` +
    '(it chooses the quality of jpeg, webp and avif)'
  );
}

/** Formats every client shows: the primary (`<img>`, the Image object's URLs) should be one of them. */
const SHOWN_EVERYWHERE = new Set(['keep', 'jpeg', 'png']);

/**
 * Alternates with no fallback (`--formats avif,webp`): the `<img>` and the Image object's URLs get the
 * first. (One format alone, `--format webp`, is a choice made knowingly: nothing is said.)
 */
function fallbackWarning({ formats }: RenderSettings): string | null {
  if (formats.length < 2 || formats.some((choice) => SHOWN_EVERYWHERE.has(choice))) return null;
  return (
    `--formats ${formats.join(',')}: no format every client shows, so the Image object's URLs and the <img> of ` +
    `--html are ${formats[0]}, which some browsers, mail clients and feed readers do not show; ` +
    `put keep (or jpeg, png) first: --formats keep,${formats.join(',')}`
  );
}

function report({ results, errors, warnings, notStarted, counts }: Awaited<ReturnType<typeof runBatch>>): RenderReport {
  return {
    results,
    counts,
    failures: errors.map((error) => ({ source: error.source, code: error.code, error: error.message })),
    warnings,
    notStarted,
  };
}

async function runBatch(
  originals: Original[],
  failures: SourceError[],
  settings: RenderSettings,
  options: RenderOptions,
) {
  const session = await openRenderSession(options, settings);
  try {
    return await session.render(originals, failures);
  } finally {
    await session.close();
  }
}
