/**
 * Reads media files, on disk or over HTTP, for `check --verify-files`: the header of each
 * (its real pixel size and format, growing the read only when the header is longer, as for a
 * JPEG with a large EXIF block), or the whole file for the HTML report's thumbnails.
 *
 * Each kind of place is one small function that reads the first N bytes of one file
 * (`READERS`); everything else here works for every kind, so a third one (a bucket) slots in
 * beside them.
 */
import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import { imageSize } from 'image-size';
import { request, type Dispatcher } from 'undici';
import { ContentApiError, InvalidArgumentError, oneLine } from '../errors.js';
import { createDispatcher } from '../client/http.js';
import { isInside } from '../renditions/discover.js';
import { mediaPath } from '../renditions/rules.js';

/** Header reads, smallest first: almost every rendition's header fits the first one. */
const READ_SIZES = [4 * 1024, 64 * 1024, 1024 * 1024];

export type FileFormat = 'jpeg' | 'png' | 'webp' | 'gif' | 'avif' | 'other';

export type ProbeResult =
  | { ok: true; location: string; width: number; height: number; format: FileFormat; bytesRead: number }
  | { ok: false; location: string; reason: 'missing' | 'unreadable' | 'outside'; message: string; bytesRead: number };

/** Where media files are: a local folder (the URL path below `mediaPrefix` is looked up in it) or a base URL. */
export type FileSource = { kind: 'folder'; folder: string; mediaPrefix: string } | { kind: 'http'; base: string; dispatcher: Dispatcher };

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
  folder: readFromFolder,
  http: readOverHttp,
};

/** The first `bytes` bytes of the file `url` names (fewer when the file is shorter). */
export function readMedia(url: string, source: FileSource, bytes: number): Promise<ReadResult> {
  return (READERS[source.kind] as Reader<FileSource>)(url, source, bytes);
}

/**
 * Opens a `--verify-files` place: a folder that is not there, or a server that cannot be
 * reached, throws (exit 2) before any page is checked. The caller closes it.
 */
export async function openFileSource(target: string, options: { mediaPrefix?: string; timeoutMs?: number } = {}): Promise<FileSource> {
  if (/^https?:\/\//i.test(target)) {
    const source: FileSource = { kind: 'http', base: target, dispatcher: createDispatcher({ timeoutMs: options.timeoutMs ?? 10_000, retries: 2 }) };
    await assertReachable(source);
    return source;
  }
  const info = await stat(target).catch(() => null);
  if (!info?.isDirectory()) throw new InvalidArgumentError(`--verify-files ${target}: ${info ? 'is a file, not a folder or an http(s) base URL' : 'no such folder'}`);
  return { kind: 'folder', folder: target, mediaPrefix: options.mediaPrefix ?? '/media/' };
}

export async function closeFileSource(source: FileSource): Promise<void> {
  if (source.kind === 'http') await source.dispatcher.close();
}

/** Any HTTP answer at the base URL, even a 404, shows the server is there. */
async function assertReachable(source: Extract<FileSource, { kind: 'http' }>): Promise<void> {
  try {
    const response = await request(source.base, { method: 'HEAD', dispatcher: source.dispatcher });
    await response.body.dump();
  } catch (error) {
    throw new MediaSourceError(`--verify-files ${source.base}: cannot reach the server (${oneLine(error)})`, { cause: error });
  }
}

const FORMATS: Record<string, FileFormat> = { jpg: 'jpeg', png: 'png', webp: 'webp', gif: 'gif', heif: 'avif', avif: 'avif' };

/** Pixel size and format from the first bytes of an image, or null when more bytes are needed or it is not an image. */
export function sizeFromHeader(bytes: Uint8Array): { width: number; height: number; format: FileFormat } | null {
  try {
    const result = imageSize(bytes);
    if (!result.width || !result.height) return null;
    const swap = (result.orientation ?? 1) >= 5;
    return { width: swap ? result.height : result.width, height: swap ? result.width : result.height, format: FORMATS[result.type ?? ''] ?? 'other' };
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
  return { ok: false, location, reason: 'unreadable', message: `${location}: not an image with a readable header`, bytesRead };
}

async function readFromFolder(url: string, source: Extract<FileSource, { kind: 'folder' }>, bytes: number): Promise<ReadResult> {
  const relative = mediaPath(url, source.mediaPrefix);
  if (relative === null) return { ok: false, location: url, reason: 'unreadable', message: `${url} has a malformed path` };
  const file = path.resolve(source.folder, relative);
  if (!isInside(file, path.resolve(source.folder)) || relative.includes('\0')) {
    return { ok: false, location: file, reason: 'outside', message: `${url} points outside ${source.folder}` };
  }
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR'
      ? { ok: false, location: file, reason: 'missing', message: `${file} does not exist` }
      : { ok: false, location: file, reason: 'unreadable', message: `${file} cannot be read (${code})` };
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { ok: false, location: file, reason: 'unreadable', message: `${file} is not a file` };
    const buffer = Buffer.alloc(Math.min(bytes, info.size));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return { ok: true, location: file, bytes: buffer.subarray(0, bytesRead), complete: bytesRead >= info.size };
  } catch (error) {
    return { ok: false, location: file, reason: 'unreadable', message: `${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? oneLine(error)})` };
  } finally {
    await handle.close();
  }
}

/** Connection-level failures: the server as a whole is gone, not this file. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

async function readOverHttp(url: string, source: Extract<FileSource, { kind: 'http' }>, bytes: number): Promise<ReadResult> {
  const target = new URL(urlPath(url), source.base.endsWith('/') ? source.base : `${source.base}/`).href;
  let response: Dispatcher.ResponseData;
  try {
    response = await request(target, { method: 'GET', headers: { range: `bytes=0-${bytes - 1}` }, dispatcher: source.dispatcher });
  } catch (error) {
    const code = (error as { code?: string }).code ?? (error as { cause?: { code?: string } }).cause?.code;
    if (code && UNREACHABLE.has(code)) throw new MediaSourceError(`--verify-files ${source.base}: cannot reach the server (${oneLine(error)})`, { cause: error });
    return { ok: false, location: target, reason: 'unreadable', message: `${target}: ${oneLine(error)}` };
  }
  if (response.statusCode === 404 || response.statusCode === 410) {
    await response.body.dump();
    return { ok: false, location: target, reason: 'missing', message: `${target}: HTTP ${response.statusCode}` };
  }
  if (response.statusCode !== 206 && response.statusCode !== 200) {
    await response.body.dump();
    return { ok: false, location: target, reason: 'unreadable', message: `${target}: HTTP ${response.statusCode}` };
  }
  // A server that ignores Range sends the whole file: read no more than we asked for.
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of response.body) {
      chunks.push(chunk as Buffer);
      length += (chunk as Buffer).length;
      if (length >= bytes) break;
    }
  } catch (error) {
    return { ok: false, location: target, reason: 'unreadable', message: `${target}: ${oneLine(error)}` };
  }
  if (length >= bytes) response.body.destroy();
  const total = /\/(\d+)$/.exec(String(response.headers['content-range'] ?? ''))?.[1];
  const complete = length < bytes || (total !== undefined && Number(total) <= bytes);
  return { ok: true, location: target, bytes: Buffer.concat(chunks).subarray(0, bytes), complete };
}
