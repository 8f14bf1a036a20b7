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
import path from 'node:path';
import { z } from 'zod';
import { parseJsonAs, parseJsonOrUndefined } from '../json.js';
import { OUTPUT_FORMATS } from '../renditions/formats.js';
import { isStem, RENDITION_KEYS } from '../renditions/rules.js';
import { renderSettingsSchema, type SettingsSchema } from '../renditions/settings.js';
import { isS3Url, splitS3Object } from '../storage/s3-url.js';

/** The shape of the job data and of the keys beside BullMQ's: bumped by hand when they change. */
const STRUCTURE = 2;

/**
 * What submitters and workers must both speak, or refuse each other: the structure's number and a
 * digest of the render settings' schema (every setting, its type, bounds and default), `2.3f9a1c0e`.
 * A setting added to the schema travels in every job, so it changes the protocol by itself:
 * nobody has to remember to bump a number, and a worker never renders a job with settings it
 * would silently drop.
 */
export const PROTOCOL = protocolOf(renderSettingsSchema);

/** The protocol of jobs whose settings have `schema`'s shape. */
export function protocolOf(schema: SettingsSchema): string {
  const shape = JSON.stringify(z.toJSONSchema(schema, { io: 'input' }));
  return `${STRUCTURE}.${createHash('sha256').update(shape).digest('hex').slice(0, 8)}`;
}

export const DEFAULT_QUEUE_NAME = 'content-api';

/**
 * Stalled-job recovery: a worker renews its jobs' locks every `LOCK_MS / 2`; a job whose lock
 * has lapsed (its worker was killed) is put back by the next stalled check of any worker, so
 * it runs again within about LOCK_MS + 2 * STALLED_INTERVAL_MS (15 s) rather than BullMQ's
 * default of a minute. (Twice the interval: BullMQ skips a check that comes a hair before the
 * previous one's marker expires, measured by the queue bench.) The renewal runs on the event
 * loop, which rendering leaves free (libvips works in its own threads), so 5 s of slack is
 * plenty. A job that stalls more than MAX_STALLED times (an original that kills every worker
 * that opens it) fails.
 */
export const LOCK_MS = 10_000;
/** How often a worker looks for jobs whose lock lapsed: a quarter of its lock (2.5 s for LOCK_MS). */
export const stalledIntervalOf = (lockMs: number) => Math.round(lockMs / 4);
export const STALLED_INTERVAL_MS = stalledIntervalOf(LOCK_MS);
/**
 * The shortest lock a worker takes (`worker --lock-ms`, which tests use to see a killed worker's job
 * taken over sooner): renewed every half of it, so a second of slack on a busy event loop.
 */
export const MIN_LOCK_MS = 2_000;
export const MAX_STALLED = 2;

/** Tries for a job failing for the infrastructure (S3 throttled, a disk full), 2 s backoff doubling: about a minute. */
export const ATTEMPTS = 6;
export const BACKOFF_MS = 2_000;

/** How long results and batches are kept for `queue results` (7 days). */
export const RESULT_TTL_SECONDS = 7 * 24 * 3600;

/**
 * Read back from Redis, checked like any input: a source is a path or an object; a stem is one
 * `render` makes (`isStem`), so it stays below the output and never names the tool's own files.
 */
const originalSchema = z.object({
  source: z.string().refine((source) => (isS3Url(source) ? isObjectUrl(source) : path.isAbsolute(source)), {
    message: 'an absolute path or s3://bucket/key',
  }),
  stem: z.string().refine(isStem, {
    message: "a stem render makes: '/'-separated names of a-z, 0-9 and '-' (never the tool's own files)",
  }),
});

const isObjectUrl = (url: string) => {
  try {
    splitS3Object(url);
    return true;
  } catch {
    return false;
  }
};

export const BATCH_ID = /^\d{8}-\d{6}-[0-9a-f]{6}$/;

/**
 * A job: the originals of one image, where they go, and every setting that shapes the files.
 * How to reach S3 (endpoint, credentials) is each worker's own configuration, never the job's:
 * whoever can enqueue cannot send a worker's credentials elsewhere.
 */
export const jobDataSchema = z.object({
  protocol: z.literal(PROTOCOL),
  outDir: z.string().refine((out) => (isS3Url(out) ? URL.canParse(out) : path.isAbsolute(out)), {
    message: 'an absolute path or s3://bucket/prefix/',
  }),
  /** The render settings themselves: a setting added there travels with every job, checked as locally. */
  settings: renderSettingsSchema,
  force: z.boolean(),
  originals: z.array(originalSchema).min(1),
  /** The batch that added the job, whose count of finished originals its worker updates (not part of its id). */
  batch: z.string().regex(BATCH_ID),
});
export type JobData = z.infer<typeof jobDataSchema>;
/** A job's data but for its originals and batch: shared by a batch's jobs; what a worker opens a session with. */
export type JobTemplate = Omit<JobData, 'originals' | 'batch'>;

/**
 * The most job data, as Redis holds it, a worker reads: a job `render --queue` makes is one
 * image's paths and the settings, a few KiB. Past it the job is refused as it is, so nothing of a
 * hostile payload is parsed, echoed in a log or written back to Redis.
 */
export const MAX_JOB_DATA_BYTES = 64 * 1024;

/** The batch a job's data names, read alone: said with a job refused for the rest of its data. */
export const jobBatchSchema = jobDataSchema.pick({ batch: true });

/** A job's data as read by a worker: the job, or why it is refused (and its batch, when that much could be read). */
export type ReadJob = { data: JobData } | { refused: string; batch: string | undefined };

/**
 * Reads a job's data from the text Redis holds: at most MAX_JOB_DATA_BYTES, JSON, of this
 * protocol's shape. The reason for a refusal is one line, escaped, and bounded.
 */
export function readJobData(text: string): ReadJob {
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_JOB_DATA_BYTES) {
    return { refused: `job data of ${bytes} bytes, over the limit of ${MAX_JOB_DATA_BYTES}`, batch: undefined };
  }
  const parsed = parseJsonAs(jobDataSchema, text);
  if (parsed.ok) return { data: parsed.data };
  const [first, ...more] = parsed.problems;
  return {
    refused:
      `not a render job of content-api protocol ${PROTOCOL}: ${first}` +
      (more.length > 0 ? ` (and ${more.length} more problem(s))` : ''),
    batch: parseJsonOrUndefined(jobBatchSchema, text)?.batch,
  };
}

/** What a job's data shares with every job of its batch. */
export function templateOf({ originals: _originals, batch: _batch, ...template }: JobData): JobTemplate {
  return template;
}

export const JOB_ID = /^r[0-9a-f]{40}$/;

/** `r<hex>`: never an integer, never a `:` (BullMQ refuses both as custom ids). */
export function jobId(data: JobData): string {
  const { originals } = data;
  const template = templateOf(data);
  const sources = originals.map((original) => original.source).sort();
  const identity = JSON.stringify([template, originals[0]!.stem, sources]);
  return `r${createHash('sha256').update(identity).digest('hex').slice(0, 40)}`;
}

/** A batch's id: sortable by time, with a random tail (`20261123-174512-3f9a1c`). */
export function batchId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${createHash('sha256').update(`${Math.random()}${process.pid}`).digest('hex').slice(0, 6)}`;
}

/** Where a job's result goes when its data was refused before its batch could be read (not JSON, too large). */
export const UNKNOWN_BATCH = '*';

/** The keys content-api keeps beside BullMQ's (`bull:<name>:*`). */
export function keysFor(name: string) {
  const base = `content-api:${name}`;
  return {
    /** `{"protocol":"2.3f9a1c0e"}`: this queue is content-api's, and of which protocol. */
    marker: `${base}:queue`,
    /**
     * A job's results, one per batch that ran it (HASH: batch id -> `<finished, ms since epoch
     * (Redis clock)> <ResultRecord JSON>`). The first written stands: a run again of the same
     * job for the same batch (its worker's lock lapsed) neither replaces it nor counts again.
     * A job refused before its batch could be read is under `UNKNOWN_BATCH`, the latest standing,
     * for the batch that lists it.
     */
    result: (id: string) => `${base}:result:${id}`,
    /** Times a job was put back after a denial (expiring): see the worker's DENIED_PUTBACKS. */
    denied: (id: string) => `${base}:denied:${id}`,
    /** A batch: its BatchRecord JSON. */
    batch: (id: string) => `${base}:batch:${id}`,
    /** A batch's jobs, each `[jobId, originals, sources as given]` JSON. */
    batchJobs: (id: string) => `${base}:batch:${id}:jobs`,
    /** A batch's jobs taken out of the queue by Ctrl-C (SET): not started, never put back. */
    batchCancelled: (id: string) => `${base}:batch:${id}:cancelled`,
    /** A batch's originals finished by the jobs it added (a job it shared with an earlier batch counts there). */
    batchDone: (id: string) => `${base}:batch:${id}:done`,
    /** Batch ids by creation time (ZSET). */
    batches: `${base}:batches`,
    /** Counters: rendered, skipped, failed, retried (HASH). */
    stats: `${base}:stats`,
    /** Originals finished in a TICK_MS window of Redis's clock, for the rate (`tick:<window>`, expiring). */
    tick: (window: number | '') => `${base}:tick:${window}`,
    /** BullMQ's own keys of this queue, to tell a queue of another application. */
    bullPrefix: `bull:${name}:`,
  };
}
export type QueueKeys = ReturnType<typeof keysFor>;

export const TICK_MS = 10_000;

/** Each rendition's file; `version` (its URL's `?v=`) once written, absent from older workers' results. */
const filesSchema = z.record(
  z.enum(RENDITION_KEYS),
  z.object({
    path: z.string(),
    width: z.number(),
    height: z.number(),
    version: z
      .string()
      .regex(/^[0-9a-f]{8}$/)
      .optional(),
  }),
);
const measuredSchema = z
  .record(
    z.enum(RENDITION_KEYS),
    z.object({ quality: z.number(), score: z.number(), scored: z.enum(['rendition', 'tiles']) }),
  )
  .optional();

/** A render result as a worker records it; `bytes`, `alternates` and `placeholder` are absent from older workers'. */
const resultSchema = z.object({
  source: z.string(),
  status: z.enum(['rendered', 'skipped', 'planned']),
  original: z.object({ width: z.number(), height: z.number() }),
  format: z.enum(OUTPUT_FORMATS),
  files: filesSchema,
  bytes: z.number().nullable().optional(),
  measured: measuredSchema,
  alternates: z
    .array(
      z.object({
        format: z.enum(OUTPUT_FORMATS),
        type: z.string(),
        srcset: z.string(),
        files: filesSchema,
        bytes: z.number().nullable(),
        measured: measuredSchema,
        firstFrameOnly: z.literal(true).optional(),
      }),
    )
    .optional(),
  placeholder: z.object({ color: z.string(), preview: z.string(), transparent: z.boolean().default(false) }).optional(),
  removed: z.array(z.string()),
  /** Files of earlier renderings kept (absent from workers before it). */
  kept: z.array(z.string()).optional(),
});

const failureSchema = z.object({ source: z.string(), code: z.string(), error: z.string() });

/** What a job produced: render results without Image objects (the submitter builds them, with its alt text). */
export const resultRecordSchema = z.object({
  results: z.array(resultSchema),
  failures: z.array(failureSchema),
  warnings: z.array(z.string()),
  /**
   * Why the worker refused the job's data (`readJobData`): each of the job's originals, as its
   * batch lists them, failed for that. Results and failures are then empty.
   */
  refused: z.string().optional(),
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
  /** The output as the command line gave it (`template.outDir` is absolute for a folder), for the report. */
  out: z.string(),
  /** What discovery found before enqueueing: failures and warnings of the report. */
  failures: z.array(failureSchema),
  warnings: z.array(z.string()),
  shard: z.object({ index: z.number(), count: z.number() }).optional(),
});
export type BatchRecord = z.infer<typeof batchRecordSchema>;

/** A batch's job: its id, its originals as workers get them, and their names as the command line gave them. */
export const batchJobSchema = z.tuple([z.string(), z.array(originalSchema), z.array(z.string())]);
