/**
 * Where pages come from: the page endpoint of spec 4.1 (`{base_url}/api/v2/pages/{id}/`),
 * a JSON file, or standard input.
 */
import { readFile } from 'node:fs/promises';
import { escapedMessage, InvalidArgumentError } from '../errors.js';
import { createDispatcher, fetchJson, type HttpOptions, type JsonResponse } from './http.js';
import type { Dispatcher } from 'undici';

/** The endpoint URL of page `id`, with `?format=api` when asked. */
export function pageUrl(baseUrl: string, id: number, formatApi = false): string {
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
  return `${root}/api/v2/pages/${id}/${formatApi ? '?format=api' : ''}`;
}

export interface FetchPageOptions extends HttpOptions {
  formatApi?: boolean;
}

/** Fetches page `id` from the API at `baseUrl`. */
export async function fetchPage(baseUrl: string, id: number, options: FetchPageOptions = {}): Promise<JsonResponse> {
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
  /** The body as read, byte for byte (decoded as UTF-8). */
  text: string;
  /** The parsed JSON, or undefined with `parseError` set. */
  json: unknown;
  parseError?: string;
  /** The API base URL, for pages fetched by id. */
  baseUrl?: string;
}

export interface LoadPageOptions extends HttpOptions {
  /** The API base URL, to fetch a page given by id. */
  baseUrl?: string | undefined;
  /** Reads standard input (default: `process.stdin`, at most 64 MiB). */
  stdin?: () => Promise<string>;
  /** Reused for page ids; a new one is made (and closed) otherwise. */
  dispatcher?: Dispatcher;
}

/**
 * Loads one page: `-` is standard input, digits are a page id fetched from the API (as is a
 * page endpoint URL, `{base_url}/api/v2/pages/{id}/`), anything else is a JSON file. Throws (the command cannot run) when it cannot be read or fetched;
 * JSON that does not parse is returned with `parseError`, for the caller to report.
 */
export async function loadPage(target: string, options: LoadPageOptions = {}): Promise<LoadedPage> {
  if (target === '-') return parsed('stdin', await (options.stdin ?? readStdin)());
  const endpoint = /^(https?:\/\/.+?)\/api\/v2\/pages\/(\d+)\/?$/.exec(target);
  if (endpoint) return loadPage(endpoint[2]!, { ...options, baseUrl: endpoint[1]! });
  if (/^https?:\/\//.test(target)) throw new InvalidArgumentError(`${target}: not a page endpoint URL ({base_url}/api/v2/pages/{id}/); give the page id and --base-url`);
  if (/^\d+$/.test(target)) {
    if (!options.baseUrl) throw new InvalidArgumentError(`Expected --base-url or CONTENT_API_BASE_URL to fetch page ${target}`);
    const url = pageUrl(options.baseUrl, Number(target));
    const dispatcher = options.dispatcher ?? createDispatcher(options);
    try {
      const response = await fetchJson(url, dispatcher, options);
      return { source: url, text: response.text, json: response.json, baseUrl: options.baseUrl };
    } finally {
      if (!options.dispatcher) await dispatcher.close();
    }
  }
  const text = await readFile(target, 'utf8').catch((error: NodeJS.ErrnoException) => {
    const reason = error.code === 'ENOENT' ? 'no such file or page id' : `cannot read (${error.code ?? error.message})`;
    throw new InvalidArgumentError(`${target}: ${reason}`);
  });
  return parsed(target, text);
}

function parsed(source: string, text: string): LoadedPage {
  try {
    return { source, text, json: JSON.parse(text) };
  } catch (error) {
    // V8 quotes the bad input, line breaks included: keep the reason on one line.
    return { source, text, json: undefined, parseError: escapedMessage(error) };
  }
}

const MAX_STDIN = 64 * 1024 * 1024;

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of process.stdin) {
    length += (chunk as Buffer).length;
    if (length > MAX_STDIN) throw new InvalidArgumentError(`standard input is larger than ${MAX_STDIN} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
