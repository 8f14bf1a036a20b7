/**
 * Static shards of a batch, for batch systems without a broker (Kubernetes Indexed Jobs, CI
 * matrices, AWS Batch array jobs): shard `index` of `count` renders the originals whose
 * stem hashes to `index`. The partition depends on each original's own stem only, so it is
 * the same on every machine and stable when files are added; originals whose names fold
 * together (`Photo.jpg`, `photo.jpeg`) share a stem and so a shard, where the collision is seen.
 */
import { createHash } from 'node:crypto';
import { escapeText, InvalidArgumentError } from '../errors.js';

export interface Shard {
  /** 0-based. */
  index: number;
  count: number;
}

/** Environment variables that give an array job's index, in the order they are tried by `auto`. */
export const SHARD_INDEX_VARIABLES = ['JOB_COMPLETION_INDEX', 'AWS_BATCH_JOB_ARRAY_INDEX'] as const;

/** The shard a stem (`landscapes/dune`) belongs to. */
export function shardOf(stem: string, count: number): number {
  return createHash('sha256').update(stem).digest().readUInt32BE(0) % count;
}

/** The originals of `shard` (all of them without one). */
export function inShard<T extends { stem: string }>(originals: T[], shard: Shard | undefined): T[] {
  return shard ? originals.filter((original) => shardOf(original.stem, shard.count) === shard.index) : originals;
}

/**
 * `3/16` (0-based) or `auto/16` (the index from the environment). Strict alike for the flag and
 * the variable: digits only, nothing around them (a space is a typo in a job template, never
 * part of a number), so one spelling gives one shard wherever it comes from.
 */
export function parseShard(value: string, env: NodeJS.ProcessEnv = process.env): Shard {
  const match = /^(\d+|auto)\/(\d+)$/.exec(value);
  const count = Number(match?.[2]);
  if (!match || !Number.isSafeInteger(count) || count < 1) {
    throw new InvalidArgumentError(
      `Expected i/n (0 <= i < n) or auto/n for --shard but got '${escapeText(value)}'${spaced(value)}`,
    );
  }
  let text = match[1]!;
  let from = '';
  if (text === 'auto') {
    const variable = SHARD_INDEX_VARIABLES.find((name) => env[name] !== undefined && env[name] !== '');
    if (!variable)
      throw new InvalidArgumentError(
        `--shard ${value}: no shard index in the environment (${SHARD_INDEX_VARIABLES.join(' or ')})`,
      );
    text = env[variable]!;
    from = ` (${variable}=${text})`;
    if (!/^\d+$/.test(text))
      throw new InvalidArgumentError(
        `--shard ${value}: ${variable} is '${escapeText(text)}', not an index${spaced(text)}`,
      );
  }
  const index = Number(text);
  if (index >= count)
    throw new InvalidArgumentError(
      `--shard ${value}: the index${from} must be below ${count} (shards are numbered from 0)`,
    );
  return { index, count };
}

/** Why a value that reads as a shard with its spaces trimmed is refused all the same. */
const spaced = (text: string) => (text !== text.trim() ? ' (spaces around it are not allowed)' : '');
