/**
 * What `render --queue`, workers and `queue` commands agree on in Redis: the BullMQ queue and
 * its job options, the job's data, the keys content-api keeps beside BullMQ's, and the ids.
 *
 * One job per image under the output folder (originals whose names fold to one stem travel
 * together, so their collision is seen). Its id is a hash of what it renders and how, so a
 * batch enqueued twice adds nothing while its jobs are queued. Finished jobs are removed at
 * once; what they produced is kept in a result key for `RESULT_TTL_SECONDS`.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { FORCEABLE_FORMATS, OUTPUT_FORMATS } from '../renditions/formats.js';
import { NAMING_STYLES, RENDITION_KEYS, type NamingStyle } from '../renditions/rules.js';

/** Bumped when job data or result keys change shape: workers and submitters of two versions refuse each other. */
export const PROTOCOL = 1;

export const DEFAULT_QUEUE_NAME = 'content-api';

/**
 * Stalled-job recovery: a worker renews its jobs' locks every `LOCK_MS / 2`; a job whose lock
 * has lapsed (its worker was killed) is put back by the next stalled check of any worker, so
 * it runs again within LOCK_MS + STALLED_INTERVAL_MS (15 s) rather than BullMQ's default 60 s.
 * The renewal runs on the event loop, which rendering leaves free (libvips works in its own
 * threads), so 5 s of slack is plenty. A job that stalls more than MAX_STALLED times (say, an
 * original that kills every worker that opens it) fails.
 */
export const LOCK_MS = 10_000;
export const STALLED_INTERVAL_MS = 5_000;
export const MAX_STALLED = 2;

/** Tries for a job failing for the infrastructure (S3 throttled, a disk full), 2 s backoff doubling: about a minute. */
export const ATTEMPTS = 6;
export const BACKOFF_MS = 2_000;

/** How long results and batches are kept for `queue results` (7 days). */
export const RESULT_TTL_SECONDS = 7 * 24 * 3600;

const originalSchema = z.object({ source: z.string().min(1), stem: z.string().min(1) });

/** A job: the originals of one image, where they go, and every setting that shapes the files. */
export const jobDataSchema = z.object({
  protocol: z.literal(PROTOCOL),
  outDir: z.string().min(1),
  s3: z.object({ endpoint: z.string().optional(), pathStyle: z.boolean().optional() }),
  settings: z.object({
    mediaUrl: z.string(),
    naming: z.enum(NAMING_STYLES as [NamingStyle, ...NamingStyle[]]),
    format: z.enum(FORCEABLE_FORMATS).optional(),
    quality: z.object({ jpeg: z.number(), webp: z.number(), avif: z.number() }),
    keepMetadata: z.boolean(),
    pixelLimit: z.number(),
  }),
  force: z.boolean(),
  originals: z.array(originalSchema).min(1),
  /** The batch that added the job, whose count of finished originals its worker updates (not part of its id). */
  batch: z.string(),
});
export type JobData = z.infer<typeof jobDataSchema>;
/** A job's data but for its originals and batch: the same for every job of a batch, and what a worker's session is opened with. */
export type JobTemplate = Omit<JobData, 'originals' | 'batch'>;

/** `r<hex>`: never an integer, never a `:` (BullMQ refuses both as custom ids). */
export function jobId(data: JobData): string {
  const { originals, batch: _batch, ...template } = data;
  const sources = originals.map((original) => original.source).sort();
  const identity = JSON.stringify([template, originals[0]!.stem, sources]);
  return `r${createHash('sha256').update(identity).digest('hex').slice(0, 40)}`;
}

/** A batch's id: sortable by time, with a random tail (`20261123-174512-3f9a1c`). */
export function batchId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${createHash('sha256').update(`${Math.random()}${process.pid}`).digest('hex').slice(0, 6)}`;
}

/** The keys content-api keeps beside BullMQ's (`bull:<name>:*`). */
export function keysFor(name: string) {
  const base = `content-api:${name}`;
  return {
    /** `{"protocol":1}`: this queue is content-api's, and of which protocol. */
    marker: `${base}:queue`,
    /** A job's last result: `<finished, ms since epoch (Redis clock)> <ResultRecord JSON>`. */
    result: (id: string) => `${base}:result:${id}`,
    /** A batch: its BatchRecord JSON. */
    batch: (id: string) => `${base}:batch:${id}`,
    /** A batch's jobs, each `[jobId, originals, sources as given]` JSON. */
    batchJobs: (id: string) => `${base}:batch:${id}:jobs`,
    /** A batch's originals finished by the jobs it added (a job it shared with an earlier batch counts there). */
    batchDone: (id: string) => `${base}:batch:${id}:done`,
    /** Batch ids by creation time (ZSET). */
    batches: `${base}:batches`,
    /** Counters: rendered, skipped, failed, retried (HASH). */
    stats: `${base}:stats`,
    /** Originals finished in a 10 s window, for the rate (`tick:<window>`, expiring). */
    tick: (window: number) => `${base}:tick:${window}`,
    /** BullMQ's own keys of this queue, to tell a queue of another application. */
    bullPrefix: `bull:${name}:`,
  };
}
export type QueueKeys = ReturnType<typeof keysFor>;

export const TICK_MS = 10_000;

const resultSchema = z.object({
  source: z.string(),
  status: z.enum(['rendered', 'skipped', 'planned']),
  original: z.object({ width: z.number(), height: z.number() }),
  format: z.enum(OUTPUT_FORMATS),
  files: z.record(z.enum(RENDITION_KEYS), z.object({ path: z.string(), width: z.number(), height: z.number() })),
  removed: z.array(z.string()),
});

/** What a job produced: the render results without their Image objects (rebuilt by the submitter, with its alt text). */
export const resultRecordSchema = z.object({
  results: z.array(resultSchema),
  failures: z.array(z.object({ source: z.string(), code: z.string(), error: z.string() })),
  warnings: z.array(z.string()),
  /** The worker that wrote it (`host:pid`) and the attempt (1 = first). */
  worker: z.string(),
  attempt: z.number(),
});
export type ResultRecord = z.infer<typeof resultRecordSchema>;

/** A batch as `render --queue` enqueued it, for `queue results` and `queue status`. */
export const batchRecordSchema = z.object({
  protocol: z.literal(PROTOCOL),
  id: z.string(),
  /** Redis clock, ms: results older than this are an earlier run's. */
  created: z.number(),
  template: jobDataSchema.omit({ originals: true, batch: true }),
  jobs: z.number(),
  originals: z.number(),
  /** What discovery found before enqueueing: failures and warnings of the report. */
  failures: z.array(z.object({ source: z.string(), code: z.string(), error: z.string() })),
  warnings: z.array(z.string()),
  shard: z.object({ index: z.number(), count: z.number() }).optional(),
});
export type BatchRecord = z.infer<typeof batchRecordSchema>;

/** A batch's job: its id, its originals as workers get them, and their names as the command line gave them. */
export const batchJobSchema = z.tuple([z.string(), z.array(originalSchema), z.array(z.string())]);
