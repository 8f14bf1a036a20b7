/** `inspect`: fetch one page and report on it. */
import { fetchPage, type FetchPageOptions } from '../client/pages.js';
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
