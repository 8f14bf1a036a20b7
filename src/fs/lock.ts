/**
 * A lock file for short critical sections (updating the manifest). It holds the owner's pid
 * and host; a lock whose owner on this host is gone (killed with `kill -9`) is stale and
 * taken over at once, so a rerun after a crash never waits.
 */
import { hostname } from 'node:os';
import { open, readFile, rm, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { isProcessAlive } from './atomic.js';

export interface LockOptions {
  /** Give up after this long waiting for a live owner. */
  timeoutMs?: number;
}

/** Runs `fn` while holding the lock file `lockPath`. */
export async function withLock<T>(lockPath: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  const owner = `${process.pid}\n${hostname()}\n`;
  for (let delay = 5; ; delay = Math.min(delay * 2, 100)) {
    let created = false;
    try {
      const handle = await open(lockPath, 'wx');
      created = true;
      try {
        await handle.writeFile(owner);
      } finally {
        await handle.close();
      }
      break;
    } catch (error) {
      // A lock made but not written (a full disk) would look owned by a live process: remove it.
      if (created) await rm(lockPath, { force: true });
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || created) throw error;
    }
    if (await isStale(lockPath)) {
      await rm(lockPath, { force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`${lockPath}: still locked by another process after ${options.timeoutMs ?? 30_000} ms`);
    await sleep(delay);
  }
  try {
    return await fn();
  } finally {
    await rm(lockPath, { force: true });
  }
}

async function isStale(lockPath: string): Promise<boolean> {
  let text: string;
  try {
    text = await readFile(lockPath, 'utf8');
  } catch {
    return false; // released meanwhile: just try again
  }
  const [pid, host] = text.split('\n');
  // An owner that has not written its pid yet is alive, unless it died right there.
  if (!pid) return Date.now() - (await stat(lockPath).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs > 5_000;
  return host === hostname() && !isProcessAlive(Number(pid));
}
