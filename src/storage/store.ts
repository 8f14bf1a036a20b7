/**
 * A place that holds media: a local folder or an S3-compatible bucket prefix. `render`,
 * `render --page`, `check --verify-files` and the manifest use only this interface, so each
 * rule (naming, skipping, collisions, removal) lives once and works the same on both.
 *
 * Keys are `/`-separated paths below the store's root (`landscapes/dune.max-300x300.jpg`),
 * never absolute and never climbing out (`..`): `assertKey` refuses any other.
 */
import type { Readable } from 'node:stream';
import { StorageError } from '../errors.js';

/**
 * What changes whenever an object's content does. A file: size, modification and change
 * times, inode. An object: size, ETag and last-modified time.
 */
export type Stamp =
  | { size: number; mtimeMs: number; ctimeMs: number; ino: number }
  | { size: number; etag: string; lastModifiedMs: number };

export interface StoredObject {
  key: string;
  size: number;
  stamp: Stamp;
}

/** HTTP metadata of a written object, as `serve` sends it for /media/ (a folder ignores it). */
export interface WriteOptions {
  contentType?: string;
  cacheControl?: string;
}

/** An object written where no reader sees it yet: `commit` makes it appear whole, `discard` drops it. */
export interface Staged {
  commit(): Promise<void>;
  discard(): Promise<void>;
}

export interface MediaStore {
  /** How messages name the store: the folder as given, or `s3://bucket/prefix/`. */
  readonly location: string;
  /** How messages and reports name one object: a file path below the folder, or its `s3://` URL. */
  describe(key: string): string;
  /** The object's path on this machine when the store is a folder (libvips reads files itself), else null. */
  localPath(key: string): string | null;
  /**
   * Checks the store can be used before any work: a folder exists (or, `create`, is made)
   * and is writable (`write`); a bucket answers with these credentials. Throws
   * `OutputNotWritableError` or `StorageError` (exit 2) naming the store and the reason.
   */
  open(options: { write: boolean; create: boolean }): Promise<void>;
  /** The object under `key`, or null when there is none. */
  stat(key: string): Promise<StoredObject | null>;
  /**
   * Every object below `prefix` (`''` for all, `folder/` for one folder), in key order:
   * recursively, or (`shallow`) only those directly in that folder (one listing in a bucket).
   */
  list(prefix?: string, options?: { shallow?: boolean }): AsyncIterable<StoredObject>;
  /** Up to `length` bytes from the start of the object (fewer when it is shorter); null when there is none. */
  readHead(key: string, length: number): Promise<Buffer | null>;
  /** The object's bytes as a stream, and its stamp when the read began. */
  read(key: string): Promise<{ body: Readable; stamp: Stamp }>;
  /** Writes `data` unseen; it appears under `key` whole on `commit`, or never. */
  stage(key: string, data: Uint8Array, options?: WriteOptions): Promise<Staged>;
  /** Writes `data` under `key`: `stage` then `commit`. */
  put(key: string, data: Uint8Array, options?: WriteOptions): Promise<void>;
  /** Removes the object under `key`; none there is not an error. */
  remove(key: string): Promise<void>;
  /** Removes what killed runs left behind (temporary files); returns how many. */
  sweep(): Promise<number>;
  /** Releases connections. */
  close(): Promise<void>;
}

/** True for a path below a store's root: not empty, not absolute, no empty, `.` or `..` segment, no NUL. */
export function isKey(key: string): boolean {
  // One pass, no array: asked for every file a rerun stats. An empty, `.` or `..` segment is one
  // between slashes (or an end) holding nothing, or one or two dots only.
  return key !== '' && !key.includes('\0') && !NOT_A_SEGMENT.test(key);
}

/** A `/`-separated segment that is empty, `.` or `..`. */
const NOT_A_SEGMENT = /(?:^|\/)\.{0,2}(?:\/|$)/;

/** `key`, or a `StorageError` when it is not a path below the store (`isKey`). */
export function assertKey(store: string, key: string): string {
  if (!isKey(key)) throw new StorageError(`${store}: '${key}' is not a path below it`, 'invalid-key');
  return key;
}

/** True when two stamps say the same content (and both are known). */
export function sameStamp(a: Stamp | undefined, b: Stamp | undefined): boolean {
  if (a === undefined || b === undefined) return false;
  const keys = Object.keys(a);
  const other = b as Record<string, unknown>;
  return (
    keys.length === Object.keys(b).length &&
    keys.every((key) => Object.hasOwn(other, key) && (a as Record<string, unknown>)[key] === other[key])
  );
}
