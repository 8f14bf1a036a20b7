/**
 * Reads media files, on disk or over HTTP, for `check --verify-files`: the header of each
 * (its real pixel size and format, growing the read only when the header is longer, as for a
 * JPEG with a large EXIF block), or the whole file for the HTML report's thumbnails.
 *
 * Each kind of place is one small function that reads the first N bytes of one file
 * (`READERS`); everything else here works for every kind, so a third one (a bucket) slots in
 * beside them.
 */
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { imageSize } from 'image-size';
import type { Dispatcher } from 'undici';
import { createDispatcher, fetchPrefix, type HttpOptions, type HttpResponse } from '../client/http.js';
import { ContentApiError, InvalidArgumentError, oneLine, STORE_WIDE, StorageError } from '../errors.js';
import { isInside } from '../fs/paths.js';
import { openRegularFile } from '../fs/read-within.js';
import { walkFiles } from '../fs/walk.js';
import { undici } from '../packages/undici.js';
import { mediaPath } from '../renditions/rules.js';
import { LocalStore } from '../storage/local.js';
import { openStore } from '../storage/location.js';
import { isS3Url, type S3Options } from '../storage/s3-url.js';
import { isKey, type MediaStore } from '../storage/store.js';

/** Header reads, smallest first: almost every rendition's header fits the first one. */
const READ_SIZES = [4 * 1024, 64 * 1024, 1024 * 1024];

export type FileFormat = 'jpeg' | 'png' | 'webp' | 'gif' | 'avif' | 'other';

export type ProbeResult =
  | { ok: true; location: string; width: number; height: number; format: FileFormat; bytesRead: number }
  | { ok: false; location: string; reason: 'missing' | 'unreadable' | 'outside'; message: string; bytesRead: number };

/**
 * Where media files are: a store, a local folder or a bucket (the URL path below
 * `mediaPrefix` is looked up in it), or a base URL the URL path is fetched from; open until
 * `close()`d, like every handle of the library.
 */
export type FileSource = (
  | { kind: 'store'; store: MediaStore; mediaPrefix: string }
  | { kind: 'http'; base: string; dispatcher: Dispatcher; http: HttpOptions }
) & { close(): Promise<void> };

/** What one read gives: the first bytes of the file (all of it when `complete`), or why there are none. */
export type ReadResult =
  | { ok: true; location: string; bytes: Buffer; complete: boolean }
  | { ok: false; location: string; reason: 'missing' | 'unreadable' | 'outside'; message: string };

/**
 * The media source cannot be reached at all (a server that refuses connections, a name that
 * does not resolve): the command cannot run, which is not a finding per file.
 */
export class MediaSourceError extends ContentApiError {
  override name = 'MediaSourceError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('CONTENT_API_MEDIA_UNREACHABLE', message, options);
  }
}

type Reader<S extends FileSource> = (url: string, source: S, bytes: number) => Promise<ReadResult>;

/** One function per kind of place: the first `bytes` bytes of the file a media URL names. */
const READERS: { [K in FileSource['kind']]: Reader<Extract<FileSource, { kind: K }>> } = {
  store: readFromStore,
  http: readOverHttp,
};

/** The first `bytes` bytes of the file `url` names (fewer when the file is shorter). */
export function readMedia(url: string, source: FileSource, bytes: number): Promise<ReadResult> {
  return (READERS[source.kind] as Reader<FileSource>)(url, source, bytes);
}

export interface FileSourceOptions extends HttpOptions {
  mediaPrefix?: string | undefined;
  /** How to reach S3 for an `s3://` place. */
  s3?: S3Options | undefined;
}

/**
 * Opens a `--verify-files` place: a folder that is not there, a server or bucket that cannot
 * be reached, or a folder or bucket prefix that holds no file at all, throws (exit 2) before
 * any page is checked. The caller closes it.
 */
export async function openFileSource(target: string, options: FileSourceOptions = {}): Promise<FileSource> {
  const { mediaPrefix = '/media/', s3, ...http } = options;
  if (/^https?:\/\//i.test(target)) {
    const dispatcher = createDispatcher(http);
    const source: FileSource = {
      kind: 'http',
      base: target,
      dispatcher,
      http: { retries: 2, ...http },
      close: () => dispatcher.close(),
    };
    await assertReachable(source);
    return source;
  }
  if (isS3Url(target)) {
    const store = await openStore(target, s3);
    try {
      await store.open({ write: false, create: false }).catch((error: unknown) => {
        throw new MediaSourceError(`--verify-files ${oneLine(error)}`, { cause: error });
      });
      if (!(await holdsAFile(store.list()))) throw emptyPlace(store.location);
    } catch (error) {
      await store.close();
      if (error instanceof StorageError)
        throw new MediaSourceError(`--verify-files ${oneLine(error)}`, { cause: error });
      throw error;
    }
    return storeSource(store, mediaPrefix);
  }
  const info = await stat(target).catch(() => null);
  if (!info?.isDirectory())
    throw new InvalidArgumentError(
      `--verify-files ${target}: ${info ? 'is a file, not a folder or an http(s) base URL' : 'no such folder'}`,
    );
  // A folder that cannot be listed may still hold readable files: only one seen empty is refused.
  let unlisted = false;
  const files = walkFiles(target, {
    onUnreadable: () => {
      unlisted = true;
    },
  });
  if (!(await holdsAFile(files)) && !unlisted) throw emptyPlace(target);
  return storeSource(new LocalStore(target), mediaPrefix);
}

/** A store as a place of media files, closed with it. */
const storeSource = (store: MediaStore, mediaPrefix: string): FileSource => ({
  kind: 'store',
  store,
  mediaPrefix,
  close: () => store.close(),
});

/** True once the listing yields its first entry (read no further). */
async function holdsAFile(listing: AsyncIterable<unknown>): Promise<boolean> {
  for await (const _ of listing) return true;
  return false;
}

/**
 * A folder or bucket prefix with no file at all (a typo in the prefix, the wrong folder): every
 * file a page names would be a finding of its own, where the one mistake is the place.
 */
function emptyPlace(location: string): InvalidArgumentError {
  return new InvalidArgumentError(`--verify-files ${location}: holds no files, so no file a page names can be there`);
}

/** Any HTTP answer at the base URL, even a 404, shows the server is there. */
async function assertReachable(source: Extract<FileSource, { kind: 'http' }>): Promise<void> {
  try {
    const response = await undici().request(source.base, { method: 'HEAD', dispatcher: source.dispatcher });
    await response.body.dump();
  } catch (error) {
    throw new MediaSourceError(`--verify-files ${source.base}: cannot reach the server (${oneLine(error)})`, {
      cause: error,
    });
  }
}

const FORMATS: Record<string, FileFormat> = {
  jpg: 'jpeg',
  png: 'png',
  webp: 'webp',
  gif: 'gif',
  heif: 'avif',
  avif: 'avif',
};

/** Pixel size and format from the first bytes of an image, or null when more bytes are needed or it is not an image. */
export function sizeFromHeader(bytes: Uint8Array): { width: number; height: number; format: FileFormat } | null {
  try {
    const result = imageSize(bytes);
    if (!result.width || !result.height) return null;
    const swap = (result.orientation ?? 1) >= 5;
    return {
      width: swap ? result.height : result.width,
      height: swap ? result.width : result.height,
      format: FORMATS[result.type ?? ''] ?? 'other',
    };
  } catch {
    return null;
  }
}

/** The path of a media URL (absolute or root-relative), without query. */
export function urlPath(url: string): string {
  return new URL(url, 'http://placeholder.invalid').pathname;
}

/** A file's real size and format, reading only as much of its header as it takes. */
export async function probe(url: string, source: FileSource): Promise<ProbeResult> {
  let bytesRead = 0;
  let location = url;
  for (const size of READ_SIZES) {
    const read = await readMedia(url, source, size);
    if (!read.ok) return { ...read, bytesRead };
    location = read.location;
    bytesRead += read.bytes.length;
    const found = sizeFromHeader(read.bytes);
    if (found) return { ok: true, location, ...found, bytesRead };
    if (read.complete) break;
  }
  return {
    ok: false,
    location,
    reason: 'unreadable',
    message: `${location}: not an image with a readable header`,
    bytesRead,
  };
}

async function readFromStore(
  url: string,
  source: Extract<FileSource, { kind: 'store' }>,
  bytes: number,
): Promise<ReadResult> {
  const { store } = source;
  const key = mediaPath(url, source.mediaPrefix);
  if (key === null) return { ok: false, location: url, reason: 'unreadable', message: `${url} has a malformed path` };
  if (!isKey(key))
    return {
      ok: false,
      location: store.describe(key),
      reason: 'outside',
      message: `${url} points outside ${store.location}`,
    };
  const local = store.localPath(key);
  // Named as the folder was given (`media/x.jpg` for a relative --verify-files), read at its absolute path.
  const location = store.describe(key);
  if (local !== null) return readLocalHead(store, local, location, bytes);
  let head: Buffer | null;
  try {
    head = await store.readHead(key, bytes);
  } catch (error) {
    // A bucket that stops answering is gone as a whole, not this file.
    if (error instanceof StorageError && STORE_WIDE.has(error.kind)) {
      throw new MediaSourceError(`--verify-files ${oneLine(error)}`, { cause: error });
    }
    const reason = (error as NodeJS.ErrnoException).code ?? oneLine(error).replace(`${location}: `, '');
    return { ok: false, location, reason: 'unreadable', message: `${location} cannot be read (${reason})` };
  }
  if (head === null) return { ok: false, location, reason: 'missing', message: `${location} does not exist` };
  return { ok: true, location, bytes: head, complete: head.length < bytes };
}

/** The real path of each local folder, resolved once. */
const realRoots = new WeakMap<MediaStore, Promise<string | null>>();

/**
 * A file of a local folder, as `serve` reads one: resolved, refused when it resolves outside
 * the folder (a symlink out: never read), opened on the resolved path without following a
 * link swapped in since, and only when it is a regular file (a FIFO never blocks).
 */
async function readLocalHead(store: MediaStore, local: string, location: string, bytes: number): Promise<ReadResult> {
  let real: string;
  try {
    real = await realpath(local);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      return { ok: false, location, reason: 'missing', message: `${location} does not exist` };
    return { ok: false, location, reason: 'unreadable', message: `${location} cannot be read (${code})` };
  }
  let root = realRoots.get(store);
  if (!root) {
    root = realpath(store.location).catch(() => null);
    realRoots.set(store, root);
  }
  if (!isInside(real, (await root) ?? path.resolve(store.location)))
    return {
      ok: false,
      location,
      reason: 'outside',
      message: `${location} is a symlink to ${real}, outside ${store.location}`,
    };
  const opened = await openRegularFile(real, { noFollow: true });
  if (!opened.ok) {
    if (opened.missing) return { ok: false, location, reason: 'missing', message: `${location} does not exist` };
    return { ok: false, location, reason: 'unreadable', message: `${location} cannot be read (${opened.reason})` };
  }
  try {
    const buffer = Buffer.alloc(Math.min(bytes, opened.info.size + 1));
    const { bytesRead } = await opened.handle.read(buffer, 0, buffer.length, 0);
    return { ok: true, location, bytes: buffer.subarray(0, bytesRead), complete: bytesRead < bytes };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? oneLine(error);
    return { ok: false, location, reason: 'unreadable', message: `${location} cannot be read (${code})` };
  } finally {
    await opened.handle.close();
  }
}

/** Connection-level failures: the server as a whole is gone, not this file. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

async function readOverHttp(
  url: string,
  source: Extract<FileSource, { kind: 'http' }>,
  bytes: number,
): Promise<ReadResult> {
  const target = new URL(urlPath(url), source.base.endsWith('/') ? source.base : `${source.base}/`).href;
  let response: HttpResponse;
  try {
    // The client's deadline, retries and one-line reasons; a server ignoring Range is read no further.
    response = await fetchPrefix(target, source.dispatcher, bytes, source.http);
  } catch (error) {
    const code = connectionCode(error);
    if (code && UNREACHABLE.has(code))
      throw new MediaSourceError(`--verify-files ${source.base}: cannot reach the server (${oneLine(error)})`, {
        cause: error,
      });
    return { ok: false, location: target, reason: 'unreadable', message: oneLine(error) };
  }
  if (response.status === 404 || response.status === 410) {
    return { ok: false, location: target, reason: 'missing', message: `${target}: HTTP ${response.status}` };
  }
  if (response.status !== 206 && response.status !== 200) {
    return { ok: false, location: target, reason: 'unreadable', message: `${target}: HTTP ${response.status}` };
  }
  const body = response.body.subarray(0, bytes);
  const total = /\/(\d+)$/.exec(String(response.headers['content-range'] ?? ''))?.[1];
  const complete = body.length < bytes || (total !== undefined && Number(total) <= bytes);
  return { ok: true, location: target, bytes: body, complete };
}

/** The system error code under an HTTP client error (`ECONNREFUSED`, ...), if any. */
function connectionCode(error: unknown): string | undefined {
  for (
    let cause = error as { code?: unknown; cause?: unknown } | undefined, depth = 0;
    cause && depth < 4;
    cause = cause.cause as typeof cause, depth++
  ) {
    if (typeof cause.code === 'string' && !cause.code.startsWith('CONTENT_API_')) return cause.code;
  }
  return undefined;
}
