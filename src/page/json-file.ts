/**
 * Reading a JSON document from a file or a stream within a size cap: only a regular file
 * is read (a FIFO, a device such as /dev/zero, a socket or a folder is refused before a byte
 * is read; a FIFO is opened without waiting for a writer), and never more than the cap.
 */
import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';

export type ReadResult = { ok: true; bytes: Buffer } | { ok: false; reason: string; tooLarge?: boolean };

/** What a non-regular file is, for the message. */
function kindOf(info: import('node:fs').Stats): string {
  if (info.isDirectory()) return 'a folder';
  if (info.isFIFO()) return 'a FIFO (named pipe)';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  if (info.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** The bytes of `file`, a regular file of at most `maxBytes` bytes; a reason otherwise. Never throws. */
export async function readFileWithin(file: string, maxBytes: number): Promise<ReadResult> {
  let handle: FileHandle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return {
      ok: false,
      reason: code === 'ENOENT' ? 'no such file' : `cannot read (${code ?? (error as Error).message})`,
    };
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { ok: false, reason: `${kindOf(info)}, not a file` };
    if (info.size > maxBytes) return tooLarge(maxBytes);
    // The file may grow between the stat and the read: read one byte past the cap to know.
    const buffer = Buffer.alloc(Math.min(info.size, maxBytes) + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > maxBytes) return tooLarge(maxBytes);
      if (length === buffer.length) return { ok: false, reason: 'it grew while it was read' };
    }
    return { ok: true, bytes: buffer.subarray(0, length) };
  } catch (error) {
    return { ok: false, reason: `cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` };
  } finally {
    await handle.close();
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

const tooLarge = (maxBytes: number): ReadResult => ({
  ok: false,
  tooLarge: true,
  reason: `larger than ${maxBytes} bytes, the cap on a page (--max-bytes)`,
});
