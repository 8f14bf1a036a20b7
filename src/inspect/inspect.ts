/** `inspect`: load one page (an id, a page endpoint URL, a file or standard input) and report on it. */

import { fillBaseUrl } from '../check/targets.js';
import { type FetchPageOptions, fetchPage, type LoadPageOptions, loadPage } from '../client/pages.js';
import { InvalidArgumentError } from '../errors.js';
import { validatePage } from '../page/validate.js';
import { buildInspectReport, type InspectReport } from './report.js';

export interface InspectOptions extends FetchPageOptions {
  baseUrl: string;
}

/** Fetches page `id` and validates it; throws an `HttpError` when it cannot be fetched as JSON. */
export async function inspectPage(id: number, options: InspectOptions): Promise<InspectReport> {
  const response = await fetchPage(options.baseUrl, id, options);
  const { problems } = validatePage(response.json, { formatApi: options.formatApi, baseUrl: options.baseUrl });
  return buildInspectReport(response.url, response.json, problems);
}

export interface InspectTargetOptions extends FetchPageOptions, Pick<LoadPageOptions, 'stdin'> {
  baseUrl?: string | undefined;
}

/**
 * The targets `check` takes, one at a time: a page id (fetched from `baseUrl`), a page endpoint
 * URL, a JSON file, or `-` for standard input. A file from a `serve` content folder has its
 * `{base_url}` placeholders filled with `baseUrl`. Throws when the page cannot be read or is not JSON.
 */
export async function inspectTarget(target: string, options: InspectTargetOptions): Promise<InspectReport> {
  if (/^\d+$/.test(target)) {
    if (!options.baseUrl)
      throw new InvalidArgumentError(`Expected --base-url or CONTENT_API_BASE_URL to fetch page ${target}`);
    return inspectPage(Number(target), { ...options, baseUrl: options.baseUrl });
  }
  const page = fillBaseUrl(await loadPage(target, options), options.baseUrl);
  if (page.parseError !== undefined) throw new InvalidArgumentError(`${page.source}: not JSON (${page.parseError})`);
  const { problems } = validatePage(page.json, {
    formatApi: options.formatApi,
    ...(page.baseUrl && { baseUrl: page.baseUrl }),
  });
  return buildInspectReport(page.source, page.json, problems);
}
