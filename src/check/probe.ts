/**
 * Probes rendition files, on disk or over HTTP, for their real pixel size and format,
 * reading only the header: a partial read on disk, a Range request over HTTP, growing the
 * read only when the header is longer (a JPEG with a large EXIF block).
 */
import { open } from 'node:fs/promises';
import path from 'node:path';
import { imageSize } from 'image-size';
import pLimit from 'p-limit';
import { request, type Dispatcher } from 'undici';
import { isInside } from '../renditions/discover.js';
import { mediaPath } from '../renditions/rules.js';

/** Header reads, smallest first: almost every rendition's header fits the first one. */
const READ_SIZES = [4 * 1024, 64 * 1024, 1024 * 1024];

export type FileFormat = 'jpeg' | 'png' | 'webp' | 'gif' | 'avif' | 'other';

export type ProbeResult =
  | { ok: true; location: string; width: number; height: number; format: FileFormat; bytesRead: number }
  | { ok: false; location: string; reason: 'missing' | 'unreadable' | 'outside'; message: string; bytesRead: number };

/** Where rendition files are: a local folder (the `/media/` URL path is looked up below it) or a base URL. */
export type FileSource = { kind: 'folder'; folder: string; mediaPrefix: string } | { kind: 'http'; base: string; dispatcher: Dispatcher };

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

/** The path of a rendition URL (absolute or root-relative), without query. */
export function urlPath(url: string): string {
  return new URL(url, 'http://placeholder.invalid').pathname;
}

/** Probes every distinct URL once, `concurrency` at a time. */
export async function probeAll(urls: Iterable<string>, source: FileSource, concurrency = 16): Promise<Map<string, ProbeResult>> {
  const limit = pLimit(concurrency);
  const unique = [...new Set(urls)];
  const results = await Promise.all(unique.map((url) => limit(() => probe(url, source))));
  return new Map(unique.map((url, i) => [url, results[i]!]));
}

export async function probe(url: string, source: FileSource): Promise<ProbeResult> {
  return source.kind === 'folder' ? probeFile(url, source) : probeHttp(url, source);
}

async function probeFile(url: string, source: Extract<FileSource, { kind: 'folder' }>): Promise<ProbeResult> {
  const relative = mediaPath(url, source.mediaPrefix);
  if (relative === null) return { ok: false, location: url, reason: 'unreadable', message: `${url} has a malformed path`, bytesRead: 0 };
  const file = path.resolve(source.folder, relative);
  if (!isInside(file, path.resolve(source.folder)) || relative.includes('\0')) {
    return { ok: false, location: file, reason: 'outside', message: `${url} points outside ${source.folder}`, bytesRead: 0 };
  }
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT'
      ? { ok: false, location: file, reason: 'missing', message: `${file} does not exist`, bytesRead: 0 }
      : { ok: false, location: file, reason: 'unreadable', message: `${file} cannot be read (${code})`, bytesRead: 0 };
  }
  try {
    let bytesRead = 0;
    for (const size of READ_SIZES) {
      const buffer = Buffer.alloc(size);
      const { bytesRead: n } = await handle.read(buffer, 0, size, 0);
      bytesRead += n;
      const found = sizeFromHeader(buffer.subarray(0, n));
      if (found) return { ok: true, location: file, ...found, bytesRead };
      if (n < size) break; // the whole file was read
    }
    return { ok: false, location: file, reason: 'unreadable', message: `${file} is not an image with a readable header`, bytesRead };
  } finally {
    await handle.close();
  }
}

async function probeHttp(url: string, source: Extract<FileSource, { kind: 'http' }>): Promise<ProbeResult> {
  const target = new URL(urlPath(url), source.base.endsWith('/') ? source.base : `${source.base}/`).href;
  let bytesRead = 0;
  for (const size of READ_SIZES) {
    let response: Dispatcher.ResponseData;
    try {
      response = await request(target, { method: 'GET', headers: { range: `bytes=0-${size - 1}` }, dispatcher: source.dispatcher });
    } catch (error) {
      return { ok: false, location: target, reason: 'unreadable', message: `${target}: ${(error as Error).message}`, bytesRead };
    }
    if (response.statusCode === 404 || response.statusCode === 410) {
      await response.body.dump();
      return { ok: false, location: target, reason: 'missing', message: `${target}: HTTP ${response.statusCode}`, bytesRead };
    }
    if (response.statusCode !== 206 && response.statusCode !== 200) {
      await response.body.dump();
      return { ok: false, location: target, reason: 'unreadable', message: `${target}: HTTP ${response.statusCode}`, bytesRead };
    }
    // A server that ignores Range sends the whole file: read no more than we asked for.
    const chunks: Buffer[] = [];
    let length = 0;
    for await (const chunk of response.body) {
      chunks.push(chunk as Buffer);
      length += (chunk as Buffer).length;
      if (length >= size) break;
    }
    if (length >= size) response.body.destroy();
    bytesRead += length;
    const found = sizeFromHeader(Buffer.concat(chunks).subarray(0, size));
    if (found) return { ok: true, location: target, ...found, bytesRead };
    if (length < size) break;
  }
  return { ok: false, location: target, reason: 'unreadable', message: `${target}: not an image with a readable header`, bytesRead };
}
