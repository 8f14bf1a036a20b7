/**
 * Files appear whole or not at all: everything is written to a temporary name beside its
 * target, then renamed over it. Temporary names carry the writer's host and pid, so a later
 * run can tell the leftovers of a killed process (`kill -9`) from a live writer's and sweep
 * them, and never touches those of a process on another machine sharing the folder.
 */
import { createHash, randomBytes } from 'node:crypto';
import { opendir, rename, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { walkFiles } from './walk.js';

/** `.<name>.tmp-<host>-<pid>-<random>`; names from before hosts were in them have no `<host>-`. */
const TEMP_PATTERN = /^\..+\.tmp-(?:([0-9a-f]{8})-)?(\d+)-[0-9a-f]{8}$/;
const HOST = createHash('sha256').update(hostname()).digest('hex').slice(0, 8);

/** A temporary name for `target`, in the same folder so the final rename is atomic. */
export function tempPathFor(target: string): string {
  const name = `.${path.basename(target)}.tmp-${HOST}-${process.pid}-${randomBytes(4).toString('hex')}`;
  return path.join(path.dirname(target), name);
}

/** Writes `data` to `target` atomically; on failure nothing is left behind. */
export async function writeFileAtomic(target: string, data: string | Uint8Array): Promise<void> {
  const temp = tempPathFor(target);
  try {
    await writeFile(temp, data, { flag: 'wx' });
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
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
