/**
 * `render --queue`, second half, and `queue results`: gathers a batch's results as workers
 * finish its jobs, into the report a local render gives. BullMQ's events say when to look;
 * a periodic pass over the batch's jobs catches what events missed (a Redis restart, a
 * trimmed event stream), and puts back once a job that is gone without a result.
 */
import type { Queue } from 'bullmq';
import { escapeText, QueueError } from '../errors.js';
import { parseJsonOrUndefined } from '../json.js';
import { bullmq } from '../packages/bullmq.js';
import { buildImageObject } from '../renditions/image-object.js';
import type { RenderFailure, RenderOptions, RenderReport, RenderResult } from '../renditions/render.js';
import { countsOf } from '../renditions/result.js';
import { isPlaceholder } from '../renditions/rules.js';
import { BULL_OPTIONS, type QueueConnection, withBull } from './connection.js';
import { addJobs } from './enqueue.js';
import {
  BATCH_ID,
  type BatchRecord,
  batchJobSchema,
  batchRecordSchema,
  type JobData,
  jobBatchSchema,
  RESULT_TTL_SECONDS,
  type ResultRecord,
  resultRecordSchema,
} from './protocol.js';

export interface CollectOptions extends Pick<RenderOptions, 'altText' | 'onProgress'> {
  /** Wait until every job has a result (default); else report what is there now, the rest as `pending`. */
  wait?: boolean;
  /**
   * Stops waiting. With `cancel`, the batch's jobs still waiting are first taken out of the
   * queue (reported as not started) and those under way are waited for; without, the report
   * is what has finished, the rest `pending`, and the queue is left as it is.
   */
  signal?: AbortSignal | undefined;
  cancel?: boolean;
  /** How often jobs are looked at one by one (default: every 5 s, and 1 s per 10,000 jobs). */
  reconcileMs?: number;
}

/** A batch's report: a local render's, and the originals whose jobs are still queued. */
export interface QueueReport extends RenderReport {
  batch: string;
  /** The output, as the command line that enqueued the batch gave it, and the shard it was limited to. */
  out: string;
  shard?: BatchRecord['shard'];
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
  if (!BATCH_ID.test(id))
    throw new QueueError(`${escapeText(id)}: not a batch id (they look like 20261123-174512-3f9a1c)`);
  const text = await queue.redis.get(queue.keys.batch(id));
  if (text === null) {
    throw new QueueError(`${queue.label}: no batch ${id} in queue '${queue.name}' (batches are kept 7 days)`);
  }
  const record = parseJsonOrUndefined(batchRecordSchema, text);
  if (!record) throw new QueueError(`${queue.label}: batch ${id} was written by another version of content-api`);
  return record;
}

/** A batch's jobs, read a page at a time (a batch of 500,000 is a list of 100 MB). */
async function readJobs(queue: QueueConnection, record: BatchRecord): Promise<Map<string, JobEntry>> {
  const jobs = new Map<string, JobEntry>();
  const page = 10_000;
  for (let start = 0; ; start += page) {
    const lines = await queue.redis.lrange(queue.keys.batchJobs(record.id), start, start + page - 1);
    for (const line of lines) {
      const job = parseJsonOrUndefined(batchJobSchema, line);
      if (!job) throw new QueueError(`${queue.label}: batch ${record.id} has a job this version cannot read`);
      const [jobId, originals, given] = job;
      jobs.set(jobId, { id: jobId, originals, given });
    }
    if (lines.length < page) break;
  }
  if (jobs.size !== record.jobs) {
    throw new QueueError(
      `${queue.label}: batch ${record.id} lists ${jobs.size} of its ${record.jobs} jobs (Redis lost part of it)`,
    );
  }
  return jobs;
}

/** Gathers the results of batch `id` into a report. */
export async function collectBatch(
  queue: QueueConnection,
  id: string,
  options: CollectOptions = {},
): Promise<QueueReport> {
  const record = await readBatch(queue, id);
  const jobs = await readJobs(queue, record);
  const tally = new Tally(record, jobs, options);
  const pending = () => [...jobs.values()].filter((job) => !job.result);
  // BullMQ reads events on a connection of its own (a duplicate of this one), and closes it.
  const events =
    options.wait === false ? null : new bullmq.QueueEvents(queue.name, { connection: queue.redis, ...BULL_OPTIONS });
  return withBull(queue, async (bull) => {
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
      // Taken out of the queue by a Ctrl-C on the command that enqueued them: never started, never put back.
      for (const cancelled of await queue.redis.smembers(queue.keys.batchCancelled(record.id))) {
        const job = jobs.get(cancelled);
        if (job) tally.notStarted(job);
      }
      if (options.wait === false) return tally.report(pending());

      const every = options.reconcileMs ?? 5_000 + Math.floor(jobs.size / 10);
      let lastPass = Date.now();
      let cancelled = false;
      options.signal?.addEventListener('abort', () => wake(), { once: true });
      while (tally.remaining > 0) {
        if (signalled.size === 0 && !(options.signal?.aborted && !cancelled)) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, Math.max(0, every - (Date.now() - lastPass)));
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        }
        if (options.signal?.aborted && !cancelled) {
          if (!options.cancel) return tally.report(pending());
          cancelled = true;
          await unqueue(queue, bull, record, pending(), tally);
        }
        const looked = [...signalled];
        signalled.clear();
        await fetchResults(queue, record, looked, tally);
        if (Date.now() - lastPass >= every) {
          await reconcile(queue, record, pending(), tally, cancelled);
          lastPass = Date.now();
        }
      }
      return tally.report([]);
    } finally {
      await events?.close();
    }
  });
}

/**
 * Reads the results of `jobs` for this batch: its own run's, or, while it has none, one written
 * since it began by a run it shared (the job was queued for another batch when this one added
 * it). A later batch's run of a job this batch ran is that batch's: this batch keeps its own.
 */
async function fetchResults(
  queue: QueueConnection,
  record: BatchRecord,
  jobs: JobEntry[],
  tally: Tally,
): Promise<JobEntry[]> {
  const missing: JobEntry[] = [];
  jobs = jobs.filter((job) => !job.result);
  for (let start = 0; start < jobs.length; start += 1_000) {
    const chunk = jobs.slice(start, start + 1_000);
    const pipeline = queue.redis.pipeline();
    for (const job of chunk) pipeline.hgetall(queue.keys.result(job.id));
    const answers = (await pipeline.exec()) ?? [];
    chunk.forEach((job, index) => {
      const runs = Object.entries((answers[index]?.[1] ?? {}) as Record<string, string>)
        .map(([batch, value]) => ({ batch, ...splitResult(value) }))
        .filter((run) => run.written >= record.created);
      const found = (runs.find((run) => run.batch === record.id) ?? runs[0])?.record;
      if (found) tally.finished(job, found);
      else missing.push(job);
    });
  }
  return missing;
}

/** `<ms> <json>`: when a run's result was written (Redis clock), and the result, if this version can read it. */
function splitResult(value: string): { written: number; record: ResultRecord | undefined } {
  const space = value.indexOf(' ');
  return {
    written: Number(value.slice(0, space)),
    record: parseJsonOrUndefined(resultRecordSchema, value.slice(space + 1)),
  };
}

/**
 * Jobs gone from the queue without a result: lost with Redis's data, failed by BullMQ itself
 * (stalled too often), or enqueued again while an earlier run of it was finishing. Each is put
 * back once; gone again, it fails, saying so.
 */
async function reconcile(
  queue: QueueConnection,
  record: BatchRecord,
  jobs: JobEntry[],
  tally: Tally,
  cancelled: boolean,
) {
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
  if (cancelled) {
    for (const job of missing) tally.notStarted(job); // taken out by another command's Ctrl-C
    return;
  }
  const why = 'its job left the queue twice without a result (workers killed while rendering it, or Redis lost it)';
  for (const job of missing.filter((job) => job.readded)) tally.lost(job, why);
  const again = missing.filter((job) => !job.readded);
  for (const job of again) job.readded = true;
  await addJobs(
    queue,
    again.map((job) => ({ ...record.template, originals: job.originals, batch: record.id })),
  );
}

/**
 * After Ctrl-C: this batch's jobs still waiting are taken out of the queue and remembered as
 * cancelled (so `queue results` never puts them back); those under way finish. A waiting job
 * another batch added (and this one shared) is left queued for it, and not waited for here.
 * A thousand jobs at a time, in a few round trips (500,000 jobs one by one took minutes).
 */
async function unqueue(queue: QueueConnection, bull: Queue, record: BatchRecord, jobs: JobEntry[], tally: Tally) {
  for (let start = 0; start < jobs.length; start += 1_000) {
    const chunk = jobs.slice(start, start + 1_000);
    const pipeline = queue.redis.pipeline();
    for (const job of chunk) pipeline.hget(`${queue.keys.bullPrefix}${job.id}`, 'data');
    const answers = (await pipeline.exec()) ?? [];
    const removed: JobEntry[] = [];
    await Promise.all(
      chunk.map(async (job, index) => {
        const data = answers[index]?.[1];
        if (typeof data !== 'string') return; // finished meanwhile (its result comes), or never added
        if (parseJsonOrUndefined(jobBatchSchema, data)?.batch === record.id) {
          // Refused for a job a worker holds: under way, its result comes.
          if ((await bull.remove(job.id).catch(() => 0)) === 1) removed.push(job);
        } else if ((await bull.getJobState(job.id).catch(() => 'unknown')) !== 'active') {
          tally.notStarted(job);
        }
      }),
    );
    if (removed.length === 0) continue;
    await queue.redis
      .multi()
      .sadd(queue.keys.batchCancelled(record.id), ...removed.map((job) => job.id))
      .expire(queue.keys.batchCancelled(record.id), RESULT_TTL_SECONDS)
      .exec();
    for (const job of removed) tally.notStarted(job);
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
    // Its data was not a job a worker takes: each of its originals (as this batch listed them) failed for that.
    if (record.refused !== undefined) {
      this.lost(job, `its job ${job.id} was refused by a worker: ${record.refused}`);
      return;
    }
    job.result = record;
    this.remaining--;
    const result = asGiven(job, record, this.#record);
    const { mediaUrl, urlVersions } = this.#record.template.settings;
    for (const warning of result.warnings) this.#warnings.add(warning);
    for (const { placeholder, ...done } of result.results) {
      const altText = this.#options.altText?.({ source: done.source, stem: '' });
      const image = buildImageObject(done.original, done.files, { mediaUrl, altText, urlVersions });
      // Anyone who can write to Redis wrote it: a placeholder that could do more than paint is left out, and said.
      const painted = placeholder && isPlaceholder(placeholder) ? placeholder : undefined;
      if (placeholder && !painted)
        this.#warnings.add(
          `${done.source}: the placeholder in job ${job.id}'s result is not a hex colour and a base64 image data URI ` +
            'of at most 1024 characters: left out',
        );
      this.#results.push({
        ...done,
        ...(painted && { placeholder: painted }),
        image,
        bytes: done.bytes ?? null,
        alternates: done.alternates ?? [],
        kept: done.kept ?? [],
      });
      this.#end(done.source, done.status);
    }
    for (const failure of result.failures) {
      this.#failures.push(failure);
      this.#end(failure.source, 'failed');
    }
  }

  lost(job: JobEntry, why: string): void {
    const failures = job.given.map((source) => ({
      source,
      code: 'CONTENT_API_RENDER_FAILED',
      error: `${source}: ${why}`,
    }));
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
      out: this.#record.out,
      ...(this.#record.shard && { shard: this.#record.shard }),
      results: this.#results.sort(bySource),
      counts: countsOf(this.#results),
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

/**
 * A worker's result with each original named as the command line gave it (workers get
 * absolute paths), and the output folder too, in messages as well: what a local run says.
 */
function asGiven(job: JobEntry, record: ResultRecord, batch: BatchRecord): ResultRecord {
  const names = new Map(job.originals.map((original, i) => [original.source, job.given[i] ?? original.source]));
  if (batch.template.outDir !== batch.out) names.set(batch.template.outDir, batch.out);
  const name = (source: string) => names.get(source) ?? source;
  // Longest first: a path that begins another is replaced after it.
  const known = [...names.keys()].sort((a, b) => b.length - a.length);
  const text = (message: string) => known.reduce((said, from) => said.replaceAll(from, names.get(from)!), message);
  return {
    ...record,
    results: record.results.map((result) => ({ ...result, source: name(result.source) })),
    failures: record.failures.map((failure) => ({
      ...failure,
      source: name(failure.source),
      error: text(failure.error),
    })),
    warnings: record.warnings.map(text),
  };
}
