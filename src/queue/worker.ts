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
import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import {
  ContentApiError,
  InvalidArgumentError,
  OutputNotWritableError,
  oneLine,
  QueueError,
  SourceError,
  STORE_WIDE,
  StorageError,
  someOf,
} from '../errors.js';
import { ScorePool } from '../quality/score-pool.js';
import type { Original } from '../renditions/discover.js';
import { type Batch, openRenderSession, type RenderSession } from '../renditions/session.js';
import { qualityTarget, resolveSettings } from '../renditions/settings.js';
import { openStore } from '../storage/location.js';
import { isS3Url, type S3Options, splitS3Object } from '../storage/s3-url.js';
import type { MediaStore } from '../storage/store.js';
import { TextDataWorker, type UnreadableJob } from './bull-worker.js';
import { BULL_OPTIONS, connectQueue, type QueueConnection, type QueueOptions } from './connection.js';
import {
  type JobData,
  LOCK_MS,
  MAX_STALLED,
  PROTOCOL,
  RESULT_TTL_SECONDS,
  type ResultRecord,
  readJobData,
  STALLED_INTERVAL_MS,
  TICK_MS,
  templateOf,
  UNKNOWN_BATCH,
} from './protocol.js';

export interface WorkerOptions extends QueueOptions {
  /** Jobs (originals) rendered at once (default 1). */
  concurrency?: number | undefined;
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
   * another shape or protocol), or its hash is one BullMQ cannot read (`TextDataWorker`): it fails
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
    throw new DelayedError();
  };

  /** Records a job refused for its batch (UNKNOWN_BATCH when its batch cannot be read), and says so. */
  const refuse = async (id: string, batch: string | undefined, reason: string, attempt: number, started: number) => {
    const record = { results: [], failures: [], warnings: [], refused: reason, worker: name, attempt };
    await results.write(id, batch ?? UNKNOWN_BATCH, record);
    const ms = performance.now() - started;
    options.onJob?.({ id, sources: [], status: 'refused', detail: reason, attempt, ms });
  };

  /** A job hash BullMQ cannot read, refused while it fetches the job (the job is then dropped: `TextDataWorker`). */
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
      throw new UnrecoverableError(`job ${job.id}: ${read.refused}`);
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
      throw new UnrecoverableError(oneLine(error));
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
      throw new UnrecoverableError(failures[0]!.error);
    }
    event('done', batch.results.map((result) => result.status).join(', '));
    return { results: batch.results.length };
  };

  try {
    worker = new TextDataWorker(
      queue.name,
      processor,
      {
        connection: queue.redis,
        ...BULL_OPTIONS,
        concurrency: options.concurrency ?? 1,
        lockDuration: LOCK_MS,
        stalledInterval: STALLED_INTERVAL_MS,
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

/**
 * What says a store (the output, or the originals' bucket) cannot be used at all: unreachable,
 * refusing these credentials, throttling, or a folder this machine cannot write; and
 * `denied`, which may be the store's or one object's.
 */
function storeWideKind(error: unknown): 'denied' | 'down' | undefined {
  for (let cause: unknown = error; cause; cause = (cause as { cause?: unknown }).cause) {
    if (cause instanceof OutputNotWritableError) return 'down';
    if (cause instanceof StorageError) {
      if (cause.kind === 'denied') return 'denied';
      return STORE_WIDE.has(cause.kind) || cause.kind === 'throttled' ? 'down' : undefined;
    }
  }
  return undefined;
}

/**
 * Writes a job's result for its batch, the counters and the rate window in one step, stamped
 * with Redis's clock. A result its batch has already (the job ran twice: its worker's lock
 * lapsed) is kept, and counted once.
 */
function resultWriter(queue: QueueConnection) {
  queue.redis.defineCommand('contentApiResult', {
    numberOfKeys: 6,
    // KEYS: result, stats, rate window prefix, batch counter, queue mark, denial count;
    // ARGV: record, ttl, window ms, mark, rendered, skipped, failed, finished, batch, unknown batch.
    lua: `
      local t = redis.call('TIME')
      local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      local unknown = ARGV[9] == ARGV[10]
      -- A refusal whose batch is unknown: the latest stands, for whichever batch lists the job now.
      if unknown then redis.call('HDEL', KEYS[1], ARGV[9]) end
      local first = redis.call('HSETNX', KEYS[1], ARGV[9], ms .. ' ' .. ARGV[1])
      redis.call('EXPIRE', KEYS[1], ARGV[2])
      -- Each write keeps the hash another week: older batches' entries go, or it would grow
      -- by one for every batch that runs the job (a daily run of an archive).
      local cutoff = ms - tonumber(ARGV[2]) * 1000
      local runs = redis.call('HGETALL', KEYS[1])
      for i = 1, #runs, 2 do
        local written = tonumber(string.match(runs[i + 1], '^(%d+) '))
        if written == nil or written < cutoff then redis.call('HDEL', KEYS[1], runs[i]) end
      end
      -- Kept even if Redis lost it (restarted empty): this queue stays recognisably content-api's.
      redis.call('SET', KEYS[5], ARGV[4], 'NX')
      redis.call('DEL', KEYS[6])
      if first == 0 then return ms end
      redis.call('HINCRBY', KEYS[2], 'rendered', ARGV[5])
      redis.call('HINCRBY', KEYS[2], 'skipped', ARGV[6])
      redis.call('HINCRBY', KEYS[2], 'failed', ARGV[7])
      local tick = KEYS[3] .. math.floor(ms / tonumber(ARGV[3]))
      redis.call('INCRBY', tick, ARGV[8])
      redis.call('EXPIRE', tick, 900)
      if not unknown then
        redis.call('INCRBY', KEYS[4], ARGV[8])
        redis.call('EXPIRE', KEYS[4], ARGV[2])
      end
      return ms`,
  });
  const run = (
    queue.redis as unknown as Record<string, (...args: Array<string | number>) => Promise<number>>
  ).contentApiResult!.bind(queue.redis);
  return {
    /** `batch` is UNKNOWN_BATCH for a job refused before its batch could be read (counted as one failure). */
    write(id: string, batch: string, record: ResultRecord): Promise<number> {
      const count = (status: string) => record.results.filter((result) => result.status === status).length;
      const failed = record.refused === undefined ? record.failures.length : 1;
      const { result, stats, tick, batchDone, marker, denied } = queue.keys;
      const keys = [result(id), stats, tick(''), batchDone(batch), marker, denied(id)];
      return run(
        ...keys,
        JSON.stringify(record),
        RESULT_TTL_SECONDS,
        TICK_MS,
        JSON.stringify({ protocol: PROTOCOL }),
        count('rendered'),
        count('skipped'),
        failed,
        record.results.length + failed,
        batch,
        UNKNOWN_BATCH,
      );
    },
    retried: () => queue.redis.hincrby(queue.keys.stats, 'retried', 1).then(() => undefined),
  };
}

/**
 * The failure is the infrastructure's, not the original's: a store that could not be
 * reached, throttled, answered 5xx, or a disk that refused the write. Worth another try.
 */
export function isTransient(error: SourceError): boolean {
  if (error.code !== 'CONTENT_API_RENDER_FAILED' && error.code !== 'CONTENT_API_UNREADABLE') return false;
  for (let cause: unknown = error.cause; cause; cause = (cause as { cause?: unknown }).cause) {
    // Denied after the job was put back for other workers (see `waits`): the same every time.
    if (cause instanceof StorageError) return !['missing', 'invalid-key', 'other', 'denied'].includes(cause.kind);
    const code = (cause as NodeJS.ErrnoException).code;
    if (code && TRANSIENT_CODES.has(code)) return true;
  }
  return false;
}

const TRANSIENT_CODES = new Set([
  'ENOSPC',
  'EDQUOT',
  'EIO',
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'EMFILE',
]);

/**
 * Output locations open for rendering, one per location and settings; buckets of originals,
 * one each. Their S3 stores look objects up one by one (HEAD), never from a listing kept since
 * an earlier job: other machines write to the same buckets meanwhile.
 */
class Sessions {
  readonly #sessions = new Map<string, Promise<RenderSession>>();
  readonly #buckets = new Map<string, Promise<MediaStore>>();
  readonly #s3: S3Options;
  /** Where every session's `--quality auto` scores, made for the first that searches: the worker's, for its life. */
  #scores: ScorePool | undefined;

  constructor(s3: S3Options) {
    this.#s3 = s3;
  }

  async render(data: JobData): Promise<Batch> {
    const failures: SourceError[] = [];
    const originals: Original[] = [];
    for (const { source, stem } of data.originals) {
      if (!isS3Url(source)) {
        originals.push({ source, stem });
        continue;
      }
      const { location, key } = splitS3Object(source);
      const bucket = await this.#bucket(location);
      // Its stamp now (one HEAD), not as listed when it was enqueued, maybe days ago.
      const found = await bucket.stat(key).catch((error: unknown) => {
        if (!(error instanceof StorageError)) throw error;
        failures.push(new SourceError('CONTENT_API_UNREADABLE', source, oneLine(error), { cause: error }));
        return undefined;
      });
      if (found) originals.push({ source, stem, object: { store: bucket, key, stamp: found.stamp } });
      else if (found === null)
        failures.push(
          new SourceError('CONTENT_API_UNREADABLE', source, 'no such object (removed since it was enqueued)'),
        );
    }
    const session = await this.#session(data);
    return session.render(originals, failures);
  }

  async close(): Promise<void> {
    const open = [...this.#sessions.values(), ...this.#buckets.values()];
    this.#sessions.clear();
    this.#buckets.clear();
    await Promise.all(
      open.map((opening) =>
        opening.then(
          (open) => open.close(),
          () => undefined,
        ),
      ),
    );
    await this.#scores?.close();
    this.#scores = undefined;
  }

  #session(data: JobData): Promise<RenderSession> {
    const template = templateOf(data);
    return this.#cached(this.#sessions, JSON.stringify(template), async () => {
      const options = {
        ...template.settings,
        outDir: template.outDir,
        // The submitter made it: a folder missing here is one this machine does not share.
        createOutDir: false,
        s3: this.#s3,
        force: template.force,
        concurrency: 1,
      };
      const settings = resolveSettings(options);
      if (qualityTarget(settings.quality.mode) !== null) this.#scores ??= new ScorePool();
      return openRenderSession({ ...options, scorePool: this.#scores }, settings);
    });
  }

  #bucket(location: string): Promise<MediaStore> {
    return this.#cached(this.#buckets, location, async () => {
      const store = await openStore(location, this.#s3);
      await store.open({ write: false, create: false });
      return store;
    });
  }

  /** Opened once; an opening that failed is forgotten, so the next job tries again. */
  #cached<T>(map: Map<string, Promise<T>>, id: string, open: () => Promise<T>): Promise<T> {
    let opening = map.get(id);
    if (!opening) {
      opening = open();
      map.set(id, opening);
      opening.catch(() => map.delete(id));
    }
    return opening;
  }
}
