/**
 * Lists the files below a folder, recursing into folders and into symlinks to folders, but
 * into each real folder once: a symlink that loops (`a/up -> ..`) or a folder reached twice
 * is walked once, where it is first found, so a walk is bounded by the tree's real size.
 */
import { readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';

export interface WalkOptions {
  /** Leave out entries (and whole folders) whose name this rejects. */
  include?: (name: string) => boolean;
}

/** Relative paths (with the platform's separator) of the regular files below `root`, sorted. */
export async function walkFiles(root: string, options: WalkOptions = {}): Promise<string[]> {
  const files: string[] = [];
  const seen = new Set<string>();
  const pending: string[] = [''];
  while (pending.length > 0) {
    const relative = pending.pop()!;
    const dir = path.join(root, relative);
    const real = await realpath(dir).catch(() => null);
    if (real === null || seen.has(real)) continue;
    seen.add(real);
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
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
      if (isDir) pending.push(child);
      else if (isFile) files.push(child);
    }
  }
  return files.sort();
}
