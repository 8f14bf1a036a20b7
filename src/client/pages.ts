/** The page endpoint of spec 4.1: `{base_url}/api/v2/pages/{id}/`. */
import { InvalidArgumentError } from '../errors.js';
import { createDispatcher, fetchJson, type HttpOptions, type JsonResponse } from './http.js';

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
