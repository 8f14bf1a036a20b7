/**
 * JSON that content-api keeps or is given, other than pages (a config file, a baseline, a
 * manifest, the queue's records in Redis): parsed, then checked with its zod schema, every
 * problem named by its JSON path. Pages have their own reader (page/json-text.ts), with limits
 * on depth and encoding and the positions of duplicate keys.
 */
import type { z } from 'zod';

/** Where a zod issue is, as a JSON path: `$.rules.image-srcset-present`, `$.ignore.paths[0]`. */
export function issuePath(path: readonly PropertyKey[]): string {
  return ['$', ...path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`))].join('');
}

export type JsonResult<T> = { ok: true; data: T } | { ok: false; problems: string[] };

/**
 * `text` parsed as JSON and checked with `schema`: its data, or the problems: `not JSON
 * (<reason>)` alone, or one `$.path: message` per issue (`word` may say an issue its own way,
 * as one problem or several).
 */
export function parseJsonAs<T>(
  schema: z.ZodType<T>,
  text: string,
  word?: (issue: z.core.$ZodIssue) => string[] | undefined,
): JsonResult<T> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, problems: [`not JSON (${(error as Error).message.replace(/\s+/g, ' ')})`] };
  }
  const result = schema.safeParse(json);
  if (result.success) return { ok: true, data: result.data };
  const problems = result.error.issues.flatMap(
    (issue) => word?.(issue) ?? [`${issuePath(issue.path)}: ${issue.message}`],
  );
  return { ok: false, problems };
}

/** `text` as JSON of `schema`'s shape, or undefined: for records whose problems are not told one by one. */
export function parseJsonOrUndefined<T>(schema: z.ZodType<T>, text: string): T | undefined {
  const result = parseJsonAs(schema, text);
  return result.ok ? result.data : undefined;
}
