/**
 * An original that is not a file here (an object in a bucket) is copied to a temporary file
 * while it is hashed, so libvips reads a file, as it does a local original: memory follows
 * the pixels, never the file's bytes. Copies go to the system's temporary folder (`TMPDIR`:
 * choose a disk there, not a RAM-backed tmpfs, for scans of gigabytes) and carry the
 * writer's pid; a later run removes those of a process that is gone.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { isProcessAlive } from '../fs/atomic.js';
import { type MediaStore, type Stamp, sameStamp } from './store.js';

const SPOOL_PATTERN = /^content-api-spool-(\d+)-[0-9a-f]{8}$/;

export interface Spooled {
  /** The temporary copy. */
  file: string;
  sha256: string;
  /** Removes the copy. */
  release(): Promise<void>;
}

/**
 * Copies `key` to a temporary file, hashing it on the way. Throws `ChangedError` when the
 * object is no longer the one `expected` describes (rewritten since it was listed).
 */
export async function spool(store: MediaStore, key: string, expected?: Stamp): Promise<Spooled> {
  const dir = path.join(tmpdir(), `content-api-spool-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(dir, { recursive: true, mode: 0o700 }); // a copy of someone's original: theirs alone
  const release = () => rm(dir, { recursive: true, force: true });
  try {
    const { body, stamp } = await store.read(key);
    if (expected && !sameContent(stamp, expected)) {
      body.destroy();
      throw new ChangedError();
    }
    const hash = createHash('sha256');
    const file = path.join(dir, 'original'); // never the object's name, which may be too long here
    const hashing = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        done(null, chunk);
      },
    });
    await pipeline(body, hashing, createWriteStream(file, { flags: 'wx', mode: 0o600 }));
    return { file, sha256: hash.digest('hex'), release };
  } catch (error) {
    await release();
    throw error;
  }
}

/** The object changed between the listing and the read. */
export class ChangedError extends Error {
  override name = 'ChangedError';
}

/**
 * The same content: size and ETag. (Not the last-modified time: a listing gives it to the
 * millisecond on some services, a GET's header to the second.)
 */
function sameContent(a: Stamp, b: Stamp): boolean {
  return 'etag' in a && 'etag' in b ? a.size === b.size && a.etag === b.etag : sameStamp(a, b);
}

/**
 * Removes the copies of processes that are gone (killed mid-run); returns how many. One that
 * cannot be removed (another user's, in a shared temporary folder) is left alone.
 */
export async function sweepSpools(): Promise<number> {
  const names = await readdir(tmpdir()).catch(() => [] as string[]);
  let removed = 0;
  for (const name of names) {
    const match = SPOOL_PATTERN.exec(name);
    if (!match || isProcessAlive(Number(match[1]))) continue;
    if (
      await rm(path.join(tmpdir(), name), { recursive: true, force: true }).then(
        () => true,
        () => false,
      )
    )
      removed++;
  }
  return removed;
}
