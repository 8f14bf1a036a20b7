/**
 * Files that say which process holds something (the manifest's lock, an image's claim): made
 * exclusively, holding the owner's pid and host, so a later process can tell a live owner
 * from one that was killed on this host, and take over from it.
 */

import { open, readFile, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { isProcessAlive } from './atomic.js';

export interface Owner {
  pid: number;
  host: string;
}

/** This process, as an owner. */
export const self = (): Owner => ({ pid: process.pid, host: hostname() });

/**
 * Creates `file` holding `content` (JSON), only if there is none: true when made, false when
 * another is there. A file made but not written (a full disk) is removed before the error is
 * thrown, so nobody mistakes it for a live owner's.
 */
export async function createOwned(file: string, content: Owner & object): Promise<boolean> {
  let created = false;
  try {
    const handle = await open(file, 'wx');
    created = true;
    try {
      await handle.writeFile(JSON.stringify(content));
    } finally {
      await handle.close();
    }
    return true;
  } catch (error) {
    if (created) await rm(file, { force: true });
    if ((error as NodeJS.ErrnoException).code === 'EEXIST' && !created) return false;
    throw error;
  }
}

/**
 * What `file` holds: its owner's content; `gone` when there is no file; `being written` for
 * an empty file younger than 5 s (its owner is between creating and writing it).
 */
export async function readOwned<T extends Owner>(file: string): Promise<T | 'gone' | 'being written'> {
  const text = await readFile(file, 'utf8').catch(() => null);
  if (text === null) return 'gone';
  try {
    const owner = JSON.parse(text) as T;
    if (typeof owner.pid === 'number' && typeof owner.host === 'string') return owner;
  } catch {
    // empty or cut short: see below
  }
  const age = Date.now() - ((await stat(file).catch(() => null))?.mtimeMs ?? 0);
  return age < 5_000 ? 'being written' : ({ pid: 0, host: hostname() } as T); // never written: its owner died
}

/** True when `owner` is a process on this host that is no longer running. */
export function isDead(owner: Owner): boolean {
  return owner.host === hostname() && (owner.pid === 0 || !isProcessAlive(owner.pid));
}
