/**
 * `render --queue`, second half, and `queue results`: gathers a batch's results as workers
 * finish its jobs, into the report a local render gives. BullMQ's events say when to look;
 * a periodic pass over the batch's jobs catches what events missed (a Redis restart, a
 * trimmed event stream), and puts back once a job that is gone without a result.
 */
import { Queue, QueueEvents } from 'bullmq';
import { QueueError } from '../errors.js';
import { buildImageObject } from '../renditions/image-object.js';
import type { RenderFailure, RenderOptions, RenderReport, RenderResult } from '../renditions/render.js';
import type { QueueConnection } from './connection.js';
import { addJobs } from './enqueue.js';
import {
  batchJobSchema,
  batchRecordSchema,
  resultRecordSchema,
  type BatchRecord,
  type JobData,
  type ResultRecord,
} from './protocol.js';

export interface CollectOptions extends Pick<RenderOptions, 'altText' | 'onProgress' | 'signal'> {
  /** Wait until every job has a result (default); else report what is there now, the rest as `pending`. */
  wait?: boolean;
  /** How often jobs are looked at one by one (default: every 5 s, and 1 s per 10,000 jobs). */
  reconcileMs?: number;
}

/** A batch's report: a local render's, and the originals whose jobs are still queued. */
export interface QueueReport extends RenderReport {
  batch: string;
  /** Originals whose jobs have no result yet (only without `wait`). */
  pending: string[];
}

interface JobEntry {
  id: string;
  originals: JobData['originals'];
  /** The originals' sources as the command line gave them (workers get absolute paths). */
  given: string[];
  result?: ResultRecord;
  /** Put back in the queue once already, after it was gone without a result. */
  readded?: boolean;
}

/** Loads a batch record; throws `QueueError` for one that is not there. */
export async function readBatch(queue: QueueConnection, id: string): Promise<BatchRecord> {
  const text = await queue.redis.get(queue.keys.batch(id));
  if (text === null) {
    throw new QueueError(`${queue.where}: no batch ${id} in queue '${queue.name}' (batches are kept 7 days)`);
  }
  const parsed = batchRecordSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new QueueError(`${queue.where}: batch ${id} was written by another version of content-api`);
  return parsed.data;
}

/** Gathers the results of batch `id` into a report. */
export async function collectBatch(queue: QueueConnection, id: string, options: CollectOptions = {}): Promise<QueueReport> {
  const record = await readBatch(queue, id);
  const jobs = new Map<string, JobEntry>();
  const listed = await queue.redis.lrange(queue.keys.batchJobs(id), 0, -1);
  for (const line of listed) {
    const [jobId, originals, given] = batchJobSchema.parse(JSON.parse(line));
    jobs.set(jobId, { id: jobId, originals, given });
  }
  const tally = new Tally(record, jobs, options);
  const pending = () => [...jobs.values()].filter((job) => !job.result);
  // Its own connection (it blocks reading events), closed here: BullMQ leaves a connection it was given open.
  const listening = options.wait === false ? null : queue.redis.duplicate();
  const events = listening && new QueueEvents(queue.name, { connection: listening });
  const bull = new Queue(queue.name, { connection: queue.redis });
  bull.on('error', () => undefined);
  try {
    /** Jobs the events say have finished, to look up; and the wait for more. */
    const signalled = new Set<JobEntry>();
    let wake: () => void = () => undefined;
    if (events) {
      events.on('error', () => undefined); // reconnects on its own
      events.on('active', ({ jobId }) => {
        const job = jobs.get(jobId);
        if (job && !job.result) tally.started(job);
      });
      const finished = ({ jobId }: { jobId: string }) => {
        const job = jobs.get(jobId);
        if (!job || job.result) return;
        signalled.add(job);
        wake();
      };
      events.on('completed', finished);
      events.on('failed', finished);
      await events.waitUntilReady();
    }
    await fetchResults(queue, record, [...jobs.values()], tally);
    if (options.wait === false) return tally.report(pending());

    const every = options.reconcileMs ?? 5_000 + Math.floor(jobs.size / 10);
    let lastPass = Date.now();
    let interrupted = false;
    options.signal?.addEventListener('abort', () => wake(), { once: true });
    while (tally.remaining > 0) {
      if (signalled.size === 0 && !(options.signal?.aborted && !interrupted)) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.max(0, every - (Date.now() - lastPass)));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      if (options.signal?.aborted && !interrupted) {
        interrupted = true;
        await unqueue(bull, pending(), tally);
      }
      const looked = [...signalled];
      signalled.clear();
      await fetchResults(queue, record, looked, tally);
      if (Date.now() - lastPass >= every) {
        await reconcile(queue, bull, record, pending(), tally);
        lastPass = Date.now();
      }
    }
    return tally.report([]);
  } finally {
    await events?.close();
    listening?.disconnect();
    await bull.close();
  }
}

/** Reads the results of `jobs` written since the batch began (older ones are an earlier run's). */
async function fetchResults(queue: QueueConnection, record: BatchRecord, jobs: JobEntry[], tally: Tally): Promise<JobEntry[]> {
  const missing: JobEntry[] = [];
  jobs = jobs.filter((job) => !job.result);
  for (let start = 0; start < jobs.length; start += 1_000) {
    const chunk = jobs.slice(start, start + 1_000);
    const values = await queue.redis.mget(...chunk.map((job) => queue.keys.result(job.id)));
    chunk.forEach((job, index) => {
      const result = freshResult(values[index] ?? null, record.created);
      if (result) tally.finished(job, result);
      else missing.push(job);
    });
  }
  return missing;
}

/** `<ms> <json>` written at or after `created`, parsed; anything else is no result. */
function freshResult(value: string | null, created: number): ResultRecord | undefined {
  if (value === null) return undefined;
  const space = value.indexOf(' ');
  if (Number(value.slice(0, space)) < created) return undefined;
  const parsed = resultRecordSchema.safeParse(JSON.parse(value.slice(space + 1)));
  return parsed.success ? parsed.data : undefined;
}

/**
 * Jobs gone from the queue without a result: lost with Redis's data, failed by BullMQ itself
 * (stalled too often), or enqueued again while an earlier run of it was finishing. Each is put
 * back once; gone again, it fails, saying so.
 */
async function reconcile(queue: QueueConnection, bull: Queue, record: BatchRecord, jobs: JobEntry[], tally: Tally) {
  const gone: JobEntry[] = [];
  for (let start = 0; start < jobs.length; start += 1_000) {
    const chunk = jobs.slice(start, start + 1_000);
    const pipeline = queue.redis.pipeline();
    for (const job of chunk) pipeline.exists(`${queue.keys.bullPrefix}${job.id}`);
    const answers = (await pipeline.exec()) ?? [];
    chunk.forEach((job, index) => {
      if (answers[index]?.[1] === 0) gone.push(job);
    });
  }
  if (gone.length === 0) return;
  // A result may have landed between the two looks.
  const missing = await fetchResults(queue, record, gone, tally);
  const again = missing.filter((job) => !job.readded);
  for (const job of missing.filter((job) => job.readded)) {
    const failedReason = (await bull.getJob(job.id).catch(() => undefined))?.failedReason;
    const why = failedReason ?? 'its job left the queue twice without a result (workers killed while rendering it, or Redis lost it)';
    tally.lost(job, why);
  }
  for (const job of again) job.readded = true;
  await addJobs(queue, again.map((job) => ({ ...record.template, originals: job.originals, batch: record.id })));
}

/** After Ctrl-C: jobs still waiting are taken out of the queue (not started); those under way finish. */
async function unqueue(bull: Queue, jobs: JobEntry[], tally: Tally): Promise<void> {
  for (const job of jobs) {
    const removed = await bull.remove(job.id).catch(() => 0);
    if (removed === 1) tally.notStarted(job);
  }
}

/** The report as results come in, and progress events. */
class Tally {
  readonly #record: BatchRecord;
  readonly #options: CollectOptions;
  readonly #results: RenderResult[] = [];
  readonly #failures: RenderFailure[];
  readonly #warnings: Set<string>;
  readonly #notStarted: string[] = [];
  readonly #active: string[] = [];
  readonly #total: number;
  #done: number;
  /** Jobs without a result yet. */
  remaining: number;

  constructor(record: BatchRecord, jobs: Map<string, JobEntry>, options: CollectOptions) {
    this.#record = record;
    this.#options = options;
    this.#failures = [...record.failures];
    this.#warnings = new Set(record.warnings);
    this.#done = record.failures.length;
    this.#total = record.failures.length + [...jobs.values()].reduce((sum, job) => sum + job.originals.length, 0);
    this.remaining = jobs.size;
  }

  started(job: JobEntry): void {
    for (const source of job.given) {
      if (this.#active.includes(source)) continue;
      this.#active.push(source);
      this.#progress(source, 'started');
    }
  }

  finished(job: JobEntry, record: ResultRecord): void {
    if (job.result) return;
    job.result = record;
    this.remaining--;
    const result = asGiven(job, record);
    const { mediaUrl } = this.#record.template.settings;
    for (const warning of result.warnings) this.#warnings.add(warning);
    for (const done of result.results) {
      const altText = this.#options.altText?.({ source: done.source, stem: '' });
      const image = buildImageObject(done.original, done.files, { mediaUrl, altText });
      this.#results.push({ ...done, image });
      this.#end(done.source, done.status);
    }
    for (const failure of result.failures) {
      this.#failures.push(failure);
      this.#end(failure.source, 'failed');
    }
  }

  lost(job: JobEntry, why: string): void {
    const failures = job.given.map((source) => ({ source, code: 'CONTENT_API_RENDER_FAILED', error: `${source}: ${why}` }));
    this.finished(job, { results: [], failures, warnings: [], worker: '', attempt: 0 });
  }

  notStarted(job: JobEntry): void {
    if (job.result) return;
    job.result = { results: [], failures: [], warnings: [], worker: '', attempt: 0 };
    this.remaining--;
    for (const source of job.given) {
      this.#notStarted.push(source);
      this.#end(source, 'failed', false);
    }
  }

  report(pending: JobEntry[]): QueueReport {
    const bySource = (a: { source: string }, b: { source: string }) => a.source.localeCompare(b.source);
    return {
      batch: this.#record.id,
      results: this.#results.sort(bySource),
      failures: this.#failures.sort(bySource),
      warnings: [...this.#warnings],
      notStarted: this.#notStarted.sort(),
      pending: pending.flatMap((job) => job.given).sort(),
    };
  }

  #end(source: string, status: RenderResult['status'] | 'failed', announce = true): void {
    const index = this.#active.indexOf(source);
    if (index >= 0) this.#active.splice(index, 1);
    this.#done++;
    if (announce) this.#progress(source, status);
  }

  #progress(source: string, status: RenderResult['status'] | 'failed' | 'started'): void {
    this.#options.onProgress?.({ done: this.#done, total: this.#total, source, status, active: [...this.#active] });
  }
}

/** A worker's result with each source named as the command line gave it, in messages too. */
function asGiven(job: JobEntry, record: ResultRecord): ResultRecord {
  const names = new Map(job.originals.map((original, i) => [original.source, job.given[i] ?? original.source]));
  const name = (source: string) => names.get(source) ?? source;
  return {
    ...record,
    results: record.results.map((result) => ({ ...result, source: name(result.source) })),
    failures: record.failures.map((failure) => ({
      ...failure,
      source: name(failure.source),
      error: failure.error.startsWith(`${failure.source}: `)
        ? `${name(failure.source)}${failure.error.slice(failure.source.length)}`
        : failure.error,
    })),
  };
}
