/**
 * JSON that content-api keeps or is given, other than pages (a config file, a baseline, a
 * manifest, the queue's records in Redis): parsed, then checked with its zod schema, every
 * problem named by its JSON path. Decoding and parsing are a page's (page/json-text.ts):
 * UTF-8 only, a leading byte-order mark dropped, the depth bounded, the reason escaped.
 */
import type { z } from 'zod';
import { escapeText } from './errors.js';
import { decodeUtf8, parseJsonText } from './page/json-text.js';

/** What kind of JSON value `value` is, for messages: `null`, `an array`, `an object`, `a string`, ... */
export function jsonKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Where a zod issue is, as a JSON path: `$.rules.image-srcset-present`, `$.ignore.paths[0]`. */
export function issuePath(path: readonly PropertyKey[]): string {
  return ['$', ...path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`))].join('');
}

export type JsonResult<T> = { ok: true; data: T } | { ok: false; problems: string[] };

/**
 * `input` (text, or the bytes of a file as read) parsed as JSON and checked with `schema`: its
 * data, or the problems: `not UTF-8: ...` or `not JSON (<reason>)` alone, or one
 * `$.path: message` per issue (`word` may say an issue its own way, as one problem or several).
 * Each problem is escaped (`escapeText`): a key or a value quoted from the input is someone
 * else's text, and a message that prints it must not carry its line breaks or escape sequences.
 */
export function parseJsonAs<T>(
  schema: z.ZodType<T>,
  input: string | Uint8Array,
  word?: (issue: z.core.$ZodIssue) => string[] | undefined,
): JsonResult<T> {
  const decoded = typeof input === 'string' ? { ok: true as const, text: input } : decodeUtf8(input);
  if (!decoded.ok) return { ok: false, problems: [decoded.reason] };
  const parsed = parseJsonText(decoded.text);
  if (!parsed.ok) return { ok: false, problems: [`not JSON (${parsed.reason})`] };
  const result = schema.safeParse(parsed.json);
  if (result.success) return { ok: true, data: result.data };
  const problems = result.error.issues.flatMap(
    (issue) => word?.(issue) ?? [`${issuePath(issue.path)}: ${issue.message}`],
  );
  return { ok: false, problems: problems.map(escapeText) };
}

/** `text` as JSON of `schema`'s shape, or undefined: for records whose problems are not told one by one. */
export function parseJsonOrUndefined<T>(schema: z.ZodType<T>, text: string): T | undefined {
  const result = parseJsonAs(schema, text);
  return result.ok ? result.data : undefined;
}
