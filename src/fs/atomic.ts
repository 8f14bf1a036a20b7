/**
 * Files appear whole or not at all: everything is written to a temporary name beside its
 * target, then renamed over it. Temporary names carry the writer's host and pid, so a later
 * run can tell the leftovers of a killed process (`kill -9`) from a live writer's and sweep
 * them, and never touches those of a process on another machine sharing the folder. A file
 * the user names as an output may be something else than a file (`/dev/stdout`, a FIFO, a
 * link): `planOutput` says how it is written, if at all, and nothing renames over it.
 */

import { createHash, randomBytes } from 'node:crypto';
import { constants, fstatSync, type Stats } from 'node:fs';
import { type FileHandle, lstat, open, opendir, rename, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { kindOf } from './kind.js';
import { walkFiles } from './walk.js';

/** `.<name>.tmp-<host>-<pid>-<random>`; names from before hosts were in them have no `<host>-`. */
const TEMP_PATTERN = /^\..+\.tmp-(?:([0-9a-f]{8})-)?(\d+)-[0-9a-f]{8}$/;
const HOST = createHash('sha256').update(hostname()).digest('hex').slice(0, 8);

/** A temporary name for `target`, in the same folder so the final rename is atomic. */
export function tempPathFor(target: string): string {
  const name = `.${path.basename(target)}.tmp-${HOST}-${process.pid}-${randomBytes(4).toString('hex')}`;
  return path.join(path.dirname(target), name);
}

/**
 * How a file the user names as an output is written (`render --report`, `--write-page`, `check
 * --output`, `--update-baseline`): one rule for all of them.
 *
 * - `replace`: nothing there yet, or a regular file that is not a link: written beside it and
 *   renamed over it, whole or not at all.
 * - `standard`: this process's standard output or error (fd 1 or 2), whatever it is, reached
 *   through a link or a device (`/dev/stdout`, `/proc/self/fd/1`, a link to either): the caller
 *   writes to its stream, after what it printed there already. Opening the path again would
 *   start a redirected file over from its first byte, and a socket cannot be opened.
 * - `through`: a FIFO or a character device, or a link to one (`/dev/null`, a terminal, a
 *   shell's `>(...)`): opened in place and written to; never created, truncated or replaced.
 * - `refuse`, with the reason: a link to any other regular file, since renaming over it would
 *   replace the link, writing the file it points to would follow wherever a link planted
 *   beside the outputs points, and a file written in place is not whole until the end (the user
 *   gives the file's own path instead); a link to nothing (writing would create the file it
 *   names); a folder, a socket or a block device.
 */
export type OutputPlan =
  | { how: 'replace' }
  | { how: 'standard'; fd: 1 | 2 }
  | { how: 'through' }
  | { how: 'refuse'; reason: string };

/** A target that is never written to: `message` says why (`it is a symlink to nothing`). */
class RefusedOutputError extends Error {
  override name = 'RefusedOutputError';
}

/** The standard stream (1 or 2) that is the very file `info` describes, if any. */
function standardStreamOf(info: Stats): 1 | 2 | undefined {
  return ([1, 2] as const).find((fd) => {
    try {
      const stream = fstatSync(fd);
      return stream.dev === info.dev && stream.ino === info.ino;
    } catch {
      return false; // closed
    }
  });
}

/** How `target` is to be written (see `OutputPlan`); looked at, never opened. */
export async function planOutput(target: string): Promise<OutputPlan> {
  // Anything lstat cannot see (no such file, a missing folder) is made anew, and fails then if it cannot be.
  const own = await lstat(target).catch(() => null);
  if (own === null || own.isFile()) return { how: 'replace' };
  const info = await stat(target).catch((error: NodeJS.ErrnoException) => error);
  if (info instanceof Error) {
    const reason = info.code === 'ENOENT' ? 'nothing' : `what cannot be reached (${info.code ?? info.message})`;
    return { how: 'refuse', reason: `it is a symlink to ${reason}` };
  }
  const fd = standardStreamOf(info);
  if (fd !== undefined) return { how: 'standard', fd };
  if (info.isFIFO() || info.isCharacterDevice()) return { how: 'through' };
  if (info.isFile()) return { how: 'refuse', reason: 'it is a symlink to a file: give the file its own path' };
  const kind = info.isBlockDevice() ? 'a block device' : kindOf(info);
  return { how: 'refuse', reason: `it is ${own.isSymbolicLink() ? `a symlink to ${kind}` : kind}` };
}

/** An output being written: whole (renamed into place by `close`) or written through. */
export interface OutputWriter {
  write(data: string | Uint8Array): Promise<void>;
  /** Finishes the output: renames the temporary file into place, or closes what was opened. */
  close(): Promise<void>;
  /** Drops an output that will not be finished: its temporary file is removed (bytes written through are out). */
  abort(): Promise<void>;
}

async function writeAll(handle: FileHandle, data: string | Uint8Array): Promise<void> {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  for (let done = 0; done < bytes.length; )
    done += (await handle.write(bytes, done, bytes.length - done, null)).bytesWritten;
}

/**
 * Opens `target` for writing as `plan` (by default, `planOutput`'s) says. A FIFO waits for its
 * reader here: `onWait` is called once when none has come after WAIT_NOTICE_MS, for the caller to
 * say so. Throws `RefusedOutputError` for a target that is refused, and for a standard stream,
 * which is its caller's to write to (the CLI owns the process's streams). A target that changes
 * while it is written (a link put in its place) is refused when the output is finished: the
 * temporary file is removed, nothing is renamed over it.
 */
export async function openOutput(target: string, plan?: OutputPlan, onWait?: () => void): Promise<OutputWriter> {
  const how = plan ?? (await planOutput(target));
  if (how.how === 'refuse') throw new RefusedOutputError(how.reason);
  if (how.how === 'standard')
    throw new RefusedOutputError(`it is this process's standard ${how.fd === 1 ? 'output' : 'error'}`);
  if (how.how === 'through') return openThrough(target, onWait);
  const temp = tempPathFor(target);
  const handle = await open(temp, 'wx');
  let unclosed = true;
  const drop = async () => {
    if (unclosed) await handle.close().catch(() => {});
    unclosed = false;
    await rm(temp, { force: true });
  };
  return {
    write: (data) => writeAll(handle, data),
    async close() {
      try {
        await handle.close();
        unclosed = false;
        const now = await planOutput(target);
        if (now.how !== 'replace')
          throw new RefusedOutputError(now.how === 'refuse' ? now.reason : 'it was replaced by a link or a device');
        await rename(temp, target);
      } catch (error) {
        await drop();
        throw error;
      }
    },
    abort: drop,
  };
}

/** How long opening a FIFO may wait for its reader before `onWait` is called. */
const WAIT_NOTICE_MS = 1000;

/** A FIFO or a device, opened where it is: neither created nor truncated, and still one once open. */
async function openThrough(target: string, onWait?: () => void): Promise<OutputWriter> {
  // Opening a FIFO for writing blocks (in libuv's pool) until a reader opens it; a device opens at once.
  const timer = onWait && setTimeout(onWait, WAIT_NOTICE_MS);
  const handle = await open(target, constants.O_WRONLY | constants.O_NOCTTY).finally(() => clearTimeout(timer));
  const info = await handle.stat().catch(() => null);
  if (!info?.isFIFO() && !info?.isCharacterDevice()) {
    await handle.close();
    throw new RefusedOutputError('it is no longer a FIFO or a device');
  }
  let closed = false;
  const close = async () => {
    if (!closed) await handle.close();
    closed = true;
  };
  return { write: (data) => writeAll(handle, data), close, abort: () => close().catch(() => {}) };
}

/** True when a process with this pid is alive on this machine. */
export function isProcessAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True when `name` is a temporary file whose writer is gone: ours (this host), its process dead. */
function isStale(name: string): boolean {
  const match = TEMP_PATTERN.exec(name);
  return match !== null && (match[1] === undefined || match[1] === HOST) && !isProcessAlive(Number(match[2]));
}

export interface SweepOptions {
  /** Stops the sweep (what is removed so far is returned) once aborted. */
  signal?: AbortSignal | undefined;
}

/**
 * Removes temporary files under `folder`, at any depth, whose writer is gone (a run that was
 * killed). Walked as every walk is (walk.ts: each real folder once, one listing in memory at
 * a time), and never through a symlink: nothing outside the tree is listed or removed.
 * Returns the paths removed.
 */
export async function sweepStaleTemps(folder: string, options: SweepOptions = {}): Promise<string[]> {
  const removed: string[] = [];
  const files = walkFiles(folder, { followLinks: false, signal: options.signal, onUnreadable: () => {} });
  for await (const name of files) {
    if (!isStale(path.basename(name))) continue;
    const file = path.join(folder, name);
    await rm(file, { force: true });
    removed.push(file);
  }
  return removed;
}

/**
 * Removes the stale temporary files directly in each of `folders` (not below them): the
 * folders a run writes into, and nothing else, however large or deep the tree around them
 * (an output folder that is `/` or `/proc`). Each folder is read as a stream, one entry at a
 * time; one that is not there is skipped. Returns the paths removed.
 */
export async function sweepStaleTempsIn(folders: Iterable<string>, options: SweepOptions = {}): Promise<string[]> {
  const removed: string[] = [];
  for (const folder of new Set(folders)) {
    if (options.signal?.aborted) break;
    // Entries by the thousand: the default, 32, costs a thread-pool round trip every 32 files of an archive.
    const dir = await opendir(folder, { bufferSize: 1024 }).catch(() => null);
    if (!dir) continue;
    try {
      for await (const entry of dir) {
        if (options.signal?.aborted) break;
        if (!entry.isFile() || !isStale(entry.name)) continue;
        const file = path.join(folder, entry.name);
        await rm(file, { force: true });
        removed.push(file);
      }
    } catch {
      // A folder that cannot be read to the end: what was removed so far stays removed.
    }
  }
  return removed;
}
