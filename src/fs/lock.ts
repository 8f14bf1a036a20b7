/**
 * A lock file for short critical sections (updating the manifest, taking over a dead run's
 * claim). It holds the owner's pid and host (owned-file.ts); a lock whose owner on this host
 * is gone (killed with `kill -9`) is stale and taken over at once, so a rerun after a crash
 * never waits.
 */
import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { createOwned, isDead, readOwned, self } from './owned-file.js';

export interface LockOptions {
  /** Give up after this long waiting for a live owner. */
  timeoutMs?: number;
}

/** Runs `fn` while holding the lock file `lockPath`. */
export async function withLock<T>(lockPath: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (let delay = 5; !(await createOwned(lockPath, self())); delay = Math.min(delay * 2, 100)) {
    const owner = await readOwned(lockPath);
    if (owner !== 'gone' && owner !== 'being written' && isDead(owner)) {
      await rm(lockPath, { force: true });
      continue;
    }
    if (Date.now() > deadline)
      throw new Error(`${lockPath}: still locked by another process after ${options.timeoutMs ?? 30_000} ms`);
    await sleep(delay);
  }
  try {
    return await fn();
  } finally {
    await rm(lockPath, { force: true });
  }
}
