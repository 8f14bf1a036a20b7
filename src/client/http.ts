/**
 * Fetching JSON from the Content API over undici: a timeout, retries with backoff for
 * connection errors, 502/503/504 and 429 (honouring Retry-After; undici's retry
 * interceptor), none for other statuses, and a bounded response size. Every failure is an
 * `HttpError` whose one-line message names the URL.
 */
import { Agent, errors, interceptors, request, type Dispatcher } from 'undici';
import { ContentApiError } from '../errors.js';

export interface HttpOptions {
  /** Per request: connecting, then waiting for headers, then between body chunks (default 10 s). */
  timeoutMs?: number;
  /** Retries after the first attempt (default 3). */
  retries?: number;
  /** First backoff delay; doubles each retry (default 250 ms), capped at `maxBackoffMs`. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** Largest response body accepted (default 16 MiB). */
  maxBytes?: number;
}

export const HTTP_DEFAULTS = { timeoutMs: 10_000, retries: 3, backoffMs: 250, maxBackoffMs: 10_000, maxBytes: 16 * 1024 * 1024 } as const;

export type HttpErrorCode =
  | 'CONTENT_API_HTTP_STATUS'
  | 'CONTENT_API_HTTP_TIMEOUT'
  | 'CONTENT_API_HTTP_CONNECTION'
  | 'CONTENT_API_HTTP_TOO_LARGE'
  | 'CONTENT_API_HTTP_NOT_JSON'
  | 'CONTENT_API_HTTP_NOT_IMAGE';

export class HttpError extends ContentApiError {
  override name = 'HttpError';
  readonly url: string;
  readonly status: number | undefined;

  constructor(code: HttpErrorCode, url: string, reason: string, options: { status?: number; cause?: unknown } = {}) {
    super(code, `${url}: ${reason}`, { cause: options.cause });
    this.url = url;
    this.status = options.status;
  }
}

export interface JsonResponse {
  url: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: unknown;
  /** The body as received, for callers that rewrite it without reformatting. */
  text: string;
  bytes: number;
}

const RETRY_STATUSES = [429, 502, 503, 504];

/** A dispatcher with the timeouts, size bound and retry policy of `options`; reuse it across requests. */
export function createDispatcher(options: HttpOptions = {}): Dispatcher {
  const o = { ...HTTP_DEFAULTS, ...options };
  return new Agent({ headersTimeout: o.timeoutMs, bodyTimeout: o.timeoutMs, connect: { timeout: o.timeoutMs }, maxResponseSize: o.maxBytes }).compose(
    interceptors.retry({
      maxRetries: o.retries,
      minTimeout: o.backoffMs,
      maxTimeout: o.maxBackoffMs,
      timeoutFactor: 2,
      retryAfter: true,
      methods: ['GET', 'HEAD'],
      statusCodes: RETRY_STATUSES,
    }),
  );
}

/** GETs `url` and parses its JSON body. */
export async function fetchJson(url: string, dispatcher: Dispatcher, options: HttpOptions = {}): Promise<JsonResponse> {
  const { status, headers, body, type } = await get(url, dispatcher, 'application/json', options);
  const text = body.toString('utf8');
  const looksHtml = /text\/html/i.test(type) || /^\s*<(!doctype|html)/i.test(text);
  if (status < 200 || status >= 300) throw statusError(url, status, looksHtml ? 'an HTML error page' : summarise(text));
  if (looksHtml) throw new HttpError('CONTENT_API_HTTP_NOT_JSON', url, `got an HTML page (${type || 'no content type'}), not JSON`, { status });
  if (!/^application\/(?:[\w.+-]+\+)?json\b/i.test(type)) {
    throw new HttpError('CONTENT_API_HTTP_NOT_JSON', url, `content type is ${type || 'missing'}, not application/json`, { status });
  }
  try {
    return { url, status, headers, json: JSON.parse(text), text, bytes: body.length };
  } catch (error) {
    throw new HttpError('CONTENT_API_HTTP_NOT_JSON', url, `invalid JSON (${(error as Error).message})`, { status, cause: error });
  }
}

/**
 * GETs an image file's bytes. An error status, or a body that is an HTML page or JSON
 * rather than an image, is an `HttpError`; whether the bytes decode is the caller's business.
 */
export async function fetchBytes(url: string, dispatcher: Dispatcher, options: HttpOptions = {}): Promise<Buffer> {
  const { status, body, type } = await get(url, dispatcher, 'image/*', options);
  if (status < 200 || status >= 300) throw statusError(url, status, /text\/html/i.test(type) ? 'an HTML error page' : summarise(body.toString('utf8', 0, 4096)));
  if (/^(text\/html|application\/(?:[\w.+-]+\+)?json)\b/i.test(type)) {
    throw new HttpError('CONTENT_API_HTTP_NOT_IMAGE', url, `content type is ${type}, not an image`, { status });
  }
  return body;
}

async function get(url: string, dispatcher: Dispatcher, accept: string, options: HttpOptions) {
  const maxBytes = options.maxBytes ?? HTTP_DEFAULTS.maxBytes;
  try {
    const response = await request(url, { method: 'GET', headers: { accept }, dispatcher });
    const body = Buffer.from(await response.body.arrayBuffer());
    return { status: response.statusCode, headers: response.headers, body, type: String(response.headers['content-type'] ?? '') };
  } catch (error) {
    throw httpErrorFrom(url, error, maxBytes);
  }
}

function statusError(url: string, status: number, detail: string): HttpError {
  return new HttpError('CONTENT_API_HTTP_STATUS', url, `HTTP ${status}${status === 404 ? ' Not Found' : ''} (${detail})`, { status });
}

function summarise(text: string): string {
  try {
    const message = (JSON.parse(text) as { message?: unknown; detail?: unknown }).message ?? (JSON.parse(text) as { detail?: unknown }).detail;
    if (typeof message === 'string') return message;
  } catch {
    // not JSON: fall through
  }
  const line = text.replace(/\s+/g, ' ').trim();
  return line === '' ? 'empty body' : line.length > 80 ? `${line.slice(0, 77)}...` : line;
}

function httpErrorFrom(url: string, error: unknown, maxBytes: number): HttpError {
  if (error instanceof HttpError) return error;
  const code = (error as { code?: string }).code ?? '';
  if (error instanceof errors.RequestRetryError) {
    return new HttpError('CONTENT_API_HTTP_STATUS', url, `HTTP ${error.statusCode} after retries`, { status: error.statusCode, cause: error });
  }
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') return new HttpError('CONTENT_API_HTTP_TOO_LARGE', url, `response larger than ${maxBytes} bytes`, { cause: error });
  if (/TIMEOUT/.test(code)) return new HttpError('CONTENT_API_HTTP_TIMEOUT', url, `timed out (${code})`, { cause: error });
  const reason = code === 'ECONNREFUSED' ? 'connection refused' : code === 'ENOTFOUND' ? 'host not found' : code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' ? 'connection reset' : (error as Error).message;
  return new HttpError('CONTENT_API_HTTP_CONNECTION', url, `${reason}${code && !reason.includes(code) ? ` (${code})` : ''}`, { cause: error });
}
