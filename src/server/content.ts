/**
 * The content folder `serve` answers from. Layout (one file per record, in the API's own
 * JSON shapes; absolute URLs written with the `{base_url}` placeholder):
 *
 *   pages/<id>.json                                   GET /api/v2/pages/<id>/
 *   quarterly/articles/<yyyy>/<mm>/<dd>/<slug>.json   GET /api/quarterly/articles/<yyyy>/<mm>/<dd>/<slug>/
 *   gallery/exhibitions/<yyyy>/<slug>.json            GET /api/gallery/exhibitions/<yyyy>/<slug>/
 *   gallery/newsentries/<yyyy>/<mm>/<dd>/<slug>.json  GET /api/gallery/newsentries/<yyyy>/<mm>/<dd>/<slug>/
 *   gallery/newscategories/<slug>.json                GET /api/gallery/newscategories/<slug>/
 *   media/...                                         GET /media/...   (rendition files)
 *
 * Every record is validated with the page model when the folder is loaded.
 */
import type { Dirent } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { z } from 'zod';
import { ContentApiError, escapedMessage, escapeText } from '../errors.js';
import { isInside } from '../fs/paths.js';
import { readFileWithin } from '../fs/read-within.js';
import { jsonKind } from '../json.js';
import { BASE_URL_PLACEHOLDER } from '../page/common.js';
import { decodeUtf8, parseJsonText } from '../page/json-text.js';
import {
  articleSummarySchema,
  exhibitionSummarySchema,
  newsCategorySchema,
  newsEntrySchema,
} from '../page/summaries.js';
import { type Problem, validatePage, zodProblems } from '../page/validate.js';

/** What the placeholder stands for while records are validated. */
const VALIDATION_BASE = 'http://content.invalid';

export interface ContentRecord {
  file: string;
  /** The record as stored, serialised once; `{base_url}` still in it. */
  text: string;
  json: unknown;
}

export interface Content {
  folder: string;
  /**
   * Page id, as canonical decimal digits (`101`, never `0101`) -> page. Digits, never a JS number:
   * past 2^53 two ids would be one number (the page model refuses such ids in a page anyway).
   */
  pages: Map<string, ContentRecord>;
  /** URL path (`/api/gallery/newscategories/fairs/`) -> linked resource. */
  resources: Map<string, ContentRecord>;
  /** Real path of the media folder, or null when the folder has none. */
  mediaRoot: string | null;
  warnings: string[];
}

/** A content folder with invalid records: every problem, file and JSON path. */
export class InvalidContentError extends ContentApiError {
  override name = 'InvalidContentError';
  readonly problems: string[];
  constructor(folder: string, problems: string[]) {
    super('CONTENT_API_INVALID_CONTENT', `${folder}: ${problems.length} problem(s) in the content folder`);
    this.problems = problems;
  }
}

const RESOURCES: ReadonlyArray<[RegExp, (m: RegExpExecArray) => string, z.ZodType]> = [
  [
    /^quarterly\/articles\/(\d{4})\/(\d{2})\/(\d{2})\/([\w-]+)\.json$/,
    (m) => `/api/quarterly/articles/${m[1]}/${m[2]}/${m[3]}/${m[4]}/`,
    articleSummarySchema,
  ],
  [
    /^gallery\/exhibitions\/(\d{4})\/([\w-]+)\.json$/,
    (m) => `/api/gallery/exhibitions/${m[1]}/${m[2]}/`,
    exhibitionSummarySchema,
  ],
  [
    /^gallery\/newsentries\/(\d{4})\/(\d{2})\/(\d{2})\/([\w-]+)\.json$/,
    (m) => `/api/gallery/newsentries/${m[1]}/${m[2]}/${m[3]}/${m[4]}/`,
    newsEntrySchema,
  ],
  [/^gallery\/newscategories\/([\w-]+)\.json$/, (m) => `/api/gallery/newscategories/${m[1]}/`, newsCategorySchema],
];

/** Largest record file read (as a page's cap elsewhere, `--max-bytes`' default). */
export const MAX_RECORD_BYTES = 16 * 1024 * 1024;

/**
 * Loads and validates every record of `folder`. Nothing in the folder can stop this with a
 * stack trace or a hang: a file that is not a regular file (a FIFO, a device), larger than
 * `MAX_RECORD_BYTES`, not UTF-8, not JSON, nested too deep or not an object, an unreadable
 * folder, two files for one page: each is a listed problem, and all of them are thrown at
 * the end as one `InvalidContentError`.
 */
export async function loadContent(folder: string): Promise<Content> {
  const info = await stat(folder).catch(() => null);
  if (!info?.isDirectory())
    throw new ContentApiError('CONTENT_API_NO_CONTENT', `${escapeText(folder)}: not a content folder`);
  const content: Content = { folder, pages: new Map(), resources: new Map(), mediaRoot: null, warnings: [] };
  const errors: string[] = [];
  const report = (file: string, problems: Problem[]) => {
    for (const p of problems) {
      const line = `${file}: ${p.path}: ${escapeText(p.message)} [${p.rule}]`;
      if (p.severity === 'error') errors.push(line);
      else content.warnings.push(line);
    }
  };
  const root = await realpath(folder);
  for (const name of await recordNames(folder, errors)) {
    const file = path.join(folder, name);
    const record = await readRecord(file, root);
    if ('problem' in record) {
      errors.push(`${file}: ${record.problem}`);
      continue;
    }
    const { json, placed } = record;
    const page = /^pages\/(\d+)\.json$/.exec(name);
    if (page) {
      // `pages/0101.json` is page 101 (and one page with `pages/101.json`).
      const id = page[1]!.replace(/^0+(?=\d)/, '');
      const other = content.pages.get(id);
      if (other) errors.push(`${file}: page ${id} is also ${other.file} [layout]`);
      // An id past 2^53 is read rounded: the page model says it is too big, not that it names another page.
      const exact = Number.isSafeInteger(json.id);
      if (exact ? String(json.id) !== id : typeof json.id !== 'number') {
        errors.push(
          `${file}: $.id: is ${escapeText(String(JSON.stringify(json.id)))}, but the file name says ${id} [layout]`,
        );
      }
      report(file, validatePage(placed, { baseUrl: VALIDATION_BASE }).problems);
      content.pages.set(id, { file, text: JSON.stringify(json), json });
      continue;
    }
    const resource = RESOURCES.find(([pattern]) => pattern.test(name));
    if (!resource) {
      errors.push(`${file}: not where a record can be (see the content folder layout) [layout]`);
      continue;
    }
    const [pattern, urlPath, schema] = resource;
    report(file, zodProblems(schema, placed, ['$']));
    content.resources.set(urlPath(pattern.exec(name)!), { file, text: JSON.stringify(json), json });
  }
  const media = path.join(folder, 'media');
  if ((await stat(media).catch(() => null))?.isDirectory()) content.mediaRoot = await realpath(media);
  if (errors.length > 0) throw new InvalidContentError(folder, errors);
  if (content.pages.size === 0) {
    content.warnings.push(
      `${escapeText(folder)}: no pages (pages/<id>.json), so every /api/v2/pages/<id>/ answers 404; ` +
        'is this the content folder?',
    );
  }
  return content;
}

/**
 * The record files below `folder` (`/`-separated, sorted): `.json` files outside `media/`
 * and hidden folders. Symlinked folders are not followed (no loops); a folder that cannot
 * be listed is a problem.
 */
async function recordNames(folder: string, errors: string[]): Promise<string[]> {
  const names: string[] = [];
  const pending = [''];
  while (pending.length > 0) {
    const dir = pending.pop()!;
    let entries: Dirent[];
    try {
      entries = await readdir(path.join(folder, dir), { withFileTypes: true });
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code ?? escapedMessage(error);
      errors.push(`${path.join(folder, dir)}: cannot list the folder (${reason})`);
      continue;
    }
    for (const entry of entries) {
      const name = dir === '' ? entry.name : `${dir}/${entry.name}`;
      if (entry.name.startsWith('.') || name === 'media') continue;
      if (entry.isDirectory()) pending.push(name);
      else if (entry.name.endsWith('.json')) names.push(name);
    }
  }
  return names.sort();
}

type Json = Record<string, unknown>;

/** A record file read within bounds and parsed, with `{base_url}` placed for validation; or the problem. */
async function readRecord(file: string, root: string): Promise<{ json: Json; placed: unknown } | { problem: string }> {
  const real = await realpath(file).catch((error: NodeJS.ErrnoException) => error.code ?? 'unresolvable');
  if (!path.isAbsolute(real)) return { problem: `cannot read (${real})` };
  if (!isInside(real, root)) return { problem: 'a symlink to a file outside the content folder; not read' };
  const read = await readFileWithin(file, MAX_RECORD_BYTES);
  if (!read.ok) return { problem: read.reason.replace(', the cap on a page (--max-bytes)', `, the cap on a record`) };
  const decoded = decodeUtf8(read.bytes);
  if (!decoded.ok) return { problem: decoded.reason };
  const parsed = parseJsonText(decoded.text);
  if (!parsed.ok) return { problem: `not JSON (${parsed.reason})` };
  if (typeof parsed.json !== 'object' || parsed.json === null || Array.isArray(parsed.json)) {
    return { problem: `$: is ${jsonKind(parsed.json)}, not a record (a JSON object) [layout]` };
  }
  const placed = JSON.parse(decoded.text.replaceAll(BASE_URL_PLACEHOLDER, VALIDATION_BASE)) as unknown;
  return { json: parsed.json as Json, placed };
}
