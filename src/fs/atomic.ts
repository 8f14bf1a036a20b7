/**
 * Files appear whole or not at all: everything is written to a temporary name beside its
 * target, then renamed over it. Temporary names carry the writer's host and pid, so a later
 * run can tell the leftovers of a killed process (`kill -9`) from a live writer's and sweep
 * them, and never touches those of a process on another machine sharing the folder.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdir, rename, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';

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

/**
 * Removes temporary files under `folder` whose writer is gone (a run that was killed).
 * Returns the paths removed.
 */
export async function sweepStaleTemps(folder: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(folder, { recursive: true });
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const match = TEMP_PATTERN.exec(path.basename(name));
    if (!match || (match[1] !== undefined && match[1] !== HOST) || isProcessAlive(Number(match[2]))) continue;
    const file = path.join(folder, name);
    await rm(file, { force: true });
    removed.push(file);
  }
  return removed;
}
