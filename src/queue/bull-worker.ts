/**
 * BullMQ's worker, made to take any job hash that someone with access to Redis may have written.
 *
 * BullMQ reads a job's hash where it fetches the job (moving it to active, or taking the next one
 * as it finishes another): a field it cannot read there (`opts` or `progress` not JSON, `opts`
 * JSON `null`) throws in its fetch loop, never failing the job. The job stays in active, locked,
 * is put back when its lock lapses, fetched again, and its batch never ends. Here every hash is
 * read as BullMQ will read it before BullMQ sees it, and one it cannot read is refused (recorded
 * for its batch by the caller) and taken out of the queue, without ever reaching BullMQ.
 */
import { type Job, type JobJson, type Processor, raw2NextJobData, Worker, type WorkerOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { oneLine } from '../errors.js';

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

/** The scripts whose answer is a job BullMQ then reads: `[hash as name, value, ..., id, ...]`. */
export const FETCHES = new Set(['moveToActive', 'moveToFinished', 'moveToDelayed']);

/** Nothing fetched (what moveToActive answers on an empty queue). */
const NO_JOB = [0, 0, 0, 0];

/**
 * A job's data reaches the processor as the text Redis holds, for `readJobData` (BullMQ would parse
 * it while fetching the job; and a payload of any size before anyone looked). Every other field
 * BullMQ reads is read first here: see the file's comment.
 */
export class TextDataWorker extends Worker<string> {
  readonly #redis: Redis;
  readonly #refuse: (job: UnreadableJob) => Promise<void>;

  constructor(
    name: string,
    processor: Processor<string>,
    opts: WorkerOptions & { connection: Redis },
    refuse: (job: UnreadableJob) => Promise<void>,
  ) {
    super(name, processor, opts);
    this.#redis = opts.connection;
    this.#refuse = refuse;
    this.#redis.defineCommand('contentApiDropJob', {
      numberOfKeys: 3,
      // KEYS: active, stalled, job hash; ARGV: id. Only a job still active (no stalled check put it back).
      lua: `
        if redis.call('LREM', KEYS[1], -1, ARGV[1]) == 0 then return 0 end
        redis.call('SREM', KEYS[2], ARGV[1])
        redis.call('DEL', KEYS[3], KEYS[3] .. ':lock', KEYS[3] .. ':logs')
        return 1`,
    });
  }

  protected override createJob(json: JobJson, jobId: string): Job<string> {
    const job = super.createJob({ ...json, data: 'null' }, jobId);
    job.data = json.data ?? '';
    return job;
  }

  /** Every answer of a script that fetches a job is read here first (called while BullMQ's constructor runs). */
  protected override createBackend(): void {
    super.createBackend();
    const backend = this.backend;
    const exec = backend.execCommand.bind(backend);
    backend.execCommand = async (client, command, args) => {
      for (;;) {
        const raw: unknown = await exec(client, command, args);
        if (!FETCHES.has(command) || !Array.isArray(raw) || !Array.isArray(raw[0])) return raw;
        const id = String(raw[1]);
        const reason = this.#unreadable(raw[0] as unknown[], id);
        if (reason === undefined) return raw;
        await this.#drop(id, raw[0] as unknown[], reason);
        // Taking a job: the next one in its place. Finishing another (which fetches the next): no job this time.
        if (command !== 'moveToActive') return NO_JOB;
      }
    };
  }

  /** Why BullMQ cannot read the hash (`[name, value, ...]`), naming the field; undefined when it can. */
  #unreadable(hash: unknown[], id: string): string | undefined {
    if (this.#problem(hash, id) === undefined) return undefined;
    for (let i = 0; i + 1 < hash.length; i += 2) {
      const problem = this.#problem([hash[i], hash[i + 1]], id);
      if (problem === undefined) continue;
      // A field's name is anyone's, of any length: a line names it, not a megabyte of it.
      const name = String(hash[i]);
      const shown = name.length > 64 ? `${name.slice(0, 64)}...` : name;
      return `a job hash BullMQ cannot read: its field '${shown}' is unreadable (${problem})`;
    }
    return `a job hash BullMQ cannot read (${this.#problem(hash, id)})`;
  }

  /** What throws when BullMQ reads the hash as its worker does, or `parent` its scripts cannot read. */
  #problem(hash: unknown[], id: string): string | undefined {
    try {
      const [json] = raw2NextJobData([hash, id, 0, 0]) as [JobJson];
      const job = this.createJob(json, id);
      // Read again by BullMQ's scripts as a job finishes, which index it as an object.
      if (job.parent !== undefined && (typeof job.parent !== 'object' || job.parent === null))
        return 'not a JSON object';
    } catch (error) {
      return oneLine(error);
    }
    return undefined;
  }

  async #drop(id: string, hash: unknown[], reason: string): Promise<void> {
    const field = (name: string) => {
      const at = hash.findIndex((value, i) => i % 2 === 0 && value === name);
      return at < 0 ? undefined : String(hash[at + 1]);
    };
    const attempt = Number.parseInt(field('atm') ?? field('attemptsMade') ?? '0', 10) + 1;
    await this.#refuse({ id, data: field('data') ?? '', reason, attempt: Number.isSafeInteger(attempt) ? attempt : 1 });
    const drop = (this.#redis as unknown as Record<string, (...args: string[]) => Promise<number>>).contentApiDropJob!;
    await drop.call(this.#redis, this.keys.active!, this.keys.stalled!, this.toKey(id), id);
  }
}
