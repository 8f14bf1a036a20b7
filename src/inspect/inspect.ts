/** `inspect`: load one page (an id, a page endpoint URL, a file or standard input) and report on it. */

import type { FileSource } from '../check/probe.js';
import { fillBaseUrl, loadSite, type TargetOptions } from '../check/targets.js';
import type { SiteQuery } from '../client/listing.js';
import { type FetchPageOptions, fetchPage, type LoadedPage, type LoadPageOptions, loadPage } from '../client/pages.js';
import { ContentApiError, escapeText, InvalidArgumentError } from '../errors.js';
import { jsonKind } from '../json.js';
import { type Problem, validatePage } from '../page/validate.js';
import { buildInspectReport, type InspectReport } from './report.js';

/** The keys every page has (spec 2.1), which the report's first line shows. */
const PAGE_KEYS = ['id', 'meta', 'title'];

/** `a`, `a or b`, `a, b or c` (or `and`). */
const listed = (words: string[], conjunction = 'or') =>
  words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} ${conjunction} ${words.at(-1)}`;

/**
 * JSON that is not a page at all (a package.json, an article, a list): no report to make, one
 * line instead. The page was read, so it is exit 1 in the CLI, as for any invalid page.
 */
export class NotAPageError extends ContentApiError {
  override name = 'NotAPageError';
  constructor(source: string, reason: string) {
    super(
      'CONTENT_API_NOT_A_PAGE',
      `${escapeText(source)}: not a page: ${reason} (a page has ${listed(PAGE_KEYS, 'and')})`,
    );
  }
}

/** Throws a `NotAPageError` unless `json` is an object with every key of `PAGE_KEYS`. */
function assertPage(source: string, json: unknown): void {
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new NotAPageError(source, `${jsonKind(json)} at $, not an object`);
  const missing = PAGE_KEYS.filter((key) => !Object.hasOwn(json, key));
  if (missing.length > 0) throw new NotAPageError(source, `no ${listed(missing)} at $`);
}

export interface InspectOptions extends FetchPageOptions {
  baseUrl: string;
  /**
   * Where the media files the page names are (`check --verify-files`): each is read and held to the
   * file rules (there, the right size and format, decodable, the picture recorded), as `check` does.
   */
  files?: FileSource | undefined;
}

/** The page's file findings (`file-*` rules) against `files`, as `check --verify-files` finds them. */
async function fileProblems(page: LoadedPage, files: FileSource | undefined): Promise<Problem[]> {
  if (!files) return [];
  const { CheckRun } = await import('../check/check.js');
  const checked = await new CheckRun({ files }).check(page);
  return checked.problems.filter((problem) => problem.rule.startsWith('file-')) as Problem[];
}

/**
 * Fetches page `id` (a number, or its digits) and validates it; throws an `HttpError` when it
 * cannot be fetched as JSON, a `NotAPageError` when the JSON is not a page.
 */
export async function inspectPage(id: number | string, options: InspectOptions): Promise<InspectReport> {
  const response = await fetchPage(options.baseUrl, id, options);
  assertPage(response.url, response.json);
  const { problems } = validatePage(response.json, { formatApi: options.formatApi, baseUrl: options.baseUrl });
  const page = { source: response.url, text: '', json: response.json, baseUrl: options.baseUrl };
  return buildInspectReport(response.url, response.json, [...problems, ...(await fileProblems(page, options.files))]);
}

export interface InspectTargetOptions extends FetchPageOptions, Pick<LoadPageOptions, 'stdin'> {
  baseUrl?: string | undefined;
  /** See `InspectOptions.files`. */
  files?: FileSource | undefined;
}

/**
 * The targets `check` takes, one at a time: a page id (fetched from `baseUrl`), a page endpoint
 * URL, a JSON file, or `-` for standard input. A file from a `serve` content folder has its
 * `{base_url}` placeholders filled with `baseUrl`. Throws when the page cannot be read, is not
 * JSON, or is not a page (`NotAPageError`).
 */
export async function inspectTarget(target: string, options: InspectTargetOptions): Promise<InspectReport> {
  if (/^\d+$/.test(target)) {
    if (!options.baseUrl)
      throw new InvalidArgumentError(`Expected --base-url or CONTENT_API_BASE_URL to fetch page ${target}`);
    return inspectPage(target, { ...options, baseUrl: options.baseUrl });
  }
  return inspectLoaded(fillBaseUrl(await loadPage(target, options), options.baseUrl), options);
}

/** A page read: its report; throws when it is not JSON or not a page (`NotAPageError`). */
async function inspectLoaded(page: LoadedPage, options: InspectTargetOptions): Promise<InspectReport> {
  if (page.parseError !== undefined) throw new InvalidArgumentError(`${page.source}: not JSON (${page.parseError})`);
  assertPage(page.source, page.json);
  const { problems } = validatePage(page.json, {
    formatApi: options.formatApi,
    ...(page.baseUrl && { baseUrl: page.baseUrl }),
  });
  return buildInspectReport(page.source, page.json, [...problems, ...(await fileProblems(page, options.files))]);
}

/** A page of a site that could not be inspected: not fetched, not JSON or not a page; one line. */
export interface InspectFailure {
  source: string;
  failure: string;
}

/**
 * Every published page of the site at `options.baseUrl` that its listing gives for `query`, each
 * inspected as it comes (a few fetched ahead), in id order. A page that cannot be fetched or is not
 * a page is an `InspectFailure` and the walk goes on; a listing that cannot be read throws.
 */
export async function* inspectSite(
  query: SiteQuery,
  options: InspectTargetOptions & Pick<TargetOptions, 'onTotal'>,
): AsyncGenerator<InspectReport | InspectFailure> {
  for await (const page of loadSite(query, options)) {
    if (page.fetchError !== undefined) {
      yield { source: page.source, failure: `cannot fetch: ${page.fetchError}` };
      continue;
    }
    try {
      yield await inspectLoaded(page, options);
    } catch (error) {
      if (!(error instanceof ContentApiError)) throw error;
      yield { source: page.source, failure: error.message };
    }
  }
}
