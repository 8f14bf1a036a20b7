/**
 * What a render is asked to do: the settings that shape the files (settings.ts), and how the
 * batch runs (where, how many at once, what to report).
 */
import { availableParallelism } from 'node:os';
import { InvalidArgumentError } from '../errors.js';
import type { ScorePool } from '../quality/score-pool.js';
import type { S3Options } from '../storage/s3-url.js';
import type { Original } from './discover.js';
import type { RenderSettingsInput } from './settings.js';
import type { Shard } from './shard.js';

export interface RenderOptions extends RenderSettingsInput {
  /** Output folder, or `s3://bucket/prefix/`; renditions keep the originals' folder structure below it. */
  outDir: string;
  /** Make the output folder when it is not there (default true). */
  createOutDir?: boolean;
  /** How to reach S3 for `s3://` locations (default: the AWS SDK's environment and config files). */
  s3?: S3Options;
  /** Originals rendered at once (default: the machine's cores). */
  concurrency?: number | undefined;
  /** Render every original again, even when the manifest says it is up to date. */
  force?: boolean;
  /** Plan only: report what would be written, write nothing. */
  dryRun?: boolean;
  /**
   * Remove the files of earlier renderings of the originals rendered that this run no longer writes
   * (a format no longer listed, another naming), and their records. Without it nothing is removed:
   * the report counts those files as `kept`.
   */
  prune?: boolean;
  /**
   * Keep each original's result in the report (default true). False: only the counts, failures and
   * warnings, so that memory stays bounded however many originals a batch has.
   */
  collectResults?: boolean;
  /** The alt text of an original's Image object (default: null). */
  altText?: (original: Original) => string | null | undefined;
  /** Called after each original, rendered, skipped or failed. */
  onProgress?: (event: RenderProgress) => void;
  /** Stops starting new originals; those under way finish. */
  signal?: AbortSignal;
  /** Render only this shard of the originals (see `shardOf`); all shards together are the whole batch. */
  shard?: Shard | undefined;
  /**
   * Where `--quality auto` scores its trials: the caller's pool, left open (default: a pool of the
   * batch's own, closed with it).
   */
  scorePool?: ScorePool | undefined;
}

export interface RenderProgress {
  /** Originals finished (rendered, skipped, planned or failed). */
  done: number;
  total: number;
  /** The original this event is about. */
  source: string;
  /** `started`: the original is now under way; else how it finished. */
  status: 'rendered' | 'skipped' | 'planned' | 'failed' | 'started';
  /** The originals under way after this event, in the order they started. */
  active: string[];
}

/** `concurrency`, checked; the machine's cores when left out. */
export function resolveConcurrency(concurrency: number | undefined): number {
  const value = concurrency ?? availableParallelism();
  if (!Number.isInteger(value) || value < 1) {
    throw new InvalidArgumentError(`Expected a positive integer for concurrency but got ${value}`);
  }
  return value;
}
