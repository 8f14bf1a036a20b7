/**
 * `render --queue`, first half: finds the originals as a local render would, and enqueues one
 * job per image under the output folder, with the settings that shape its files. The batch
 * (its jobs, and what discovery found) is recorded for `queue results`.
 */
import path from 'node:path';
import { escapeText, InvalidArgumentError, oneLine, QueueError } from '../errors.js';
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
  // Jobs this batch put in the queue (not those it shares with a batch before it), to take out again.
  const put: string[] = [];
  let added: number;
  try {
    // The batch first: a result is this batch's only if it was written after `created`.
    await exec(
      queue.redis
        .multi()
        .set(keys.batch(record.id), JSON.stringify(record), 'EX', RESULT_TTL_SECONDS)
        .zadd(keys.batches, record.created, record.id),
    );
    for (let start = 0; start < jobs.length; start += CHUNK) {
      const chunk = jobs
        .slice(start, start + CHUNK)
        .map((data, i) =>
          JSON.stringify([jobId(data), data.originals, groups[start + i]!.map((original) => original.source)]),
        );
      await exec(
        queue.redis
          .multi()
          .rpush(keys.batchJobs(record.id), ...chunk)
          .expire(keys.batchJobs(record.id), RESULT_TTL_SECONDS),
      );
    }
    added = await addJobs(queue, jobs, signal, put);
  } catch (error) {
    // Redis refused a write (full: maxmemory with noeviction, read-only, ...): nothing half-enqueued stays.
    if (!isReplyError(error)) throw error;
    const left = await withdraw(queue, record.id, put);
    throw new QueueError(
      `${queue.label}: Redis refused to enqueue the batch (${escapeText(oneLine(firstError(error)))}); ` +
        (left
          ? `what was enqueued could not all be taken out (${escapeText(oneLine(left))}): it expires with the batch`
          : 'what was enqueued was taken out again'),
      { cause: error },
    );
  }
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
export async function addJobs(
  queue: QueueConnection,
  jobs: JobData[],
  signal?: AbortSignal,
  put?: string[],
): Promise<number> {
  // Marked again, in case Redis lost the mark (restarted empty) since connectQueue looked.
  await queue.redis.set(queue.keys.marker, JSON.stringify({ protocol: PROTOCOL }), 'NX');
  return withBull(queue, async (bull) => {
    let added = 0;
    for (; added < jobs.length && !signal?.aborted; added += CHUNK) {
      const chunk = jobs.slice(added, added + CHUNK);
      if (put) {
        // Which of them are not queued yet (BullMQ leaves a queued one as it is): `put` gets those.
        const exists = queue.redis.pipeline();
        for (const data of chunk) exists.exists(`${queue.keys.bullPrefix}${jobId(data)}`);
        const found = (await exists.exec()) ?? [];
        put.push(...chunk.filter((_, i) => found[i]?.[1] === 0).map(jobId));
      }
      await bull.addBulk(chunk.map((data) => ({ name: 'render', data, opts: { ...JOB_OPTIONS, jobId: jobId(data) } })));
    }
    return Math.min(added, jobs.length);
  });
}

type Multi = ReturnType<QueueConnection['redis']['multi']>;

/** Runs a MULTI; an error of any command in it is thrown (ioredis resolves with them). */
async function exec(multi: Multi): Promise<void> {
  const replies = (await multi.exec()) ?? [];
  const failed = replies.find(([error]) => error);
  if (failed) throw failed[0];
}

/** An error Redis answered with (`OOM command not allowed ...`, `READONLY ...`), not a connection's. */
function isReplyError(error: unknown): error is Error {
  return error instanceof Error && error.name === 'ReplyError';
}

/** The reason itself: a MULTI aborted (`EXECABORT`) for the errors of the commands in it. */
function firstError(error: Error): Error {
  return (error as Error & { previousErrors?: Error[] }).previousErrors?.[0] ?? error;
}

/**
 * Takes a batch out of Redis again: its record, its list of jobs, and the jobs it put in the
 * queue; returns why not all of it, if so (what is left expires with the batch). Deleting is
 * allowed in a Redis that is full, but not inside a MULTI: over `maxmemory`, Redis refuses every
 * command a transaction queues, DEL too. Hence plain commands, in a pipeline.
 */
async function withdraw(queue: QueueConnection, batch: string, put: string[]): Promise<string | undefined> {
  const { keys } = queue;
  const failures: unknown[] = [];
  await withBull(queue, async (bull) => {
    for (const id of put) await bull.remove(id).catch((error: unknown) => failures.push(error));
  }).catch((error: unknown) => failures.push(error));
  const replies = await queue.redis
    .pipeline()
    .del(keys.batch(batch), keys.batchJobs(batch), keys.batchCancelled(batch))
    .zrem(keys.batches, batch)
    .exec()
    .catch((error: unknown) => [[error, null] as const]);
  failures.push(...(replies ?? []).flatMap(([error]) => (error ? [error] : [])));
  const [first] = failures;
  return first === undefined ? undefined : first instanceof Error ? first.message : String(first);
}

/** Originals grouped by stem, in the order found: one job each (names that fold together are rendered together). */
function byStem(originals: Original[]): Original[][] {
  const groups = new Map<string, Original[]>();
  for (const original of originals) groups.set(original.stem, [...(groups.get(original.stem) ?? []), original]);
  return [...groups.values()];
}
