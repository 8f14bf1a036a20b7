/**
 * Reading a file within a size cap: only a regular file is read (a FIFO, a device such as
 * /dev/zero, a socket or a folder is refused before a byte is read; a FIFO is opened without
 * waiting for a writer), and never more than the cap. The one home of that rule: pages, serve's
 * records, render's manifest and --alt-text, check's config, baseline and local media files.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { kindOf } from './kind.js';

export type ReadResult =
  | { ok: true; bytes: Buffer /** The file's stat as read (`readSmallFileSync`). */; info?: Stats }
  | { ok: false; reason: string; tooLarge?: boolean; missing?: boolean };

export type OpenResult =
  | { ok: true; handle: FileHandle; info: Stats }
  | { ok: false; reason: string; missing?: boolean };

/**
 * `file` opened for reading when it is a regular file (the caller closes the handle); a reason
 * otherwise (`no such file`, `a FIFO (named pipe), not a file`, ...). Never blocks on a FIFO,
 * never throws. `noFollow`: a symlink in the last place is refused too (for a path already
 * resolved and checked, so that no link swapped in since is followed).
 */
export async function openRegularFile(file: string, { noFollow = false } = {}): Promise<OpenResult> {
  let handle: FileHandle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | (noFollow ? constants.O_NOFOLLOW : 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'no such file' : `cannot read (${code ?? (error as Error).message})`;
    return { ok: false, reason, missing: code === 'ENOENT' || code === 'ENOTDIR' };
  }
  const info = await handle.stat().catch((error: NodeJS.ErrnoException) => error);
  if (info instanceof Error || !info.isFile()) {
    await handle.close();
    return {
      ok: false,
      reason: info instanceof Error ? `cannot read (${info.code ?? info.message})` : `${kindOf(info)}, not a file`,
    };
  }
  return { ok: true, handle, info };
}

/**
 * The bytes of `file`, a regular file of at most `maxBytes` bytes; a reason otherwise. Never
 * throws. `cap` names the limit in the reason when the file is larger.
 */
export async function readFileWithin(
  file: string,
  maxBytes: number,
  cap = 'the cap on a page (--max-bytes)',
): Promise<ReadResult> {
  const opened = await openRegularFile(file);
  if (!opened.ok) return opened;
  const { handle, info } = opened;
  try {
    if (info.size > maxBytes) return tooLarge(maxBytes, cap);
    // The file may grow between the stat and the read: read one byte past the cap to know.
    const buffer = Buffer.alloc(Math.min(info.size, maxBytes) + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > maxBytes) return tooLarge(maxBytes, cap);
      if (length === buffer.length) return { ok: false, reason: 'it grew while it was read' };
    }
    return { ok: true, bytes: buffer.subarray(0, length) };
  } catch (error) {
    return { ok: false, reason: `cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` };
  } finally {
    await handle.close();
  }
}

/**
 * `readFileWithin` for small files read by the thousand (the manifest's records), without the
 * thread pool: a few microseconds a file where the promise API's round trips cost tens. Same
 * rules: a regular file only (a FIFO is opened without waiting), never more than `maxBytes`.
 */
export function readSmallFileSync(file: string, maxBytes: number, cap: string): ReadResult {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'no such file' : `cannot read (${code ?? (error as Error).message})`;
    return { ok: false, reason, missing: code === 'ENOENT' || code === 'ENOTDIR' };
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) return { ok: false, reason: `${kindOf(info)}, not a file` };
    if (info.size > maxBytes) return tooLarge(maxBytes, cap);
    const buffer = Buffer.allocUnsafe(info.size + 1); // only what is read is returned
    let length = 0;
    for (;;) {
      const read = readSync(fd, buffer, length, buffer.length - length, length);
      if (read === 0) break;
      length += read;
      if (length === buffer.length) return { ok: false, reason: 'it grew while it was read' };
    }
    return { ok: true, bytes: buffer.subarray(0, length), info };
  } catch (error) {
    return { ok: false, reason: `cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` };
  } finally {
    closeSync(fd);
  }
}

/** Everything a stream gives, up to `maxBytes` (then it is destroyed and a reason returned). */
export async function readStreamWithin(
  stream: AsyncIterable<Buffer | string> & { destroy?: () => void },
  maxBytes: number,
): Promise<ReadResult> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    length += bytes.length;
    if (length > maxBytes) {
      stream.destroy?.();
      return tooLarge(maxBytes);
    }
    chunks.push(bytes);
  }
  return { ok: true, bytes: Buffer.concat(chunks) };
}

const tooLarge = (maxBytes: number, cap = 'the cap on a page (--max-bytes)'): ReadResult => ({
  ok: false,
  tooLarge: true,
  reason: `larger than ${maxBytes} bytes, ${cap}`,
});
