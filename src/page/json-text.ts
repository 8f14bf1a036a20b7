/**
 * A page's JSON text, however it arrives (file, standard input, HTTP, serve's content
 * folder), is accepted on the same terms: UTF-8 (RFC 8259 8.1; a byte that is not is never
 * silently replaced, and a leading byte-order mark is dropped, as 8.1 lets a parser do),
 * nested at most `MAX_JSON_DEPTH` levels (deeper input would overflow the stack of every
 * recursive walk after the parse), and parsed by `JSON.parse`. Each check is one linear
 * pass; none of them throws. The config file and baselines are read on the same terms
 * (`parseJsonAs`, json.ts).
 */
import { escapedMessage } from '../errors.js';
import { MAX_WALK_DEPTH } from './walk.js';

/** Deepest nesting of arrays and objects accepted in a page (real pages nest about 15 levels). */
export const MAX_JSON_DEPTH = MAX_WALK_DEPTH;

export type Decoded = { ok: true; text: string } | { ok: false; reason: string };

/** `ignoreBOM: false`: a byte-order mark that starts the bytes is dropped, one anywhere else kept. */
const fatalDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * `bytes` as UTF-8 text without a leading byte-order mark (the one home of that rule: every
 * JSON document read from a file, standard input or a response is decoded here), or the
 * offset of the first byte that is not UTF-8.
 */
export function decodeUtf8(bytes: Uint8Array): Decoded {
  try {
    return { ok: true, text: fatalDecoder.decode(bytes) };
  } catch {
    const at = firstInvalidUtf8(bytes);
    const byte = (bytes[at] ?? 0).toString(16).padStart(2, '0');
    return { ok: false, reason: `not UTF-8: byte 0x${byte} at offset ${at} is not valid UTF-8` };
  }
}

/** The offset of the first byte that does not belong to a well-formed UTF-8 sequence (RFC 3629). */
function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    const [length, low, high] = sequenceOf(b);
    if (length === 0) return i;
    for (let k = 1; k < length; k++) {
      const c = bytes[i + k];
      if (c === undefined || c < (k === 1 ? low : 0x80) || c > (k === 1 ? high : 0xbf)) return i;
    }
    i += length;
  }
  return bytes.length;
}

/**
 * The length of the sequence lead byte `b` starts, and the range of its second byte (RFC 3629
 * table 4); 0 when invalid.
 */
function sequenceOf(b: number): [number, number, number] {
  if (b < 0x80) return [1, 0, 0];
  if (b >= 0xc2 && b <= 0xdf) return [2, 0x80, 0xbf];
  if (b === 0xe0) return [3, 0xa0, 0xbf];
  if (b === 0xed) return [3, 0x80, 0x9f];
  if (b >= 0xe1 && b <= 0xef) return [3, 0x80, 0xbf];
  if (b === 0xf0) return [4, 0x90, 0xbf];
  if (b >= 0xf1 && b <= 0xf3) return [4, 0x80, 0xbf];
  if (b === 0xf4) return [4, 0x80, 0x8f];
  return [0, 0, 0];
}

/** Where `text` first nests deeper than `limit` (strings skipped), or null. One pass, no recursion. */
export function depthExceeded(text: string, limit = MAX_JSON_DEPTH): { offset: number } | null {
  if (opensAtMost(text, limit)) return null;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return { offset: i };
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return null;
}

/**
 * True when `text` holds at most `limit` brackets that open (`{` and `[`, in strings too), so nests no
 * deeper: found by `indexOf`, many times faster than reading each character, for the many small
 * documents (an archive's records) that have a few.
 */
function opensAtMost(text: string, limit: number): boolean {
  let count = 0;
  for (const bracket of ['{', '[']) {
    for (let at = text.indexOf(bracket); at !== -1; at = text.indexOf(bracket, at + 1))
      if (++count > limit) return false;
  }
  return true;
}

/** How deep `value` nests, counted without recursion and without going past `limit + 1`. */
export function valueDepth(value: unknown, limit = MAX_JSON_DEPTH): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    deepest = Math.max(deepest, depth);
    if (depth > limit) return depth;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return deepest;
}

export type ParsedJson = { ok: true; json: unknown } | { ok: false; reason: string };

/** `JSON.parse`, after the depth check; the reason is one line, with control characters escaped. */
export function parseJsonText(text: string): ParsedJson {
  const deep = depthExceeded(text);
  if (deep)
    return { ok: false, reason: `nested deeper than ${MAX_JSON_DEPTH} levels (the limit) at offset ${deep.offset}` };
  try {
    return { ok: true, json: JSON.parse(text) };
  } catch (error) {
    return { ok: false, reason: escapedMessage(error) };
  }
}
