/**
 * `content-api worker`: takes render jobs from the queue and runs them through the same
 * pipeline as a local render, `concurrency` at a time. Each output location is opened once
 * (a render session) and kept for the jobs that follow.
 *
 * A job's originals that fail for themselves (corrupt, too large, colliding) fail once: the
 * result says why and the job is not retried. A job that fails for the infrastructure (S3
 * unreachable or throttled, a disk full) is retried with backoff, and reports its failure
 * only after the last attempt. A worker killed outright loses nothing: its jobs' locks lapse
 * and another worker runs them again (writes are idempotent, the manifest record comes last).
 */
import { hostname } from 'node:os';
import type { Job } from 'bullmq';
import { ContentApiError, InvalidArgumentError, oneLine, QueueError, someOf } from '../errors.js';
import { bullmq } from '../packages/bullmq.js';
import type { Batch } from '../renditions/session.js';
import type { S3Options } from '../storage/s3-url.js';
import { type TextDataWorker, textDataWorker, type UnreadableJob } from './bull-worker.js';
import { BULL_OPTIONS, connectQueue, type QueueOptions } from './connection.js';
import { isTransient, storeWideKind } from './failures.js';
import {
  type JobData,
  LOCK_MS,
  MAX_STALLED,
  MIN_LOCK_MS,
  type ResultRecord,
  readJobData,
  stalledIntervalOf,
  UNKNOWN_BATCH,
} from './protocol.js';
import { resultWriter } from './results.js';
import { Sessions } from './sessions.js';

export interface WorkerOptions extends QueueOptions {
  /** Jobs (originals) rendered at once (default 1). */
  concurrency?: number | undefined;
  /**
   * How long a job stays locked to this worker when it stops renewing the lock (killed, frozen, cut
   * off) before any worker takes the job over (default `LOCK_MS`, at least `MIN_LOCK_MS`).
   */
  lockMs?: number | undefined;
  /** This machine's way to S3 (endpoint, path style, timeouts); credentials come from its environment. */
  s3?: S3Options | undefined;
  /** Each job as it starts and ends, for a log. */
  onJob?: (event: WorkerJobEvent) => void;
  /** Trouble outside any job (Redis unreachable, a lock that could not be renewed), for a log. */
  onError?: (message: string) => void;
  /** Renders a job instead of the pipeline: the bench measures the queue alone with a no-op. */
  render?: (data: JobData) => Promise<Batch>;
}

export interface WorkerJobEvent {
  id: string;
  /** The job's originals (none for `refused`). */
  sources: string[];
  /**
   * `paused`: a store could not be used at all (unreachable, throttled, no credentials): the job
   * goes back to the queue without spending an attempt, and this worker takes none for a while.
   * `retrying`: the job failed for the infrastructure, and spends one of its attempts.
   * `refused`: its data is not a job this worker takes (`readJobData`: too large, not JSON,
   * another shape or protocol), or its hash is one BullMQ cannot read (`textDataWorker`): it fails
   * at once, never retried, recorded for its batch.
   */
  status: 'started' | 'done' | 'failed' | 'retrying' | 'paused' | 'refused';
  /** For `done`: the results' statuses; else why. */
  detail: string;
  attempt: number;
  ms: number;
}

export interface RenderWorker {
  /** Said once at start: an eviction policy that may drop jobs. */
  readonly warnings: string[];
  /** `queue '<name>' on redis://host:port` (no password), for messages. */
  readonly description: string;
  /** Finishes the jobs under way, takes no more, and disconnects. */
  close(): Promise<void>;
}

/** How often a job denied access is put back for other workers before it fails. */
const DENIED_PUTBACKS = 2;

/** A store that cannot be used at all waits this long, doubling to PAUSE_MAX_MS while it stays so. */
const PAUSE_MS = 2_000;
const PAUSE_MAX_MS = 60_000;

/** Starts a worker; throws `QueueError` when the queue cannot be reached or is not content-api's. */
export async function startWorker(options: WorkerOptions): Promise<RenderWorker> {
  const lockMs = options.lockMs ?? LOCK_MS;
  if (!(Number.isInteger(lockMs) && lockMs >= MIN_LOCK_MS))
    throw new RangeError(`lockMs: expected an integer of at least ${MIN_LOCK_MS} (ms), got ${lockMs}`);
  const queue = await connectQueue(options, true);
  const sessions = new Sessions({ ...options.s3, lookups: 'head' });
  const render = options.render ?? ((data: JobData) => sessions.render(data));
  const name = `${hostname()}:${process.pid}`;
  const results = resultWriter(queue);
  let worker: TextDataWorker | undefined;
  let pauses = 0;
  let paused: NodeJS.Timeout | undefined;
  let closing = false;

  /**
   * Whether the job should wait in the queue for a store that cannot be used. A denial may be
   * this machine's (its credentials may not read objects) or the object's (a policy on a
   * prefix, a KMS key): the job is put back DENIED_PUTBACKS times, for other workers, then
   * fails, "access denied".
   */
  const waits = async (job: Job, error: unknown): Promise<boolean> => {
    const kind = storeWideKind(error);
    if (kind !== 'denied') return kind === 'down';
    const key = queue.keys.denied(job.id!);
    const [[, count]] = (await queue.redis
      .multi()
      .incr(key)
      .expire(key, 24 * 3600)
      .exec()) as [[null, number]];
    return count <= DENIED_PUTBACKS;
  };

  /**
   * Puts the job back without spending an attempt, at once, for workers that may be able to
   * use the store, and stops this worker taking jobs for a while.
   */
  const pause = async (job: Job, token: string | undefined, error: unknown, event: Event) => {
    const ms = Math.min(PAUSE_MS * 2 ** pauses++, PAUSE_MAX_MS);
    event('paused', `${oneLine(error)}; taking jobs again in ${ms / 1000} s`);
    await results.retried();
    await job.moveToDelayed(Date.now(), token);
    if (!paused && !closing) {
      await worker?.pause(true);
      paused = setTimeout(() => {
        paused = undefined;
        worker?.resume();
      }, ms);
    }
    throw new bullmq.DelayedError();
  };

  /** Records a job refused for its batch (UNKNOWN_BATCH when its batch cannot be read), and says so. */
  const refuse = async (id: string, batch: string | undefined, reason: string, attempt: number, started: number) => {
    const record = { results: [], failures: [], warnings: [], refused: reason, worker: name, attempt };
    await results.write(id, batch ?? UNKNOWN_BATCH, record);
    const ms = performance.now() - started;
    options.onJob?.({ id, sources: [], status: 'refused', detail: reason, attempt, ms });
  };

  /** A job hash BullMQ cannot read, refused while it fetches the job (the job is then dropped: `textDataWorker`). */
  const refuseUnreadable = ({ id, data, reason, attempt }: UnreadableJob) => {
    const read = readJobData(data);
    return refuse(id, 'refused' in read ? read.batch : read.data.batch, reason, attempt, performance.now());
  };

  const underWay = new UnderWay();
  const processor = (job: Job<string>, token?: string) => underWay.run(() => runJob(job, token));
  const runJob = async (job: Job<string>, token?: string) => {
    const started = performance.now();
    const attempt = job.attemptsMade + 1;
    const read = readJobData(job.data);
    if ('refused' in read) {
      await refuse(job.id!, read.batch, read.refused, attempt, started);
      throw new bullmq.UnrecoverableError(`job ${job.id}: ${read.refused}`);
    }
    const { data } = read;
    const last = attempt >= (job.opts.attempts ?? 1);
    const event: Event = (status, detail) =>
      options.onJob?.({
        id: job.id!,
        sources: data.originals.map((original) => original.source),
        status,
        detail,
        attempt,
        ms: performance.now() - started,
      });
    event('started', '');
    let batch: Batch;
    try {
      batch = await render(data);
    } catch (error) {
      if (await waits(job, error)) return pause(job, token, error, event);
      // The job as a whole could not run for another reason: spend an attempt, or fail every original.
      if (!last && !(error instanceof InvalidArgumentError)) {
        event('retrying', oneLine(error));
        await results.retried();
        throw error;
      }
      const code = error instanceof ContentApiError ? error.code : 'CONTENT_API_RENDER_FAILED';
      const failures = data.originals.map(({ source }) => ({ source, code, error: `${source}: ${oneLine(error)}` }));
      await results.write(job.id!, data.batch, { results: [], failures, warnings: [], worker: name, attempt });
      event('failed', oneLine(error));
      throw new bullmq.UnrecoverableError(oneLine(error));
    }
    for (const error of batch.errors) if (await waits(job, error)) return pause(job, token, error, event);
    pauses = 0;
    const transient = batch.errors.find(isTransient);
    if (transient && !last) {
      event('retrying', transient.message);
      await results.retried();
      throw new Error(transient.message);
    }
    const failures = batch.errors.map((error) => ({ source: error.source, code: error.code, error: error.message }));
    const record: ResultRecord = {
      results: batch.results.map(({ image: _image, ...result }) => result),
      failures,
      warnings: batch.warnings,
      worker: name,
      attempt,
    };
    await results.write(job.id!, data.batch, record);
    if (failures.length > 0) {
      // The first few, and how many more: a job of many originals must not make a line of megabytes.
      const errors = failures.map((failure) => failure.error);
      event('failed', `${someOf(errors, 3, '; ')}${errors.length > 3 ? ' (queue results lists them all)' : ''}`);
      // Failed for the original itself: said once, never retried.
      throw new bullmq.UnrecoverableError(failures[0]!.error);
    }
    event('done', batch.results.map((result) => result.status).join(', '));
    return { results: batch.results.length };
  };

  try {
    worker = textDataWorker(
      queue.name,
      processor,
      {
        connection: queue.redis,
        ...BULL_OPTIONS,
        concurrency: options.concurrency ?? 1,
        lockDuration: lockMs,
        stalledInterval: stalledIntervalOf(lockMs),
        maxStalledCount: MAX_STALLED,
        removeOnComplete: { count: 0 },
        removeOnFail: { count: 0 },
        autorun: false,
      },
      refuseUnreadable,
    );
    let said = '';
    worker.on('error', (error) => {
      // Said once per kind of trouble, not once per retry of the connection.
      const message = oneLine(error);
      if (message !== said) options.onError?.(message);
      said = message;
    });
    worker.run().catch((error: unknown) => options.onError?.(oneLine(error)));
    await worker.waitUntilReady();
  } catch (error) {
    await worker?.close(true).catch(() => undefined);
    await queue.close();
    throw new QueueError(`${queue.label}: cannot start a worker (${oneLine(error)})`, { cause: error });
  }
  const running = worker;
  return {
    warnings: queue.warnings,
    description: `queue '${queue.name}' on ${queue.where}`,
    async close() {
      closing = true;
      clearTimeout(paused);
      // No more jobs; those under way finish (their results wait for Redis, if it is away).
      await running.pause(true);
      await underWay.idle();
      // BullMQ's close waits for its fetch loop, which retries forever while Redis is away:
      // with nothing left to finish, it is closed without waiting for Redis.
      await running.close(queue.redis.status !== 'ready');
      await sessions.close();
      await queue.close();
    },
  };
}

type Event = (status: WorkerJobEvent['status'], detail: string) => void;

/** The jobs this worker's processor is running, and a wait until there are none. */
class UnderWay {
  #count = 0;
  #waiters: Array<() => void> = [];

  async run<T>(work: () => Promise<T>): Promise<T> {
    this.#count++;
    try {
      return await work();
    } finally {
      if (--this.#count === 0) for (const wake of this.#waiters.splice(0)) wake();
    }
  }

  idle(): Promise<void> {
    return this.#count === 0 ? Promise.resolve() : new Promise((resolve) => this.#waiters.push(resolve));
  }
}
