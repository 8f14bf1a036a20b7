/**
 * `mkdir -p`, one level at a time from the nearest folder that exists. Node's own recursive
 * mkdir retries forever where a folder cannot be made in an existing one, as in /proc.
 */
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';

/** Makes `dir` and the folders above it that are missing; throws what the first that cannot be made says. */
export async function makeFolder(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    const info = await stat(current).catch((error: NodeJS.ErrnoException) => error);
    if (!(info instanceof Error)) {
      if (!info.isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a folder, ${current}`), { code: 'ENOTDIR' });
      break;
    }
    if (info.code !== 'ENOENT' || path.dirname(current) === current) throw info;
    missing.push(current);
  }
  for (const folder of missing.reverse()) {
    await mkdir(folder).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
  }
}
