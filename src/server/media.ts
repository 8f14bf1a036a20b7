/**
 * Rendition files under `/media/`: the right Content-Type, ETag and Last-Modified, 304 on
 * conditional requests, single byte ranges, and a Cache-Control by the URL's version: immutable
 * for a year when its `?v=` is the file's version, revalidating otherwise. Nothing outside the
 * media folder is ever reached: `..`, encoded slashes, null bytes, hidden files and
 * symlinks out are all a 404, and folders are never listed.
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, open, realpath } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { finished } from 'node:stream';
import { isInside } from '../fs/paths.js';
import { versionOfSha256 } from '../renditions/rules.js';
import { IMMUTABLE_CACHE_CONTROL, MEDIA_TYPES, REVALIDATE_CACHE_CONTROL } from '../storage/media-headers.js';
import { ifNoneMatch } from './conditional.js';

export interface MediaFile {
  /** Open on the file itself (never through a symlink swapped in after the check); the caller closes it. */
  handle: FileHandle;
  file: string;
  size: number;
  mtime: Date;
  ino: number;
}

/** The file a `/media/` path names, opened, or null when it names nothing servable. */
export async function resolveMedia(root: string, rawPath: string): Promise<MediaFile | null> {
  const segments = rawPath.split('/');
  const decoded: string[] = [];
  for (const segment of segments) {
    let part: string;
    try {
      part = decodeURIComponent(segment);
    } catch {
      return null;
    }
    if (part === '' || part.startsWith('.') || /[/\\\0]/.test(part)) return null;
    decoded.push(part);
  }
  const candidate = path.join(root, ...decoded);
  if (!isInside(candidate, root)) return null;
  const real = await realpath(candidate).catch(() => null);
  if (!real || !isInside(real, root)) return null;
  // O_NOFOLLOW: the checked path, not a symlink put there since; O_NONBLOCK: a FIFO never blocks the open.
  const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => null);
  if (!handle) return null;
  const info = await handle.stat().catch(() => null);
  if (!info?.isFile()) {
    await handle.close();
    return null;
  }
  return { handle, file: real, size: info.size, mtime: info.mtime, ino: info.ino };
}

const httpDate = (date: Date) => date.toUTCString();

/**
 * Answers a `/media/` request for `rawPath` (below the media folder `root`); `version` is the
 * request's `?v=`, if any.
 */
export async function serveMedia(
  req: IncomingMessage,
  res: ServerResponse,
  root: string,
  rawPath: string,
  version: string | null,
  notFound: () => void,
): Promise<void> {
  const found = await resolveMedia(root, rawPath);
  const type = found && MEDIA_TYPES[path.extname(found.file).toLowerCase()];
  try {
    // The client may have gone while the file was looked up and opened: nothing to answer, only the file to close.
    if (res.destroyed) return;
    if (!found || !type) return notFound();
    await respond(req, res, found, type, version);
  } finally {
    await found?.handle.close().catch(() => {});
  }
}

async function respond(
  req: IncomingMessage,
  res: ServerResponse,
  found: MediaFile,
  type: string,
  version: string | null,
): Promise<void> {
  const etag = `"${found.size.toString(16)}-${Math.floor(found.mtime.getTime()).toString(16)}"`;
  const lastModified = httpDate(found.mtime);
  const cacheControl = await cacheControlFor(found, version);
  const headers: Record<string, string | number> = {
    'content-type': type,
    etag,
    'last-modified': lastModified,
    'cache-control': cacheControl,
    'accept-ranges': 'bytes',
  };

  if (notModified(req, etag, found.mtime)) {
    res.writeHead(304, { etag, 'last-modified': lastModified, 'cache-control': cacheControl });
    return void res.end();
  }

  const ifRange = req.headers['if-range'];
  const rangeHeader = req.headers.range && (!ifRange || ifRange === etag) ? req.headers.range : undefined;
  if (rangeHeader) {
    const range = parseRange(rangeHeader, found.size);
    if (range === 'unsatisfiable') {
      res.writeHead(416, { 'content-range': `bytes */${found.size}`, 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ message: 'Range not satisfiable.' }));
    }
    if (range) {
      res.writeHead(206, {
        ...headers,
        'content-range': `bytes ${range.start}-${range.end}/${found.size}`,
        'content-length': range.end - range.start + 1,
      });
      if (req.method === 'HEAD') return void res.end();
      return sendExactly(found.handle, res, range.start, range.end);
    }
  }
  res.writeHead(200, { ...headers, 'content-length': found.size });
  if (req.method === 'HEAD' || found.size === 0) return void res.end();
  return sendExactly(found.handle, res, 0, found.size - 1);
}

/**
 * Immutable for a request whose version is the file's (the first 8 hex digits of its SHA-256, as
 * `render` puts in URLs); otherwise revalidating: a URL without a version names whatever the file
 * holds now, and one whose version is another's (a page ahead of or behind its files) must not
 * keep these bytes for a year under a name that promises others.
 */
async function cacheControlFor(found: MediaFile, version: string | null): Promise<string> {
  if (version === null) return REVALIDATE_CACHE_CONTROL;
  return version === (await fileVersion(found)) ? IMMUTABLE_CACHE_CONTROL : REVALIDATE_CACHE_CONTROL;
}

/** Versions of files hashed, by path and stamp: each content of a file is read once for its version. */
const versions = new Map<string, Promise<string>>();
/** Entries of `versions` kept (least recently used first out): a few MB at most. */
const VERSIONS_KEPT = 20_000;

/** The version of an open file, hashed from the handle (positional reads: its sending is not moved). */
function fileVersion(found: MediaFile): Promise<string> {
  const key = `${found.file}\0${found.size}\0${found.mtime.getTime()}\0${found.ino}`;
  const known = versions.get(key);
  if (known) {
    versions.delete(key);
    versions.set(key, known);
    return known;
  }
  const hashed = (async () => {
    const hash = createHash('sha256');
    const buffer = Buffer.alloc(Math.min(found.size, 1024 * 1024));
    for (let at = 0; at < found.size; ) {
      const { bytesRead } = await found.handle.read(buffer, 0, buffer.length, at);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      at += bytesRead;
    }
    return versionOfSha256(hash.digest('hex'));
  })();
  versions.set(key, hashed);
  // A read that failed is not remembered: the next request reads again.
  hashed.catch(() => versions.delete(key));
  if (versions.size > VERSIONS_KEPT) versions.delete(versions.keys().next().value!);
  return hashed;
}

function notModified(req: IncomingMessage, etag: string, mtime: Date): boolean {
  // With If-None-Match, If-Modified-Since is not looked at (RFC 9110 13.1.3).
  if (req.headers['if-none-match']) return ifNoneMatch(req.headers['if-none-match'], etag);
  const since = Date.parse(req.headers['if-modified-since'] ?? '');
  return !Number.isNaN(since) && Math.floor(mtime.getTime() / 1000) <= Math.floor(since / 1000);
}

/** One `bytes=` range; null to ignore the header (several ranges, another unit, nonsense). */
export function parseRange(header: string, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return null;
  let start: number;
  let end: number;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
    if (match[2] !== '' && Number(match[2]) < start) return null;
  }
  if (start >= size || size === 0) return 'unsatisfiable';
  return { start, end };
}

/**
 * Sends bytes `start..end` (inclusive) of the open file: exactly the Content-Length promised.
 * The stream never reads past `end`, so a file that grew sends no more; a file that shrank
 * (or fails to read) ends early, and then the connection is destroyed instead of ended, so
 * a keep-alive client never reads the next response out of step with this one.
 * Settles once the response is finished or closed, even when that was before the call
 * (`finished` calls back for a response already closed; its 'close' event would never come again).
 */
function sendExactly(handle: FileHandle, res: ServerResponse, start: number, end: number): Promise<void> {
  return new Promise((resolve) => {
    const stream = handle.createReadStream({ start, end, autoClose: false });
    const promised = end - start + 1;
    let sent = 0;
    stream.on('data', (chunk) => {
      sent += chunk.length;
      if (!res.write(chunk)) {
        stream.pause();
        res.once('drain', () => stream.resume());
      }
    });
    stream.on('end', () => {
      if (sent === promised) res.end();
      else res.destroy();
    });
    stream.on('error', () => res.destroy());
    finished(res, () => {
      stream.destroy();
      resolve();
    });
  });
}
