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
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { ContentApiError, InvalidArgumentError, oneLine, SourceError, StorageError } from '../errors.js';
import type { Original } from '../renditions/discover.js';
import { openRenderSession, type Batch, type RenderSession } from '../renditions/render.js';
import { isS3Url, openStore, type S3Options } from '../storage/location.js';
import type { MediaStore } from '../storage/store.js';
import { connectQueue, type QueueConnection, type QueueOptions } from './connection.js';
import {
  jobDataSchema,
  LOCK_MS,
  MAX_STALLED,
  RESULT_TTL_SECONDS,
  STALLED_INTERVAL_MS,
  TICK_MS,
  type JobData,
  type ResultRecord,
} from './protocol.js';

export interface WorkerOptions extends QueueOptions {
  /** Jobs (originals) rendered at once (default 1). */
  concurrency?: number | undefined;
  /** This machine's way to S3: its endpoint and path style win over the submitter's; timeouts. */
  s3?: S3Options | undefined;
  /** Each job as it starts and ends, for a log. */
  onJob?: (event: WorkerJobEvent) => void;
  /** Renders a job instead of the pipeline: the bench measures the queue alone with a no-op. */
  render?: (data: JobData) => Promise<Batch>;
}

export interface WorkerJobEvent {
  id: string;
  /** The job's originals. */
  sources: string[];
  status: 'started' | 'done' | 'failed' | 'retrying';
  /** For `done`: the results' statuses; for `failed` and `retrying`: why. */
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

/** Starts a worker; throws `QueueError` when the queue cannot be reached or is not content-api's. */
export async function startWorker(options: WorkerOptions): Promise<RenderWorker> {
  const queue = await connectQueue(options, true);
  const sessions = new Sessions(options.s3 ?? {});
  const render = options.render ?? ((data: JobData) => sessions.render(data));
  const name = `${hostname()}:${process.pid}`;
  const results = resultWriter(queue);

  const processor = async (job: Job) => {
    const started = performance.now();
    const parsed = jobDataSchema.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError(`job ${job.id}: not a content-api ${'render'} job of this protocol`);
    const data = parsed.data;
    const attempt = job.attemptsMade + 1;
    const last = attempt >= (job.opts.attempts ?? 1);
    const event = (status: WorkerJobEvent['status'], detail: string) =>
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
      // The job as a whole could not run: the output store, the originals' bucket, a bad setting.
      const retry = !last && !(error instanceof InvalidArgumentError);
      if (retry) {
        event('retrying', oneLine(error));
        await results.retried();
        throw error;
      }
      const code = error instanceof ContentApiError ? error.code : 'CONTENT_API_RENDER_FAILED';
      const failures = data.originals.map(({ source }) => ({ source, code, error: `${source}: ${oneLine(error)}` }));
      await results.write(job, { results: [], failures, warnings: [], worker: name, attempt });
      event('failed', oneLine(error));
      throw new UnrecoverableError(oneLine(error));
    }
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
    await results.write(job, record);
    if (failures.length > 0) {
      event('failed', failures.map((failure) => failure.error).join('; '));
      // Failed for the original itself: said once, never retried.
      throw new UnrecoverableError(failures[0]!.error);
    }
    event('done', batch.results.map((result) => result.status).join(', '));
    return { results: batch.results.length };
  };

  const worker = new Worker(queue.name, processor, {
    connection: queue.redis,
    concurrency: options.concurrency ?? 1,
    lockDuration: LOCK_MS,
    stalledInterval: STALLED_INTERVAL_MS,
    maxStalledCount: MAX_STALLED,
    removeOnComplete: { count: 0 },
    removeOnFail: { count: 0 },
    autorun: false,
  });
  // BullMQ reports connection trouble here; the connection retries on its own.
  worker.on('error', () => undefined);
  void worker.run();
  await worker.waitUntilReady();
  return {
    warnings: queue.warnings,
    description: `queue '${queue.name}' on ${queue.where}`,
    async close() {
      await worker.close();
      await sessions.close();
      await queue.close();
    },
  };
}

/** Writes a job's result, the counters and the rate window in one step, stamped with Redis's clock. */
function resultWriter(queue: QueueConnection) {
  queue.redis.defineCommand('contentApiResult', {
    numberOfKeys: 4,
    lua: `
      local t = redis.call('TIME')
      local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      redis.call('SET', KEYS[1], ms .. ' ' .. ARGV[1], 'EX', ARGV[2])
      redis.call('HINCRBY', KEYS[2], 'rendered', ARGV[3])
      redis.call('HINCRBY', KEYS[2], 'skipped', ARGV[4])
      redis.call('HINCRBY', KEYS[2], 'failed', ARGV[5])
      redis.call('INCRBY', KEYS[3], ARGV[6])
      redis.call('EXPIRE', KEYS[3], 900)
      redis.call('INCRBY', KEYS[4], ARGV[6])
      redis.call('EXPIRE', KEYS[4], ARGV[2])
      return ms`,
  });
  const run = (queue.redis as unknown as Record<string, (...args: Array<string | number>) => Promise<number>>)
    .contentApiResult!.bind(queue.redis);
  return {
    write(job: Job, record: ResultRecord): Promise<number> {
      const count = (status: string) => record.results.filter((result) => result.status === status).length;
      const finished = record.results.length + record.failures.length;
      const tick = queue.keys.tick(Math.floor(Date.now() / TICK_MS));
      const { result, stats, batchDone } = queue.keys;
      return run(result(job.id!), stats, tick, batchDone((job.data as JobData).batch), JSON.stringify(record), RESULT_TTL_SECONDS,
        count('rendered'), count('skipped'), record.failures.length, finished);
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
    if (cause instanceof StorageError) return !['missing', 'invalid-key', 'other'].includes(cause.kind);
    const code = (cause as NodeJS.ErrnoException).code;
    if (code && TRANSIENT_CODES.has(code)) return true;
  }
  return false;
}

const TRANSIENT_CODES = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'EMFILE']);

/** Output locations open for rendering, one per location, S3 endpoint and settings; buckets of originals, one each. */
class Sessions {
  readonly #sessions = new Map<string, Promise<RenderSession>>();
  readonly #buckets = new Map<string, Promise<MediaStore>>();
  readonly #s3: S3Options;

  constructor(s3: S3Options) {
    this.#s3 = s3;
  }

  async render(data: JobData): Promise<Batch> {
    const s3 = this.#s3For(data);
    const failures: SourceError[] = [];
    const originals: Original[] = [];
    for (const { source, stem } of data.originals) {
      if (!isS3Url(source)) {
        originals.push({ source, stem });
        continue;
      }
      const slash = source.indexOf('/', 'S3://'.length);
      const bucket = await this.#bucket(source.slice(0, slash + 1), s3);
      const key = source.slice(slash + 1);
      // Its stamp now, not as listed when it was enqueued (maybe hours ago).
      const found = await bucket.stat(key);
      if (found) originals.push({ source, stem, object: { store: bucket, key, stamp: found.stamp } });
      else failures.push(new SourceError('CONTENT_API_UNREADABLE', source, 'no such object (removed since it was enqueued)'));
    }
    const session = await this.#session(data, s3);
    return session.render(originals, failures);
  }

  async close(): Promise<void> {
    const open = [...this.#sessions.values(), ...this.#buckets.values()];
    this.#sessions.clear();
    this.#buckets.clear();
    await Promise.all(open.map((opening) => opening.then((open) => open.close(), () => undefined)));
  }

  #s3For(data: JobData): S3Options {
    const endpoint = this.#s3.endpoint ?? data.s3.endpoint;
    return { ...this.#s3, endpoint, pathStyle: this.#s3.pathStyle || data.s3.pathStyle };
  }

  #session(data: JobData, s3: S3Options): Promise<RenderSession> {
    const { originals: _originals, batch: _batch, ...template } = data;
    const id = JSON.stringify([template, s3.endpoint, s3.pathStyle]);
    return this.#cached(this.#sessions, id, () =>
      openRenderSession({ ...data.settings, outDir: data.outDir, s3, force: data.force, concurrency: 1 }),
    );
  }

  #bucket(location: string, s3: S3Options): Promise<MediaStore> {
    return this.#cached(this.#buckets, JSON.stringify([location, s3.endpoint, s3.pathStyle]), async () => {
      const store = await openStore(location, s3);
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
