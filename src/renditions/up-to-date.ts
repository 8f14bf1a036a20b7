/**
 * Whether an original's recorded outputs are up to date, the rules `renderOne` (render-one.ts)
 * decides by: the original unchanged since it was hashed, each output made from its content with
 * these settings, its files there at their sizes; and, where a records folder's index sums up its
 * records, the original skipped from the summaries alone when nothing is left to write.
 */
import path from 'node:path';
import { type MediaStore, type Stamp, sameStamp } from '../storage/store.js';
import { staleFiles } from './earlier.js';
import { isIntact, type RecordSummary } from './manifest.js';
import type { RenderOptions } from './options.js';
import { outputsOf, type Plan } from './plan.js';
import type { RenderOutcome } from './result.js';
import type { RenderSettings } from './settings.js';
import { settingsKey } from './settings-key.js';
import type { Stamped } from './source-bytes.js';
import { isVersioned } from './write.js';

/**
 * Whether a record's original is the file at `source` as it is now (its stamp the one recorded when
 * hashed, its header recorded): then so are its hash and header, and it is not read.
 */
export const sameOriginal = (entry: RecordSummary, source: string, stamp: Stamp | undefined) =>
  entry.source === source && sameStamp(entry.stamp, stamp) && entry.info !== undefined;

/** Whether a record lacks the placeholder a rerun makes: none, or one without `transparent` of an image with alpha. */
export const lacksPlaceholder = (entry: RecordSummary) =>
  !entry.placeholder || (entry.placeholder.transparent === undefined && entry.info?.hasAlpha === true);

/**
 * Whether an output's record says its files are up to date: made from this content (`sha256`) with
 * these settings (`key`), each file there at its recorded size.
 */
export const upToDate = async (store: MediaStore, entry: RecordSummary | undefined, sha256: string, key: string) =>
  Boolean(entry && entry.sha256 === sha256 && entry.settings === key && (await isIntact(store, entry)));

/** Whether a batch may skip originals from their records' summaries: it keeps no results, forces and prunes nothing. */
export const skipsBySummary = (options: RenderOptions) =>
  !options.force && !options.prune && options.collectResults === false;

/**
 * A planned original that `renderOne` would skip with nothing to write, found from its records'
 * summaries alone (a records folder's index: manifest.ts `summariesFor`): each output recorded for
 * this file as stamped now, up to date, its files' versions and a placeholder recorded. Its outcome
 * then, without a read of a record or of the original; else undefined (`renderOne` decides, from the
 * records). Only where the batch may (`skipsBySummary`).
 */
export async function skippedUnchanged(
  context: { options: RenderOptions; settings: RenderSettings; store: MediaStore; threads: number },
  plan: Plan,
  recorded: Record<string, RecordSummary>,
  { stamp }: Stamped,
): Promise<RenderOutcome | undefined> {
  const { options, settings, store } = context;
  const { original } = plan;
  if (!skipsBySummary(options) || original.data || original.object) return undefined;
  const source = path.resolve(original.source);
  const outputs = outputsOf(plan);
  const sha256 = recorded[plan.key]?.sha256;
  for (const output of outputs) {
    const entry = recorded[output.key];
    if (!entry || !sameOriginal(entry, source, stamp) || lacksPlaceholder(entry) || !isVersioned(entry.renditions))
      return undefined;
    const key = settingsKey(settings, output.format, { threads: context.threads });
    if (sha256 === undefined || !(await upToDate(store, entry, sha256, key))) return undefined;
  }
  return { status: 'skipped', removed: [], kept: staleFiles(recorded, source, outputs) };
}
