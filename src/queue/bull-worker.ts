/**
 * BullMQ's worker, made to take any job hash that someone with access to Redis may have written,
 * and to hand its processor a job's data as the text Redis holds. Built on BullMQ's public surface:
 * a `Worker` given a `backendFactory`, which makes BullMQ's own Redis backend (`createRedisBackend`)
 * and wraps what the worker fetches through it.
 *
 * BullMQ reads a job's hash where it fetches the job (moving it to active, or taking the next one
 * as it finishes another): a field it cannot read there (`opts` or `progress` not JSON, `opts`
 * JSON `null`) throws in its fetch loop, never failing the job. The job stays in active, locked,
 * is put back when its lock lapses, fetched again, and its batch never ends. Here every hash is
 * read as BullMQ will read it before BullMQ sees it, and one it cannot read is refused (recorded
 * for its batch by the caller) and taken out of the queue, without ever reaching BullMQ.
 */
import type {
  BackendFactory,
  IQueueBackend,
  JobJson,
  Processor,
  RedisQueueBackend,
  Worker,
  WorkerOptions,
} from 'bullmq';
import type { Redis } from 'ioredis';
import { oneLine } from '../errors.js';
import { bullmq } from '../packages/bullmq.js';
import { commandsOn, type RunCommand } from './commands.js';

/** A job whose hash BullMQ cannot read, as it was fetched: refused, then taken out of the queue. */
export interface UnreadableJob {
  id: string;
  /** Its `data` field as Redis holds it ('' when it has none): its batch may still be read from it. */
  data: string;
  /** `a job hash BullMQ cannot read: its field 'opts' is unreadable (...)`. */
  reason: string;
  /** 1 = first (`attemptsMade` + 1, when that can be read). */
  attempt: number;
}

/** A worker whose jobs' data is the text Redis holds. */
export type TextDataWorker = Worker<string>;

/** The backend's methods (IQueueBackend) whose answer may carry the next job for the worker: `[JobJson, id, ...]`. */
export const NEXT_JOB_METHODS = ['moveToActive', 'moveToCompleted', 'moveToFailed', 'moveToDelayed'] as const;

/** BullMQ's scripts whose answer is a job BullMQ then reads: `[hash as name, value, ..., id, ...]`. */
export const FETCHES = new Set(['moveToActive', 'moveToFinished', 'moveToDelayed']);

/** Nothing fetched (what moveToActive answers on an empty queue). */
const NO_JOB = [0, 0, 0, 0];

/**
 * A BullMQ worker on `opts.connection` whose processor gets each job's data as the text Redis holds,
 * for `readJobData` (BullMQ would parse it while fetching the job; and a payload of any size before
 * anyone looked). Every other field BullMQ reads is read first here: see the file's comment.
 */
export function textDataWorker(
  name: string,
  processor: Processor<string>,
  opts: WorkerOptions & { connection: Redis },
  refuse: (job: UnreadableJob) => Promise<void>,
): TextDataWorker {
  const run = commandsOn(opts.connection);
  let worker: TextDataWorker | undefined;
  const reason = (hash: unknown[], id: string) => {
    // Fetching starts with `run()`, once the constructor has returned: never reached.
    if (worker === undefined) throw new Error(`job ${id} fetched before its worker was made`);
    return unreadable(worker, hash, id);
  };
  const backendFactory: BackendFactory<RedisQueueBackend> = (queueName, queueOpts, options) => {
    const backend = bullmq.createRedisBackend(queueName, queueOpts, options);
    refuseUnreadable(backend, reason, (job) => drop(backend, run, refuse, job));
    keepDataText(backend);
    return backend;
  };
  worker = new bullmq.Worker<string>(name, processor, opts, backendFactory);
  return worker;
}

/**
 * Makes the job data BullMQ hands the processor the text Redis holds. `Job.fromJSON` parses a
 * job's `data` (text, in `JobJson`) as JSON: given that text as a JSON string, it gives the text
 * back, never parsing what it says. Done on IQueueBackend's methods, BullMQ's public interface of a
 * backend, through which every job the worker runs comes (`NEXT_JOB_METHODS`).
 */
export function keepDataText(backend: IQueueBackend): void {
  const moveToActive = backend.moveToActive.bind(backend);
  backend.moveToActive = async (...args) => asText(await moveToActive(...args));
  const moveToDelayed = backend.moveToDelayed.bind(backend);
  backend.moveToDelayed = async (...args) => asText(await moveToDelayed(...args)) as undefined | unknown[];
  const moveToCompleted = backend.moveToCompleted.bind(backend);
  backend.moveToCompleted = async (...args) => {
    const moved = await moveToCompleted(...args);
    return { ...moved, result: asText(moved.result) };
  };
  const moveToFailed = backend.moveToFailed.bind(backend);
  backend.moveToFailed = async (...args) => {
    const moved = await moveToFailed(...args);
    return { ...moved, result: asText(moved.result) };
  };
}

/** `[JobJson, id, ...]` with the job's data as a JSON string of its text; anything else as it is. */
function asText<T>(next: T): T {
  if (!Array.isArray(next) || typeof next[0] !== 'object' || next[0] === null) return next;
  const json = next[0] as JobJson;
  return [{ ...json, data: JSON.stringify(json.data ?? '') }, ...next.slice(1)] as T;
}

/**
 * Reads the hash of every job a script of BullMQ's fetches, before BullMQ does: a job it cannot
 * read is refused and dropped, and the script answers the next job (or none) instead.
 *
 * Not on BullMQ's public surface, and the one place that is not: the backend's fetching methods
 * (`moveToActive`, ...) read the hash the script answers and throw on a field they cannot read, so
 * nothing outside them ever sees that answer or the job's id. The smallest seam before that read
 * is `RedisQueueBackend.execCommand` (public in its type, documented as private), with the names
 * of the scripts that fetch (`FETCHES`) and their answer's shape (read by `raw2NextJobData`,
 * exported). BullMQ is pinned to the exact version for it, and test/queue/bullmq-contract.test.ts
 * fails, without Redis, when an upgrade changes any of it.
 */
function refuseUnreadable(
  backend: RedisQueueBackend,
  reason: (hash: unknown[], id: string) => string | undefined,
  drop: (job: { id: string; hash: unknown[]; reason: string }) => Promise<void>,
): void {
  const exec = backend.execCommand.bind(backend);
  backend.execCommand = async (client, command, args) => {
    for (;;) {
      const raw: unknown = await exec(client, command, args);
      if (!FETCHES.has(command) || !Array.isArray(raw) || !Array.isArray(raw[0])) return raw;
      const id = String(raw[1]);
      const why = reason(raw[0] as unknown[], id);
      if (why === undefined) return raw;
      await drop({ id, hash: raw[0] as unknown[], reason: why });
      // Taking a job: the next one in its place. Finishing another (which fetches the next): no job this time.
      if (command !== 'moveToActive') return NO_JOB;
    }
  };
}

/** What BullMQ makes a job for: the worker. */
type JobQueue = Parameters<typeof bullmq.Job.fromJSON>[0];

/**
 * Why BullMQ cannot read the hash (`[name, value, ...]`) of job `id` for `queue`, naming the field;
 * undefined when it can.
 */
export function unreadable(queue: JobQueue, hash: unknown[], id: string): string | undefined {
  if (problem(queue, hash, id) === undefined) return undefined;
  for (let i = 0; i + 1 < hash.length; i += 2) {
    const found = problem(queue, [hash[i], hash[i + 1]], id);
    if (found === undefined) continue;
    // A field's name is anyone's, of any length: a line names it, not a megabyte of it.
    const name = String(hash[i]);
    const shown = name.length > 64 ? `${name.slice(0, 64)}...` : name;
    return `a job hash BullMQ cannot read: its field '${shown}' is unreadable (${found})`;
  }
  return `a job hash BullMQ cannot read (${problem(queue, hash, id)})`;
}

/** What throws when BullMQ reads the hash as its worker does, or `parent` its scripts cannot read. */
function problem(queue: JobQueue, hash: unknown[], id: string): string | undefined {
  try {
    const [json] = bullmq.raw2NextJobData([hash, id, 0, 0]) as [JobJson];
    // As the worker makes a job of it (`Job.fromJSON`); its data is read apart, as text (keepDataText).
    const job = bullmq.Job.fromJSON(queue, { ...json, data: 'null' }, id);
    // Read again by BullMQ's scripts as a job finishes, which index it as an object.
    if (job.parent !== undefined && (typeof job.parent !== 'object' || job.parent === null)) return 'not a JSON object';
  } catch (error) {
    return oneLine(error);
  }
  return undefined;
}

/** Refuses a job BullMQ cannot read (for its batch, by `refuse`), then takes it out of the queue if still active. */
async function drop(
  backend: IQueueBackend,
  run: RunCommand,
  refuse: (job: UnreadableJob) => Promise<void>,
  { id, hash, reason }: { id: string; hash: unknown[]; reason: string },
): Promise<void> {
  const field = (name: string) => {
    const at = hash.findIndex((value, i) => i % 2 === 0 && value === name);
    return at < 0 ? undefined : String(hash[at + 1]);
  };
  const attempt = Number.parseInt(field('atm') ?? field('attemptsMade') ?? '0', 10) + 1;
  await refuse({ id, data: field('data') ?? '', reason, attempt: Number.isSafeInteger(attempt) ? attempt : 1 });
  await run('dropJob', [backend.keys.active!, backend.keys.stalled!, backend.toKey(id)], [id]);
}
