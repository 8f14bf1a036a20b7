/**
 * An original's bytes as the pipeline takes them: a file path libvips reads itself (a local
 * file, or a temporary copy of an object in a bucket), or bytes in memory (a rendition
 * downloaded by `render --page`). Each is hashed as it streams by, never held whole, so
 * memory follows the pixels decoded, not the size of the file.
 */
import { createHash } from 'node:crypto';
import { createReadStream, type Stats, statSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { SourceError } from '../errors.js';
import { fileStamp } from '../storage/local.js';
import { ChangedError, spool } from '../storage/spool.js';
import type { Stamp } from '../storage/store.js';
import type { Original } from './discover.js';

export interface SourceBytes {
  /** What sharp reads: a file path, or the bytes. */
  input: string | Buffer;
  sha256: string;
  /** Removes a temporary copy, if one was made. */
  release(): Promise<void>;
}

const nothing = async () => {};

/** The original's bytes and their SHA-256; an object in a bucket must still be as `stamp` says. */
export async function readAndHash(original: Original, stamp: Stamp | undefined): Promise<SourceBytes> {
  if (original.data)
    return { input: original.data, sha256: createHash('sha256').update(original.data).digest('hex'), release: nothing };
  if (original.object) {
    try {
      const copy = await spool(original.object.store, original.object.key, stamp);
      return { input: copy.file, sha256: copy.sha256, release: copy.release };
    } catch (error) {
      if (error instanceof ChangedError) throw changed(original, 'the object changed since it was listed; run again');
      const reason = error instanceof Error ? error.message.replace(`${original.source}: `, '') : String(error);
      throw new SourceError('CONTENT_API_UNREADABLE', original.source, `cannot read (${reason})`, { cause: error });
    }
  }
  const hash = createHash('sha256');
  try {
    await pipeline(createReadStream(original.source), hash);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new SourceError(
      'CONTENT_API_UNREADABLE',
      original.source,
      `cannot read (${code ?? (error as Error).message})`,
      { cause: error },
    );
  }
  return { input: original.source, sha256: hash.digest('hex'), release: nothing };
}

export function changed(original: Original, reason = 'the file changed during the run; run again'): SourceError {
  return new SourceError('CONTENT_API_RENDER_FAILED', original.source, reason);
}

export interface Stamped {
  stamp: Stamp | undefined;
  settled: Stamp | undefined;
}

/** A file written this recently may be written again within the same timestamp tick (1-2 s on some file systems). */
const RACY_MS = 2_000;

/**
 * The original's stamp, taken before it is read so a later change shows: a file's from
 * `stat`, an object's from the bucket listing. `settled` is the stamp when it may be
 * recorded: a file changed within `RACY_MS` of the stat could change again without its
 * times moving (git's "racily clean" entries), so its stamp is not kept and the next run
 * hashes it again. Bytes in memory have none.
 */
export async function stampOf(original: Original): Promise<Stamped> {
  if (original.data) return { stamp: undefined, settled: undefined };
  if (original.object) return { stamp: original.object.stamp, settled: original.object.stamp };
  const takenAt = Date.now();
  // Synchronous: a stat takes microseconds, where the thread pool's round trip takes tens, for every
  // original of a rerun.
  const info = statOrNull(original.source);
  const stamp = info ? fileStamp(info) : undefined;
  const newest = info ? Math.max(info.mtimeMs, info.ctimeMs) : Infinity;
  return { stamp, settled: newest < takenAt - RACY_MS ? stamp : undefined };
}

function statOrNull(file: string): Stats | null {
  try {
    return statSync(file, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}
