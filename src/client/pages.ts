/**
 * Where pages come from: the page endpoint of spec 4.1 (`{base_url}/api/v2/pages/{id}/`),
 * a JSON file, or standard input.
 */

import type { Dispatcher } from 'undici';
import { escapeText, InvalidArgumentError } from '../errors.js';
import { readFileWithin, readStreamWithin } from '../fs/read-within.js';
import { decodeUtf8, parseJsonText } from '../page/json-text.js';
import { HTTP_DEFAULTS } from './defaults.js';
import { createDispatcher, fetchJson, type HttpOptions, type JsonResponse } from './http.js';

/**
 * Page `id` as it goes in the endpoint's path. The spec's `page_id` is an integer with no
 * bound (4.1), so digits go as given, never through a JS number, which past 2^53 would ask
 * for another page (`1.2345678901234568e+29`); a number must be an integer it holds exactly.
 */
function pageIdSegment(id: number | string): string {
  if (typeof id === 'string') {
    if (/^\d+$/.test(id)) return id;
    throw new InvalidArgumentError(`page id '${escapeText(id)}': expected the digits of an integer`);
  }
  if (Number.isSafeInteger(id)) return String(id);
  throw new InvalidArgumentError(
    `page id ${id}: not an integer within 2^53 (past it, a JS number is not exact); give the id as a string of digits`,
  );
}

/** The endpoint URL of page `id` (a number, or its digits), with `?format=api` when asked. */
export function pageUrl(baseUrl: string, id: number | string, formatApi = false): string {
  let base: URL;
  try {
    base = new URL(baseUrl);
  } catch {
    throw new InvalidArgumentError(`Expected an absolute http(s) URL for the base URL but got '${baseUrl}'`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new InvalidArgumentError(`Expected an http(s) base URL but got '${baseUrl}'`);
  }
  const root = base.href.replace(/\/+$/, '');
  return `${root}/api/v2/pages/${pageIdSegment(id)}/${formatApi ? '?format=api' : ''}`;
}

export interface FetchPageOptions extends HttpOptions {
  formatApi?: boolean;
}

/** Fetches page `id` (a number, or its digits) from the API at `baseUrl`. */
export async function fetchPage(
  baseUrl: string,
  id: number | string,
  options: FetchPageOptions = {},
): Promise<JsonResponse> {
  const url = pageUrl(baseUrl, id, options.formatApi);
  const dispatcher = createDispatcher(options);
  try {
    return await fetchJson(url, dispatcher, options);
  } finally {
    await dispatcher.close();
  }
}

export interface LoadedPage {
  /** The file, URL or `stdin` the page came from. */
  source: string;
  /** The body as read, byte for byte (UTF-8), but for a leading byte-order mark, which is dropped. */
  text: string;
  /** The parsed JSON, or undefined with `parseError` or `fetchError` set. */
  json: unknown;
  /** Why the text is not a page's JSON: not UTF-8, nested too deep, or not JSON; one line. */
  parseError?: string;
  /** Why a page a site's listing gives could not be fetched (`loadSite`); one line naming the URL. */
  fetchError?: string;
  /** The API base URL, for pages fetched by id. */
  baseUrl?: string;
}

export interface LoadPageOptions extends HttpOptions {
  /** The API base URL, to fetch a page given by id. */
  baseUrl?: string | undefined;
  /** Reads standard input, at most `maxBytes` (default: `process.stdin`). */
  stdin?: (maxBytes: number) => Promise<Buffer | string>;
  /** Reused for page ids; a new one is made (and closed) otherwise. */
  dispatcher?: Dispatcher;
}

/**
 * Loads one page: `-` is standard input, digits are a page id fetched from the API (as is a
 * page endpoint URL, `{base_url}/api/v2/pages/{id}/`), anything else is a JSON file. One cap,
 * `maxBytes` (default 16 MiB), bounds the page however it arrives; only a regular file is
 * read. Throws (the command cannot run) when the page cannot be read or fetched, or is
 * larger than the cap; text that is not a page's JSON (not UTF-8, nested deeper than
 * `MAX_JSON_DEPTH`, or invalid) is returned with `parseError`, for the caller to report.
 */
export async function loadPage(target: string, options: LoadPageOptions = {}): Promise<LoadedPage> {
  const maxBytes = options.maxBytes ?? HTTP_DEFAULTS.maxBytes;
  if (target === '-') return parsed('stdin', await (options.stdin ?? readStdin)(maxBytes));
  const endpoint = /^(https?:\/\/.+?)\/api\/v2\/pages\/(\d+)\/?$/.exec(target);
  if (endpoint) return loadPage(endpoint[2]!, { ...options, baseUrl: endpoint[1]! });
  if (/^https?:\/\//.test(target)) {
    throw new InvalidArgumentError(
      `${escapeText(target)}: not a page endpoint URL ({base_url}/api/v2/pages/{id}/); give the page id and --base-url`,
    );
  }
  if (/^\d+$/.test(target)) {
    if (!options.baseUrl)
      throw new InvalidArgumentError(`Expected --base-url or CONTENT_API_BASE_URL to fetch page ${target}`);
    const url = pageUrl(options.baseUrl, target);
    const dispatcher = options.dispatcher ?? createDispatcher(options);
    try {
      const response = await fetchJson(url, dispatcher, options);
      return { source: url, text: response.text, json: response.json, baseUrl: options.baseUrl };
    } finally {
      if (!options.dispatcher) await dispatcher.close();
    }
  }
  const read = await readFileWithin(target, maxBytes);
  if (!read.ok) {
    throw new InvalidArgumentError(
      `${escapeText(target)}: ${read.reason === 'no such file' ? 'no such file or page id' : read.reason}`,
    );
  }
  return parsed(target, read.bytes);
}

function parsed(source: string, input: Buffer | string): LoadedPage {
  const decoded = typeof input === 'string' ? { ok: true as const, text: input } : decodeUtf8(input);
  if (!decoded.ok) return { source, text: input.toString(), json: undefined, parseError: decoded.reason };
  const result = parseJsonText(decoded.text);
  if (!result.ok) return { source, text: decoded.text, json: undefined, parseError: result.reason };
  return { source, text: decoded.text, json: result.json };
}

/** Standard input, at most `maxBytes` (default 16 MiB). */
export async function readStdin(maxBytes: number = HTTP_DEFAULTS.maxBytes): Promise<Buffer> {
  const read = await readStreamWithin(process.stdin, maxBytes);
  if (!read.ok) throw new InvalidArgumentError(`standard input: ${read.reason}`);
  return read.bytes;
}
