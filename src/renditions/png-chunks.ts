/**
 * What a PNG holds before its pixels. libspng keeps every chunk before the first IDAT in memory
 * when the header is read (text, a profile, private chunks): a 1x1 PNG carrying 288 MB of tEXt cost
 * 0.3 GB of memory for sharp's `metadata()` alone, 0.6 GB for a render. Memory follows bytes there.
 * Chunks after the pixels are not read until asked for, which nothing here does.
 */
import { open } from 'node:fs/promises';

/** Bytes of ancillary chunks before a PNG's pixels, at most: a large ICC profile, XMP and EXIF fit many times. */
export const PNG_HEADER_LIMIT = 16 * 1024 * 1024;

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** A chunk's length and type before its data, and its CRC after. */
const CHUNK_HEAD = 8;
const CHUNK_TAIL = 4;

/** How much a PNG holds before its first IDAT, once that is over `limit`; undefined when it is not. */
export interface PngHeaderExcess {
  /** Bytes of chunks read before giving up (just over the limit). */
  bytes: number;
  /** The chunk types that hold the most of them, largest first (`tEXt`, `iCCP`, ...). */
  types: string[];
}

/**
 * Walks the chunks of `input` (a PNG file or its bytes; anything else is not looked at) up to its
 * first IDAT, reading only their 8-byte heads, and stops as soon as they hold more than `limit`
 * bytes. A file that ends early, or whose chunks do not parse, is left to the decoder to name.
 */
export async function pngHeaderExcess(
  input: Buffer | string,
  limit = PNG_HEADER_LIMIT,
): Promise<PngHeaderExcess | undefined> {
  const reader = typeof input === 'string' ? await fileReader(input) : bufferReader(input);
  if (!reader) return undefined;
  try {
    const signature = await reader.read(0, SIGNATURE.length);
    if (!signature?.equals(SIGNATURE)) return undefined;
    const byType = new Map<string, number>();
    let total = 0;
    for (let at = SIGNATURE.length; ; ) {
      const head = await reader.read(at, CHUNK_HEAD);
      if (!head) return undefined;
      const length = head.readUInt32BE(0);
      const type = head.toString('latin1', 4, 8);
      // Four ASCII letters (PNG 5.4), else the file is not a PNG to walk.
      if (type === 'IDAT' || type === 'IEND' || !/^[A-Za-z]{4}$/.test(type)) return undefined;
      const size = CHUNK_HEAD + length + CHUNK_TAIL;
      // Ancillary chunks (a lower-case first letter) are what grows; IHDR and PLTE are small by rule.
      if (type[0]! >= 'a') {
        total += size;
        byType.set(type, (byType.get(type) ?? 0) + size);
      }
      if (total > limit) {
        const types = [...byType].sort((a, b) => b[1] - a[1]).map(([name]) => name);
        return { bytes: total, types };
      }
      at += size;
    }
  } finally {
    await reader.close();
  }
}

interface Reader {
  /** `length` bytes from `at`, or undefined when the input ends before them. */
  read(at: number, length: number): Promise<Buffer | undefined>;
  close(): Promise<void>;
}

function bufferReader(input: Buffer): Reader {
  return {
    read: async (at, length) => (at + length <= input.length ? input.subarray(at, at + length) : undefined),
    close: async () => undefined,
  };
}

/** A reader of `file`, or undefined when it cannot be opened (the decoder says why). */
async function fileReader(file: string): Promise<Reader | undefined> {
  const handle = await open(file, 'r').catch(() => undefined);
  if (!handle) return undefined;
  const scratch = Buffer.alloc(CHUNK_HEAD);
  return {
    async read(at, length) {
      const { bytesRead } = await handle.read(scratch, 0, length, at);
      return bytesRead === length ? scratch.subarray(0, length) : undefined;
    },
    close: () => handle.close(),
  };
}
