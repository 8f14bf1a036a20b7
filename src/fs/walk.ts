/**
 * Lists the files below a folder, recursing into folders and into symlinks to folders, but
 * into each real folder once: a symlink that loops (`a/up -> ..`) or a folder reached twice
 * is walked once, so a walk is bounded by the tree's real size. Breadth first, each folder's
 * entries in name order: a folder reached by two paths is always listed under the shorter
 * (then the first in name order), the same on every machine.
 */
import { readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';

export interface WalkOptions {
  /** Leave out entries (and whole folders) whose name this rejects. */
  include?: (name: string) => boolean;
}

export interface Walk {
  /** Relative paths (with the platform's separator) of the regular files below the root, sorted. */
  files: string[];
  /** Folders below the root that could not be read, with the reason (the root itself: none if missing). */
  unreadable: Array<{ folder: string; reason: string }>;
}

export async function walkFiles(root: string, options: WalkOptions = {}): Promise<Walk> {
  const walk: Walk = { files: [], unreadable: [] };
  const seen = new Set<string>();
  const queue: string[] = [''];
  for (let next = 0; next < queue.length; next++) {
    const relative = queue[next]!;
    const dir = path.join(root, relative);
    const real = await realpath(dir).catch(() => null);
    if (real === null || seen.has(real)) continue;
    seen.add(real);
    let entries;
    try {
      entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) =>
        a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
      );
    } catch (error) {
      if (relative !== '')
        walk.unreadable.push({ folder: dir, reason: (error as NodeJS.ErrnoException).code ?? String(error) });
      continue;
    }
    for (const entry of entries) {
      if (options.include && !options.include(entry.name)) continue;
      const child = path.join(relative, entry.name);
      let isDir = entry.isDirectory();
      let isFile = entry.isFile();
      if (entry.isSymbolicLink()) {
        const target = await stat(path.join(root, child)).catch(() => null);
        isDir = target?.isDirectory() ?? false;
        isFile = target?.isFile() ?? false;
      }
      if (isDir) queue.push(child);
      else if (isFile) walk.files.push(child);
    }
  }
  walk.files.sort();
  return walk;
}
