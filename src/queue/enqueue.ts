/**
 * `render --queue`, first half: finds the originals as a local render would, and enqueues one
 * job per image under the output folder, with the settings that shape its files. The batch
 * (its jobs, and what discovery found) is recorded for `queue results`.
 */
import path from 'node:path';
import { InvalidArgumentError } from '../errors.js';
import { discoverOriginals, type Original } from '../renditions/discover.js';
import type { RenderOptions } from '../renditions/render.js';
import { resolveSettings } from '../renditions/settings.js';
import { inShard } from '../renditions/shard.js';
import { openStore } from '../storage/location.js';
import { isS3Url } from '../storage/s3-url.js';
import { type QueueConnection, redisNow, withBull } from './connection.js';
import {
  ATTEMPTS,
  BACKOFF_MS,
  type BatchRecord,
  batchId,
  type JobData,
  type JobTemplate,
  jobId,
  PROTOCOL,
  RESULT_TTL_SECONDS,
} from './protocol.js';

/** A local render's options, but for a dry run (done here) and a concurrency (the workers have theirs). */
export type EnqueueOptions = Omit<RenderOptions, 'concurrency' | 'dryRun' | 'altText' | 'onProgress' | 'signal'>;

/** The job options every render job is added with. */
export const JOB_OPTIONS = {
  attempts: ATTEMPTS,
  backoff: { type: 'exponential', delay: BACKOFF_MS },
  removeOnComplete: true,
  removeOnFail: true,
} as const;

const CHUNK = 1_000;

/**
 * Enqueues a batch; returns its record. Throws for bad options or inputs that cannot be listed
 * at all. Aborted (`signal`) before anything is written, it throws the signal's reason; after,
 * it adds no more jobs and returns: the batch's report cancels those it added.
 */
export async function enqueueRender(
  inputs: string[],
  options: EnqueueOptions,
  queue: QueueConnection,
  signal?: AbortSignal,
): Promise<BatchRecord> {
  const settings = resolveSettings(options);
  const local = !isS3Url(options.outDir);
  const discovered = await discoverOriginals(inputs, options.outDir, options.s3);
  await Promise.all(discovered.stores.map((store) => store.close()));
  const { shard } = options;
  const originals = inShard(discovered.originals, shard);
  if (originals.some((original) => original.data))
    throw new InvalidArgumentError('originals in memory cannot be queued');
  signal?.throwIfAborted();
  // An output that cannot be written is exit 2 here, as in a local run, not a failure per original later.
  const out = await openStore(options.outDir, options.s3);
  try {
    await out.open({ write: true, create: true });
  } finally {
    await out.close();
  }

  // Workers may run anywhere: local paths are made absolute (the folder must be theirs too).
  const template: JobTemplate = {
    protocol: PROTOCOL,
    outDir: local ? path.resolve(options.outDir) : options.outDir,
    settings,
    force: options.force ?? false,
  };
  const id = batchId();
  const groups = byStem(originals);
  const jobs = groups.map(
    (group): JobData => ({
      ...template,
      originals: group.map(({ source, stem }) => ({ source: isS3Url(source) ? source : path.resolve(source), stem })),
      batch: id,
    }),
  );

  const record: BatchRecord = {
    protocol: PROTOCOL,
    id,
    created: await redisNow(queue),
    template,
    out: options.outDir,
    jobs: jobs.length,
    originals: originals.length,
    failures: discovered.failures.map((error) => ({ source: error.source, code: error.code, error: error.message })),
    warnings: discovered.warnings,
    ...(shard && { shard }),
  };
  const { keys } = queue;
  // The batch first: a result is this batch's only if it was written after `created`.
  await queue.redis
    .multi()
    .set(keys.batch(record.id), JSON.stringify(record), 'EX', RESULT_TTL_SECONDS)
    .zadd(keys.batches, record.created, record.id)
    .exec();
  for (let start = 0; start < jobs.length; start += CHUNK) {
    const chunk = jobs
      .slice(start, start + CHUNK)
      .map((data, i) =>
        JSON.stringify([jobId(data), data.originals, groups[start + i]!.map((original) => original.source)]),
      );
    await queue.redis
      .multi()
      .rpush(keys.batchJobs(record.id), ...chunk)
      .expire(keys.batchJobs(record.id), RESULT_TTL_SECONDS)
      .exec();
  }
  const added = await addJobs(queue, jobs, signal);
  if (added < jobs.length) {
    // Interrupted: the jobs never added are cancelled, as Ctrl-C cancels those still waiting.
    await queue.redis
      .multi()
      .sadd(keys.batchCancelled(record.id), ...jobs.slice(added).map(jobId))
      .expire(keys.batchCancelled(record.id), RESULT_TTL_SECONDS)
      .exec();
  }
  return record;
}

/**
 * Adds jobs (a job whose id is queued already is left as it is: BullMQ adds nothing), until
 * `signal`; returns how many of `jobs`, from the first, were added.
 */
export async function addJobs(queue: QueueConnection, jobs: JobData[], signal?: AbortSignal): Promise<number> {
  // Marked again, in case Redis lost the mark (restarted empty) since connectQueue looked.
  await queue.redis.set(queue.keys.marker, JSON.stringify({ protocol: PROTOCOL }), 'NX');
  return withBull(queue, async (bull) => {
    let added = 0;
    for (; added < jobs.length && !signal?.aborted; added += CHUNK) {
      const chunk = jobs.slice(added, added + CHUNK);
      await bull.addBulk(chunk.map((data) => ({ name: 'render', data, opts: { ...JOB_OPTIONS, jobId: jobId(data) } })));
    }
    return Math.min(added, jobs.length);
  });
}

/** Originals grouped by stem, in the order found: one job each (names that fold together are rendered together). */
function byStem(originals: Original[]): Original[][] {
  const groups = new Map<string, Original[]>();
  for (const original of originals) groups.set(original.stem, [...(groups.get(original.stem) ?? []), original]);
  return [...groups.values()];
}
