/**
 * A local folder as a media store. Files appear whole: each is written to a temporary name
 * beside its target and renamed over it; no folder or file may resolve outside the root
 * (a symlink out is refused).
 */
import { createReadStream, type Stats, statSync } from 'node:fs';
import { access, constants, open, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { OutputNotWritableError } from '../errors.js';
import { sweepStaleTemps, tempPathFor } from '../fs/atomic.js';
import { makeFolder } from '../fs/make-folder.js';
import { isInside } from '../fs/paths.js';
import { walkFiles } from '../fs/walk.js';
import { assertKey, type MediaStore, type Staged, type Stamp, type StoredObject } from './store.js';

export class LocalStore implements MediaStore {
  readonly location: string;
  /** The folder, absolute; its real path once opened for writing. */
  #root: string;
  /** Folders already created and checked to be inside the root. */
  readonly #dirs = new Map<string, Promise<void>>();

  constructor(folder: string) {
    this.location = folder;
    this.#root = path.resolve(folder);
  }

  describe(key: string): string {
    return path.join(this.location, key);
  }

  localPath(key: string): string {
    // A key is checked to hold no empty, `.` or `..` segment, so joining is appending.
    const root = this.#root.endsWith(path.sep) ? this.#root : this.#root + path.sep;
    return root + assertKey(this.location, key);
  }

  async open({ write, create }: { write: boolean; create: boolean }): Promise<void> {
    if (!write) {
      // A dry run writes nothing: the folder may be missing, but nothing else may be in the way.
      const info = await stat(this.#root).catch((error: NodeJS.ErrnoException) => error);
      const inTheWay = info instanceof Error ? info.code === 'ENOTDIR' : !info.isDirectory();
      if (inTheWay) throw new OutputNotWritableError(this.#root, 'a file is in the way, not a folder');
      if (info instanceof Error && info.code !== 'ENOENT') {
        throw new OutputNotWritableError(this.#root, info.code ?? info.message, { cause: info });
      }
      return;
    }
    try {
      if (create) await makeFolder(this.#root);
      await access(this.#root, constants.W_OK);
      this.#root = await realpath(this.#root);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const reason =
        code === 'EEXIST' || code === 'ENOTDIR'
          ? 'a file is in the way, not a folder'
          : code === 'ENOENT' && !create
            ? 'no such folder'
            : (code ?? (error as Error).message);
      throw new OutputNotWritableError(this.#root, reason, { cause: error });
    }
  }

  async stat(key: string): Promise<StoredObject | null> {
    // Synchronous: microseconds, where the thread pool's round trip costs tens for each of the
    // renditions a rerun checks.
    const file = this.localPath(key); // a key that is not one throws
    let info: Stats | undefined;
    try {
      info = statSync(file, { throwIfNoEntry: false });
    } catch {
      return null;
    }
    return info?.isFile() ? { key, size: info.size, stamp: fileStamp(info) } : null;
  }

  async *list(prefix = '', { shallow = false } = {}): AsyncIterable<StoredObject> {
    // Only the prefix's folder is walked, not the whole store.
    const folder = prefix.slice(0, prefix.lastIndexOf('/') + 1);
    const walk = walkFiles(path.join(this.#root, folder), {
      include: (_, isFolder) => !(shallow && isFolder),
      onUnreadable: () => {},
    });
    for await (const file of walk) {
      const name = folder + file.split(path.sep).join('/');
      if (!name.startsWith(prefix) || (shallow && name.slice(prefix.length).includes('/'))) continue;
      const found = await this.stat(name);
      if (found) yield found;
    }
  }

  async readHead(key: string, length: number): Promise<Buffer | null> {
    const handle = await open(this.localPath(key), 'r').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null;
      throw error;
    });
    if (!handle) return null;
    try {
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, 0);
      return buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  }

  async read(key: string): Promise<{ body: Readable; stamp: Stamp }> {
    const file = this.localPath(key);
    const info = await stat(file);
    return { body: createReadStream(file), stamp: fileStamp(info) };
  }

  async stage(key: string, data: Uint8Array): Promise<Staged> {
    const target = this.localPath(key);
    await this.#ensureDir(path.dirname(target));
    const temp = tempPathFor(target);
    try {
      await writeFile(temp, data, { flag: 'wx' });
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    return { commit: () => rename(temp, target), discard: () => rm(temp, { force: true }) };
  }

  async put(key: string, data: Uint8Array): Promise<void> {
    const staged = await this.stage(key, data);
    await staged.commit().catch(async (error: unknown) => {
      await staged.discard();
      throw error;
    });
  }

  async remove(key: string): Promise<void> {
    const file = this.localPath(key);
    // Its folder, as resolved (a symlinked folder may lead elsewhere), must be inside the root.
    const folder = await realpath(path.dirname(file)).catch(() => null);
    if (folder !== null && isInside(folder, await realpath(this.#root))) await rm(file, { force: true });
  }

  async sweep(): Promise<number> {
    return (await sweepStaleTemps(this.#root)).length;
  }

  async close(): Promise<void> {}

  /** Creates a folder once, refusing one that resolves outside the root (a symlink out). */
  #ensureDir(dir: string): Promise<void> {
    let ready = this.#dirs.get(dir);
    if (!ready) {
      ready = (async () => {
        await makeFolder(dir);
        if (!isInside(await realpath(dir), this.#root)) throw new Error(`${dir} resolves outside the output folder`);
      })();
      this.#dirs.set(dir, ready);
    }
    return ready;
  }
}

/** A file's stamp: size, modification and change times, inode. */
export function fileStamp(info: { size: number; mtimeMs: number; ctimeMs: number; ino: number }): Stamp {
  return { size: info.size, mtimeMs: info.mtimeMs, ctimeMs: info.ctimeMs, ino: info.ino };
}
