/**
 * SSIMULACRA2 off the main thread. The metric is synchronous (about 0.12 s of CPU a megapixel
 * against a prepared reference in WebAssembly, 0.45 s in TypeScript), so on the main thread the
 * searches of every original under way would take turns on one core while the others wait. The
 * pool keeps up to one worker thread a core; each reference is prepared in the least busy one, and
 * every score against it runs there.
 *
 * A pool is its owner's: made by whoever renders (a batch makes its own, a queue worker one for its
 * life, a caller may pass one to each), and closed by it. With `threads: 0` it scores in the calling
 * thread (the library run from its TypeScript sources, which has no compiled worker, as some tests
 * do): the same functions and scores, on one core. So it does where worker threads cannot start
 * (below), saying why once (`takeNotices`, in the batch's warnings). A compiled worker missing is an
 * error: scoring on the calling thread would hold it for seconds at a time, unasked.
 */
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { InvalidArgumentError, oneLine } from '../errors.js';
import type { RawPixels } from './linear.js';
import { RELAXED_SIMD_FLAG, WasmMemories, wasmCompiles, wasmTurnedOff } from './prepared-wasm.js';
import { prepareReleasable, type ReleasableSsimulacra2 } from './ssimulacra2.js';

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

/**
 * One thread's answers to its requests, with the references it holds, and the memories of those it
 * released kept for the next (WasmMemories): they go with the thread.
 */
export function answerer(): (request: ScoreRequest) => ScoreReply | undefined {
  const prepared = new Map<number, ReleasableSsimulacra2>();
  const memories = new WasmMemories();
  return (request) => {
    if (request.kind === 'release') {
      prepared.get(request.reference)?.release();
      prepared.delete(request.reference);
      return undefined;
    }
    try {
      if (request.kind === 'prepare') {
        prepared.set(request.reference, prepareReleasable(request.pixels, memories));
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

/**
 * The code range of a thread's V8 heap, in MB: address space reserved whole when the thread starts,
 * for the machine code V8 compiles. Without a limit V8 reserves its maximum, 512 MB a thread on
 * Node 20 x64, and a reservation that fails is not an error but a fatal OOM of the whole process
 * ("Failed to reserve virtual memory for CodeRange", under `ulimit -v`). A scoring thread compiles
 * under 1 MB of code (the metric's loops and the modules they import: `code_space` after scoring
 * 4 MP references in TypeScript and in WebAssembly, whose compiled code lies outside the range):
 * 16 MB is ample room and leaves the address space to the pixels.
 */
const CODE_RANGE_MB = 16;
const MB = 2 ** 20;
/**
 * Under `ulimit -v`, a worker starts only with the address space for it and for the rest of the
 * render left: WORKER_ADDRESS_SPACE a thread (its code range, its 4 MB stack, a malloc arena of
 * 64 MB and its heap's first pages: about 100 MB measured at start), and RENDER_ADDRESS_SPACE kept
 * for the work itself (the original decoded, the renditions encoded, the references scored), which
 * the calling thread needs as much. Otherwise the references are scored in the calling thread.
 */
const WORKER_ADDRESS_SPACE = 128 * MB;
const RENDER_ADDRESS_SPACE = 384 * MB;

/** The process's address space left under `ulimit -v` (RLIMIT_AS), in bytes; undefined without a limit or /proc. */
function addressSpaceLeft(): number | undefined {
  try {
    const limit = /^Max address space\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    const size = /^VmSize:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return limit && size ? Number(limit[1]) - Number(size[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether V8 runs without its JIT (`node --jitless`, on the command line or in NODE_OPTIONS), which
 * also takes WebAssembly away: the metric then runs in interpreted TypeScript, in any thread.
 */
const jitless = (): boolean =>
  !('WebAssembly' in globalThis) &&
  [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].includes('--jitless');

/** Why the metric runs slower than it could in this process, if it does: for the batch's warnings. */
function engineNotice(): string | undefined {
  if (jitless()) {
    return (
      'node --jitless turns off the JIT and WebAssembly: SSIMULACRA2 scores in interpreted TypeScript, ' +
      'tens of times slower'
    );
  }
  if (wasmTurnedOff() || wasmCompiles()) return undefined;
  return (
    `SSIMULACRA2 scores in TypeScript, about 3.5 times slower than its WebAssembly: this Node needs ` +
    `${RELAXED_SIMD_FLAG} for it (node ${RELAXED_SIMD_FLAG}, as the content-api command sets)`
  );
}

/** An error of a thread that stopped before it ran: its requests are asked again in another thread. */
class NotStartedError extends Error {}

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
  /** Whether the worker has started running JavaScript (its 'online' event). */
  online?: boolean;
  /** Whether `close()` stopped it: on purpose, not unable to start, even before it ran. */
  closed?: boolean;
  /** Why the thread stopped, once it has. */
  stopped?: Error;
}

export interface ScorePoolOptions {
  /** Worker threads at most (default: one a core, at most 4); 0: every score in the calling thread. */
  threads?: number;
  /** The compiled worker (default: score-worker.js beside this module). */
  worker?: URL;
}

export class ScorePool {
  #size: number;
  /** What the pool had to do otherwise than asked (see `takeNotices`), each said once. */
  readonly #notices: string[] = [];
  /** Whether the notice of a slower engine (no JIT, no relaxed SIMD) was given. */
  #engineSaid = false;
  /** The compiled worker, until worker threads prove unable to start here. */
  #worker: URL | undefined;
  readonly #threads: Thread[] = [];
  #calls = 0;
  #references = 0;

  /** @throws InvalidArgumentError for a bad `threads`, or a compiled worker that is not there. */
  constructor(options: ScorePoolOptions = {}) {
    const threads = options.threads ?? Math.min(availableParallelism(), MAX_THREADS);
    if (!Number.isInteger(threads) || threads < 0) {
      throw new InvalidArgumentError(`Expected a whole number of score threads, 0 or more, but got ${threads}`);
    }
    this.#size = Math.max(1, threads);
    if (threads === 0) return;
    const worker = options.worker ?? WORKER;
    if (!existsSync(fileURLToPath(worker))) {
      throw new InvalidArgumentError(
        `the SSIMULACRA2 worker ${fileURLToPath(worker)} is not there: build the package (npm run build), ` +
          'or score in the calling thread (a ScorePool of threads: 0)',
      );
    }
    this.#worker = worker;
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
      // A worker that could not start has turned the pool to the calling thread (#startWorker): there, then.
      if (error instanceof NotStartedError) return this.prepare(reference, searches);
      throw error;
    }
    return {
      score: (distorted) => this.#ask(thread, (call) => ({ kind: 'score', call, reference: id, pixels: distorted })),
      release,
    };
  }

  /** What the pool had to do otherwise than asked since last asked, each said once: for a batch's warnings. */
  takeNotices(): string[] {
    return this.#notices.splice(0);
  }

  /**
   * Starts the threads not started yet, so that they load while the caller decodes what it will
   * score; idle, they do not keep the process alive.
   */
  warm(): void {
    while (this.#threads.length < this.#size && this.#start());
  }

  /** Stops every worker thread; scores still under way are rejected. */
  async close(): Promise<void> {
    const threads = this.#threads.splice(0);
    for (const thread of threads) thread.closed = true;
    await Promise.all(threads.map((thread) => thread.worker?.terminate()));
  }

  #leastBusy(): Thread {
    const idle = this.#threads.find((thread) => thread.references === 0);
    if (idle) return idle;
    if (this.#threads.length < this.#size) {
      const started = this.#start();
      if (started) return started;
    }
    return this.#threads.reduce((a, b) => (b.references < a.references ? b : a));
  }

  /** A new thread; undefined when a worker cannot start now but other threads can do its work. */
  #start(): Thread | undefined {
    if (!this.#engineSaid) {
      this.#engineSaid = true;
      const slower = engineNotice();
      if (slower) this.#notices.push(slower);
    }
    const thread: Thread = { worker: undefined, answer: undefined, references: 0, pending: new Map() };
    if (this.#worker) {
      let worker: Worker | undefined;
      let why = this.#refusal();
      if (why === undefined) {
        try {
          worker = this.#startWorker(thread, this.#worker);
        } catch (error) {
          why = `worker threads cannot start (${oneLine(error)})`;
        }
      }
      if (worker) return thread;
      if (this.#threads.length > 0) {
        this.#size = this.#threads.length;
        return undefined;
      }
      this.#toCallingThread(why!);
    }
    thread.answer = answerer();
    this.#threads.push(thread);
    return thread;
  }

  /** Why a worker must not start now: too little address space under `ulimit -v`, where a failed start is fatal. */
  #refusal(): string | undefined {
    const left = addressSpaceLeft();
    if (left === undefined) return undefined;
    // A thread still starting may not have reserved its address space yet: count it as taken.
    const starting = this.#threads.filter((thread) => thread.worker && !thread.online).length;
    if (left >= RENDER_ADDRESS_SPACE + (starting + 1) * WORKER_ADDRESS_SPACE) return undefined;
    return (
      `the address-space limit (ulimit -v) leaves ${Math.max(0, Math.floor(left / MB))} MB, too little for a ` +
      `worker thread (${WORKER_ADDRESS_SPACE / MB} MB) and the render (${RENDER_ADDRESS_SPACE / MB} MB)`
    );
  }

  /** From now on, every reference is scored in the calling thread; `why` is said once. */
  #toCallingThread(why: string): void {
    if (!this.#worker) return;
    this.#worker = undefined;
    this.#notices.push(`SSIMULACRA2 scores in the calling thread, on one core: ${why}`);
  }

  /**
   * Starts a worker for `thread` and adds it to the pool; throws what `new Worker` throws.
   *
   * None of the process's Node options go to the worker. Node refuses V8 options (`--jitless`,
   * `--max-old-space-size`) and per-process ones (`--title`) in a worker's `execArgv`
   * (ERR_WORKER_INVALID_EXEC_ARGV), and a worker started from a file fails on `--input-type`,
   * which it inherits by default (ERR_INPUT_TYPE_NOT_ALLOWED). V8 flags are the process's and
   * apply in the worker anyway; the worker runs this package's own compiled modules, which need
   * no per-thread option (`--conditions`, `--import`, `--enable-source-maps`...): it does not load
   * a user's preloads again in each thread. NODE_OPTIONS still reaches it, read as Node reads it.
   */
  #startWorker(thread: Thread, file: URL): Worker {
    const worker = new Worker(file, { execArgv: [], resourceLimits: { codeRangeSizeMb: CODE_RANGE_MB } });
    thread.worker = worker;
    this.#threads.push(thread);
    worker.on('online', () => {
      thread.online = true;
    });
    worker.on('message', (reply: ScoreReply) => {
      const waiting = thread.pending.get(reply.call);
      thread.pending.delete(reply.call);
      if (thread.pending.size === 0) worker.unref();
      if ('error' in reply) waiting?.reject(rebuild(reply.error));
      else waiting?.resolve(reply.score);
    });
    const stop = (reason: string, stopped: string) => {
      if (!thread.stopped && !thread.online && !thread.closed) {
        // It never ran: the next references go to the calling thread, and these are asked again there.
        this.#toCallingThread(`a worker thread could not start (${reason})`);
        thread.stopped = new NotStartedError(`the SSIMULACRA2 thread could not start (${reason})`);
      }
      thread.stopped ??= new Error(`the SSIMULACRA2 thread ${stopped}`);
      const at = this.#threads.indexOf(thread);
      if (at >= 0) this.#threads.splice(at, 1);
      for (const waiting of thread.pending.values()) waiting.reject(thread.stopped);
      thread.pending.clear();
    };
    worker.on('error', (error) => stop(oneLine(error), `failed: ${oneLine(error)}`));
    worker.on('exit', (code) => stop(`exit code ${code}`, `stopped (exit code ${code})`));
    // Idle threads do not keep the process alive; one with a score under way does (see #ask). After the
    // listeners: adding a 'message' listener refs the worker again.
    worker.unref();
    return worker;
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
