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
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { z } from 'zod';
import { ContentApiError, escapedMessage } from '../errors.js';
import { articleSummarySchema, exhibitionSummarySchema, newsCategorySchema, newsEntrySchema } from '../page/summaries.js';
import { validatePage, zodProblems, type Problem } from '../page/validate.js';

/** How absolute URLs are written in content files; replaced by the base URL when served. */
export const BASE_URL_PLACEHOLDER = '{base_url}';
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
  /** Page id -> page. */
  pages: Map<number, ContentRecord>;
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
  [/^quarterly\/articles\/(\d{4})\/(\d{2})\/(\d{2})\/([\w-]+)\.json$/, (m) => `/api/quarterly/articles/${m[1]}/${m[2]}/${m[3]}/${m[4]}/`, articleSummarySchema],
  [/^gallery\/exhibitions\/(\d{4})\/([\w-]+)\.json$/, (m) => `/api/gallery/exhibitions/${m[1]}/${m[2]}/`, exhibitionSummarySchema],
  [/^gallery\/newsentries\/(\d{4})\/(\d{2})\/(\d{2})\/([\w-]+)\.json$/, (m) => `/api/gallery/newsentries/${m[1]}/${m[2]}/${m[3]}/${m[4]}/`, newsEntrySchema],
  [/^gallery\/newscategories\/([\w-]+)\.json$/, (m) => `/api/gallery/newscategories/${m[1]}/`, newsCategorySchema],
];

export async function loadContent(folder: string): Promise<Content> {
  const info = await stat(folder).catch(() => null);
  if (!info?.isDirectory()) throw new ContentApiError('CONTENT_API_NO_CONTENT', `${folder}: not a content folder`);
  const content: Content = { folder, pages: new Map(), resources: new Map(), mediaRoot: null, warnings: [] };
  const errors: string[] = [];
  const report = (file: string, problems: Problem[]) => {
    for (const p of problems) {
      const line = `${file}: ${p.path}: ${p.message} [${p.rule}]`;
      if (p.severity === 'error') errors.push(line);
      else content.warnings.push(line);
    }
  };
  const names = (await readdir(folder, { recursive: true })).map((name) => name.split(path.sep).join('/')).sort();
  for (const name of names) {
    if (!name.endsWith('.json') || name.startsWith('media/') || name.split('/').some((part) => part.startsWith('.'))) continue;
    const file = path.join(folder, name);
    let json: unknown;
    const text = await readFile(file, 'utf8');
    try {
      json = JSON.parse(text);
    } catch (error) {
      errors.push(`${file}: not JSON (${escapedMessage(error)})`);
      continue;
    }
    const placed = JSON.parse(text.replaceAll(BASE_URL_PLACEHOLDER, VALIDATION_BASE)) as unknown;
    const page = /^pages\/(\d+)\.json$/.exec(name);
    if (page) {
      const id = Number(page[1]);
      if ((json as { id?: unknown }).id !== id) errors.push(`${file}: $.id: is ${JSON.stringify((json as { id?: unknown }).id)}, but the file name says ${id} [layout]`);
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
  return content;
}
