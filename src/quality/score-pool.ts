/**
 * SSIMULACRA2 off the main thread. The metric is synchronous (about 0.12 s of CPU a megapixel
 * against a prepared reference in WebAssembly, 0.45 s in TypeScript), so on the main thread the
 * searches of every original under way would take turns on one core while the others wait. The
 * pool keeps up to one worker thread a core; each reference is prepared in the least busy one, and
 * every score against it runs there.
 *
 * Without its compiled worker (the library run from its TypeScript sources, as the tests do) the
 * pool scores in the calling thread: the same functions and scores, on one core.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { InvalidArgumentError } from '../errors.js';
import type { RawPixels } from './linear.js';
import { type PreparedSsimulacra2, prepareSsimulacra2 } from './ssimulacra2.js';

/** What a thread is asked; `call` numbers the reply. */
export type ScoreRequest =
  | { kind: 'prepare'; call: number; reference: number; pixels: RawPixels }
  | { kind: 'score'; call: number; reference: number; pixels: RawPixels }
  | { kind: 'release'; reference: number };

/** The answer to a `prepare` (score 0) or a `score`, or what either threw. */
export type ScoreReply = { call: number; score: number } | { call: number; error: { name: string; message: string } };

/** A reference prepared in the pool, scored against until released. */
export interface PooledReference {
  /** `prepareSsimulacra2(reference).score(distorted)`, computed in the reference's thread. */
  score(distorted: RawPixels): Promise<number>;
  /** Frees the reference's planes (`PreparedSsimulacra2.bytes`) in its thread. */
  release(): void;
}

/** One thread's answers to its requests, with the references it holds. */
export function answerer(): (request: ScoreRequest) => ScoreReply | undefined {
  const prepared = new Map<number, PreparedSsimulacra2>();
  return (request) => {
    if (request.kind === 'release') {
      prepared.delete(request.reference);
      return undefined;
    }
    try {
      if (request.kind === 'prepare') {
        prepared.set(request.reference, prepareSsimulacra2(request.pixels));
        return { call: request.call, score: 0 };
      }
      const reference = prepared.get(request.reference);
      if (!reference) throw new Error(`no prepared reference ${request.reference} in this thread`);
      return { call: request.call, score: reference.score(request.pixels) };
    } catch (error) {
      const { name, message } = error instanceof Error ? error : new Error(String(error));
      return { call: request.call, error: { name, message } };
    }
  };
}

/** Threads at most, whatever the cores: each holds its own V8 heap. */
const MAX_THREADS = 4;
const WORKER = new URL('./score-worker.js', import.meta.url);

interface Pending {
  resolve(score: number): void;
  reject(error: Error): void;
}

/** A worker thread, or the calling thread when `worker` is undefined. */
interface Thread {
  worker: Worker | undefined;
  answer: ReturnType<typeof answerer> | undefined;
  /** References prepared here and not released, each counted once per search on it: how busy the thread will be. */
  references: number;
  pending: Map<number, Pending>;
  /** Why the thread stopped, once it has. */
  stopped?: Error;
}

export interface ScorePoolOptions {
  /** Worker threads at most (default: one a core, at most 4). */
  threads?: number;
  /** The compiled worker (default: score-worker.js beside this module). */
  worker?: URL;
}

export class ScorePool {
  readonly #size: number;
  readonly #worker: URL | undefined;
  readonly #threads: Thread[] = [];
  #calls = 0;
  #references = 0;

  constructor(options: ScorePoolOptions = {}) {
    this.#size = Math.max(1, options.threads ?? Math.min(availableParallelism(), MAX_THREADS));
    const worker = options.worker ?? WORKER;
    this.#worker = existsSync(fileURLToPath(worker)) ? worker : undefined;
  }

  /**
   * Prepares `reference` in the least busy thread, for scores against it there; `searches`: how many
   * searches will score against it at once (several formats of one size), each counting as a reference.
   */
  async prepare(reference: RawPixels, searches = 1): Promise<PooledReference> {
    const thread = this.#leastBusy();
    const id = this.#references++;
    thread.references += searches;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      thread.references -= searches;
      this.#send(thread, { kind: 'release', reference: id });
    };
    try {
      await this.#ask(thread, (call) => ({ kind: 'prepare', call, reference: id, pixels: reference }));
    } catch (error) {
      release();
      throw error;
    }
    return {
      score: (distorted) => this.#ask(thread, (call) => ({ kind: 'score', call, reference: id, pixels: distorted })),
      release,
    };
  }

  /**
   * Starts the threads not started yet, so that they load while the caller decodes what it will
   * score; idle, they do not keep the process alive.
   */
  warm(): void {
    while (this.#threads.length < this.#size) this.#start();
  }

  /** Stops every worker thread; scores still under way are rejected. */
  async close(): Promise<void> {
    const threads = this.#threads.splice(0);
    await Promise.all(threads.map((thread) => thread.worker?.terminate()));
  }

  #leastBusy(): Thread {
    const idle = this.#threads.find((thread) => thread.references === 0);
    if (idle) return idle;
    if (this.#threads.length < this.#size) return this.#start();
    return this.#threads.reduce((a, b) => (b.references < a.references ? b : a));
  }

  #start(): Thread {
    const thread: Thread = { worker: undefined, answer: undefined, references: 0, pending: new Map() };
    this.#threads.push(thread);
    if (!this.#worker) {
      thread.answer = answerer();
      return thread;
    }
    // The process's Node options, but `--input-type`, which a worker loaded from a file refuses.
    const execArgv = process.execArgv.filter((option) => !option.startsWith('--input-type'));
    const worker = new Worker(this.#worker, { execArgv });
    thread.worker = worker;
    worker.on('message', (reply: ScoreReply) => {
      const waiting = thread.pending.get(reply.call);
      thread.pending.delete(reply.call);
      if (thread.pending.size === 0) worker.unref();
      if ('error' in reply) waiting?.reject(rebuild(reply.error));
      else waiting?.resolve(reply.score);
    });
    const stop = (error: Error) => {
      thread.stopped ??= error;
      const at = this.#threads.indexOf(thread);
      if (at >= 0) this.#threads.splice(at, 1);
      for (const waiting of thread.pending.values()) waiting.reject(thread.stopped);
      thread.pending.clear();
    };
    worker.on('error', (error) => stop(new Error(`the SSIMULACRA2 thread failed: ${error.message}`)));
    worker.on('exit', (code) => stop(new Error(`the SSIMULACRA2 thread stopped (exit code ${code})`)));
    // Idle threads do not keep the process alive; one with a score under way does (see #ask). After the
    // listeners: adding a 'message' listener refs the worker again.
    worker.unref();
    return thread;
  }

  #ask(thread: Thread, request: (call: number) => ScoreRequest): Promise<number> {
    const call = this.#calls++;
    if (!thread.worker) {
      const reply = thread.answer!(request(call))!;
      return 'error' in reply ? Promise.reject(rebuild(reply.error)) : Promise.resolve(reply.score);
    }
    if (thread.stopped) return Promise.reject(thread.stopped);
    return new Promise((resolve, reject) => {
      if (thread.pending.size === 0) thread.worker!.ref();
      thread.pending.set(call, { resolve, reject });
      this.#send(thread, request(call));
    });
  }

  /** Posts `request`, its pixels copied into a buffer of their own that moves to the thread. */
  #send(thread: Thread, request: ScoreRequest): void {
    if (!thread.worker) {
      thread.answer!(request);
      return;
    }
    if (thread.stopped) return;
    if (request.kind === 'release') {
      thread.worker.postMessage(request);
      return;
    }
    const { width, height, channels } = request.pixels.info;
    const data = new Uint8Array(request.pixels.data);
    thread.worker.postMessage({ ...request, pixels: { data, info: { width, height, channels } } }, [data.buffer]);
  }
}

/** The error a thread threw, as the library's own class where it is one. */
function rebuild({ name, message }: { name: string; message: string }): Error {
  return name === 'InvalidArgumentError' ? new InvalidArgumentError(message) : new Error(message);
}

let shared: ScorePool | undefined;
/** The process's pool, made on first use; its idle threads never keep the process alive. */
export const scorePool = (): ScorePool => {
  shared ??= new ScorePool();
  return shared;
};
