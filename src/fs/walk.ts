/**
 * The files below a folder, for every command that takes folders (render's originals,
 * check's and inspect's pages, claims). Symlinks to folders are followed, but each real
 * folder is walked once: a link back up the tree (`a/up -> ..`) or two links to one place
 * end there, so a walk is bounded by the tree's real size. Depth first, in the order of the
 * full paths (the same on every machine, so a folder reached twice is always listed under
 * the same name), one folder listing in memory at a time.
 */
import type { Dirent } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';

export interface WalkOptions {
  /** Leave out entries (a whole folder, when `isFolder`) this rejects. */
  include?: (name: string, isFolder: boolean) => boolean;
  /** A folder that cannot be listed (the root included): throw to stop, or return to go on without it. */
  onUnreadable?: (folder: string, error: NodeJS.ErrnoException) => void;
  /** False: symlinks are not followed at all (a sweep that removes files never leaves the tree). */
  followLinks?: boolean;
  /** Stops the walk (it yields nothing more) once aborted. */
  signal?: AbortSignal | undefined;
}

/** Yields the path of each folder below `root` (not `root` itself), relative to it, as `walkFiles` orders them. */
export async function* walkFolders(root: string, options: WalkOptions = {}): AsyncGenerator<string> {
  yield* walk(root, '', new Set(), { ...options, folders: true });
}

/** Yields the path of each regular file below `root`, relative to it (with the platform's separator). */
export async function* walkFiles(root: string, options: WalkOptions = {}): AsyncGenerator<string> {
  yield* walk(root, '', new Set(), options);
}

async function* walk(
  root: string,
  relative: string,
  seen: Set<string>,
  options: WalkOptions & { folders?: boolean },
): AsyncGenerator<string> {
  if (options.signal?.aborted) return;
  const folder = path.join(root, relative);
  const real = await realpath(folder).catch(() => null);
  if (real === null || seen.has(real)) return;
  seen.add(real);
  let entries: Dirent[];
  try {
    entries = await readdir(folder, { withFileTypes: true });
  } catch (error) {
    options.onUnreadable?.(folder, error as NodeJS.ErrnoException);
    return;
  }
  const items: Array<{ key: string; child: string; isFolder: boolean }> = [];
  for (const entry of entries) {
    // Joined, not `path.join`ed: an entry's name has no separator, and a string built by normalizing
    // holds on to its parts, several times its length for every original a walk of an archive lists.
    const child = relative === '' ? entry.name : relative + path.sep + entry.name;
    let isFolder = entry.isDirectory();
    let isFile = entry.isFile();
    if (entry.isSymbolicLink()) {
      if (options.followLinks === false) continue;
      const target = await stat(path.join(root, child)).catch(() => null); // a dangling link is skipped
      isFolder = Boolean(target?.isDirectory());
      isFile = Boolean(target?.isFile());
    }
    if (!(isFolder || isFile) || (options.include && !options.include(entry.name, isFolder))) continue;
    // A folder sorts as `name/`, so the order is that of the full paths.
    items.push({ key: isFolder ? `${entry.name}/` : entry.name, child, isFolder });
  }
  items.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  for (const item of items) {
    if (options.signal?.aborted) return;
    if (item.isFolder) {
      if (options.folders) yield item.child;
      yield* walk(root, item.child, seen, options);
    } else if (!options.folders) yield item.child;
  }
}
