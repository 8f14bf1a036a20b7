/**
 * Fetching from the Content API over undici. Each attempt is bounded three ways: a timeout
 * for each wait (connecting, headers, between body chunks), a deadline for the whole
 * exchange (a body trickling one byte a second still ends), and a size cap. Retries with
 * backoff for connection errors (a body broken mid-way included), 502/503/504 and 429
 * (honouring Retry-After), none for other statuses or timeouts. Every failure is an
 * `HttpError` whose one-line message names the URL and the real reason, with everything the
 * server controls escaped.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import { ContentApiError, escapeText } from '../errors.js';
import { undici } from '../packages/undici.js';
import { decodeUtf8, parseJsonText } from '../page/json-text.js';
import { HTTP_DEFAULTS } from './defaults.js';

export interface HttpOptions {
  /** Per request: connecting, then waiting for headers, then between body chunks (default 10 s). */
  timeoutMs?: number;
  /** Per attempt: from connecting to the last byte of the body (default 60 s). */
  deadlineMs?: number;
  /** Retries after the first attempt (default 3). */
  retries?: number;
  /** First backoff delay; doubles each retry (default 250 ms), capped at `maxBackoffMs`. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** Largest response body accepted (default 16 MiB). */
  maxBytes?: number;
}

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

  /** `reason` may quote what the server sent: the message escapes it, and the URL, onto one line. */
  constructor(code: HttpErrorCode, url: string, reason: string, options: { status?: number; cause?: unknown } = {}) {
    super(code, `${escapeText(url)}: ${escapeText(reason)}`, { cause: options.cause });
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

/** One complete exchange: the status, headers and the whole (bounded) body. */
export interface HttpResponse {
  url: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The Content-Type header, or ''. */
  type: string;
  body: Buffer;
}

const RETRY_STATUSES = new Set([429, 502, 503, 504]);

/**
 * A dispatcher with the timeouts of `options`; reuse it across requests, close it after.
 * Retries are this module's own (`exchange`), so that a body broken mid-way keeps its reason.
 */
export function createDispatcher(options: HttpOptions = {}): Dispatcher {
  const o = { ...HTTP_DEFAULTS, ...options };
  return new (undici().Agent)({
    headersTimeout: o.timeoutMs,
    bodyTimeout: o.timeoutMs,
    connect: { timeout: o.timeoutMs },
  });
}

/** GETs `url` and parses its JSON body (UTF-8, as JSON must be). */
export async function fetchJson(url: string, dispatcher: Dispatcher, options: HttpOptions = {}): Promise<JsonResponse> {
  const { status, headers, body, type } = await fetchWithRetries(url, dispatcher, 'application/json', options);
  const decoded = decodeUtf8(body);
  const text = decoded.ok ? decoded.text : body.toString('utf8');
  const looksHtml = /text\/html/i.test(type) || /^\s*<(!doctype|html)/i.test(text.slice(0, 1024));
  if (status < 200 || status >= 300) throw statusError(url, status, looksHtml ? 'an HTML error page' : summarise(text));
  if (looksHtml)
    throw new HttpError('CONTENT_API_HTTP_NOT_JSON', url, `got an HTML page (${type || 'no content type'}), not JSON`, {
      status,
    });
  if (!/^application\/(?:[\w.+-]+\+)?json\b/i.test(type)) {
    throw new HttpError(
      'CONTENT_API_HTTP_NOT_JSON',
      url,
      `content type is ${type || 'missing'}, not application/json`,
      { status },
    );
  }
  if (!decoded.ok) throw new HttpError('CONTENT_API_HTTP_NOT_JSON', url, decoded.reason, { status });
  const parsed = parseJsonText(text);
  if (!parsed.ok) throw new HttpError('CONTENT_API_HTTP_NOT_JSON', url, `invalid JSON (${parsed.reason})`, { status });
  return { url, status, headers, json: parsed.json, text, bytes: body.length };
}

/**
 * GETs an image file's bytes. An error status, or a body that is an HTML page or JSON
 * rather than an image, is an `HttpError`; whether the bytes decode is the caller's business.
 */
export async function fetchBytes(url: string, dispatcher: Dispatcher, options: HttpOptions = {}): Promise<Buffer> {
  const { status, body, type } = await fetchWithRetries(url, dispatcher, 'image/*', options);
  if (status < 200 || status >= 300) {
    throw statusError(
      url,
      status,
      /text\/html/i.test(type) ? 'an HTML error page' : summarise(body.toString('utf8', 0, 4096)),
    );
  }
  if (/^(text\/html|application\/(?:[\w.+-]+\+)?json)\b/i.test(type)) {
    throw new HttpError('CONTENT_API_HTTP_NOT_IMAGE', url, `content type is ${type}, not an image`, { status });
  }
  return body;
}

/**
 * GETs `url` with the retry policy of this module and returns whatever status came last
 * (a 503 after every retry is returned, not thrown). Throws an `HttpError` when no complete
 * response arrived: refused, reset, broken mid-body, timed out, past the deadline, too large.
 * `headers` are sent as given (a `range`, for a partial read); `maxBytes` bounds the body.
 */
export async function fetchWithRetries(
  url: string,
  dispatcher: Dispatcher,
  accept: string,
  options: HttpOptions = {},
  headers: Record<string, string> = {},
): Promise<HttpResponse> {
  return exchange(url, dispatcher, { accept, ...headers }, { ...HTTP_DEFAULTS, ...options }, undefined);
}

/**
 * The first `bytes` bytes of `url` at most: a Range request (`bytes=0-<bytes-1>`), and a
 * server that ignores it and sends the whole file is read no further. The status is
 * returned as it came (206, 200, 404...); the deadline, retries and one-line `HttpError`s are
 * those of `fetchWithRetries`. For reading a file's header (`check --verify-files` over HTTP).
 */
export async function fetchPrefix(
  url: string,
  dispatcher: Dispatcher,
  bytes: number,
  options: HttpOptions = {},
): Promise<HttpResponse> {
  const headers = { accept: '*/*', range: `bytes=0-${bytes - 1}` };
  return exchange(url, dispatcher, headers, { ...HTTP_DEFAULTS, ...options }, bytes);
}

type Headers = Record<string, string>;

async function exchange(
  url: string,
  dispatcher: Dispatcher,
  headers: Headers,
  o: Required<HttpOptions>,
  prefix?: number,
): Promise<HttpResponse> {
  for (let attempt = 0; ; attempt++) {
    let response: HttpResponse | undefined;
    let failure: HttpError | undefined;
    try {
      response = await attempt1(url, dispatcher, headers, o, prefix);
    } catch (error) {
      failure = error as HttpError;
    }
    const retryable = response ? RETRY_STATUSES.has(response.status) : failure!.code === 'CONTENT_API_HTTP_CONNECTION';
    if (!retryable || attempt >= o.retries) {
      if (response) return response;
      throw failure!;
    }
    await sleep(backoff(attempt, response, o));
  }
}

/** Exponential backoff from `backoffMs`, or the server's Retry-After (seconds or a date), capped. */
function backoff(attempt: number, response: HttpResponse | undefined, o: Required<HttpOptions>): number {
  const header = response?.headers['retry-after'];
  const value = Array.isArray(header) ? header[0] : header;
  if (value !== undefined) {
    const ms = /^\d+$/.test(value.trim()) ? Number(value) * 1000 : Date.parse(value) - Date.now();
    if (Number.isFinite(ms)) return Math.min(Math.max(ms, 0), o.maxBackoffMs);
  }
  return Math.min(o.backoffMs * 2 ** attempt, o.maxBackoffMs);
}

/** One request and its whole body (or its first `prefix` bytes, the rest left unread). */
async function attempt1(
  url: string,
  dispatcher: Dispatcher,
  headers: Headers,
  o: Required<HttpOptions>,
  prefix?: number,
): Promise<HttpResponse> {
  const signal = AbortSignal.timeout(o.deadlineMs);
  let received = 0;
  let declared: number | undefined;
  let status: number | undefined;
  try {
    const response = await undici().request(url, { method: 'GET', headers, dispatcher, signal });
    status = response.statusCode;
    const length = Number(response.headers['content-length']);
    declared = Number.isSafeInteger(length) && length >= 0 ? length : undefined;
    if (prefix === undefined && declared !== undefined && declared > o.maxBytes) {
      response.body.destroy();
      throw tooLarge(url, o.maxBytes, response.statusCode);
    }
    const chunks: Buffer[] = [];
    for await (const chunk of response.body) {
      if (prefix !== undefined && received + (chunk as Buffer).length >= prefix) {
        chunks.push((chunk as Buffer).subarray(0, prefix - received));
        received = prefix;
        response.body.destroy();
        break;
      }
      received += (chunk as Buffer).length;
      if (received > o.maxBytes) {
        response.body.destroy();
        throw tooLarge(url, o.maxBytes, response.statusCode);
      }
      chunks.push(chunk as Buffer);
    }
    const type = String([response.headers['content-type']].flat()[0] ?? '');
    return { url, status: response.statusCode, headers: response.headers, type, body: Buffer.concat(chunks) };
  } catch (error) {
    throw httpErrorFrom(url, error, {
      status,
      received,
      declared,
      deadlineMs: o.deadlineMs,
      timeoutMs: o.timeoutMs,
      signal,
    });
  }
}

function tooLarge(url: string, maxBytes: number, status: number): HttpError {
  return new HttpError('CONTENT_API_HTTP_TOO_LARGE', url, `response larger than ${maxBytes} bytes`, { status });
}

function statusError(url: string, status: number, detail: string): HttpError {
  return new HttpError(
    'CONTENT_API_HTTP_STATUS',
    url,
    `HTTP ${status}${status === 404 ? ' Not Found' : ''} (${detail})`,
    { status },
  );
}

/** A body quoted in an error: its `message` or `detail` when JSON, else its text on one line, cut at 80 characters. */
function summarise(text: string): string {
  let message: unknown;
  try {
    const json = JSON.parse(text) as { message?: unknown; detail?: unknown } | null;
    message = json?.message ?? json?.detail;
  } catch {
    // not JSON: fall through
  }
  const line = (typeof message === 'string' ? message : text.slice(0, 4096)).replace(/\s+/g, ' ').trim();
  return line === '' ? 'empty body' : line.length > 80 ? `${line.slice(0, 77)}...` : line;
}

interface Progress {
  /** Set once the headers arrived: a failure after that broke the body. */
  status: number | undefined;
  received: number;
  declared: number | undefined;
  deadlineMs: number;
  /** `--timeout`: each wait (connecting, the headers, any silence in the body). */
  timeoutMs: number;
  signal: AbortSignal;
}

const CONNECTION_REASONS = new Map([
  ['ECONNREFUSED', 'connection refused'],
  ['ENOTFOUND', 'host not found'],
  ['ECONNRESET', 'connection reset'],
  ['UND_ERR_SOCKET', 'connection reset'],
]);

/**
 * undici's timeouts, said in words (its codes say nothing to a reader): each is one wait of
 * `--timeout`. The one place undici's error codes become reasons, with `CONNECTION_REASONS`.
 */
function timeoutReason(code: string, { timeoutMs, received }: Progress): string | undefined {
  const within = `${timeoutMs / 1000} s (--timeout)`;
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return `no connection within ${within}`;
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return `no response headers within ${within}`;
  if (code === 'UND_ERR_BODY_TIMEOUT') return `the body stopped for ${within} after ${received} bytes`;
  return undefined;
}

function httpErrorFrom(url: string, error: unknown, progress: Progress): HttpError {
  if (error instanceof HttpError) return error;
  const code = (error as { code?: string }).code ?? '';
  const { received, declared } = progress;
  if (progress.signal.aborted) {
    const got = received > 0 ? `, ${received}${declared === undefined ? '' : ` of ${declared}`} bytes received` : '';
    const reason = `timed out: no complete response within the ${progress.deadlineMs} ms deadline${got}`;
    return new HttpError('CONTENT_API_HTTP_TIMEOUT', url, reason, { status: progress.status, cause: error });
  }
  const waited = timeoutReason(code, progress);
  if (waited) return new HttpError('CONTENT_API_HTTP_TIMEOUT', url, `timed out: ${waited}`, { cause: error });
  if (/TIMEOUT/.test(code))
    return new HttpError('CONTENT_API_HTTP_TIMEOUT', url, `timed out (${code})`, { cause: error });
  const message = (error as Error).message ?? String(error);
  const reason = CONNECTION_REASONS.get(code) ?? message;
  // undici's own codes (UND_ERR_*) are not a reader's: the reason says it in words.
  const detail = `${reason}${code && !code.startsWith('UND_ERR') && !reason.includes(code) ? ` (${code})` : ''}`;
  const midBody = progress.status !== undefined;
  const promised = declared === undefined ? '' : ` of the ${declared} bytes its Content-Length promised`;
  const where = midBody ? `HTTP ${progress.status} body broken after ${received}${promised}: ` : '';
  return new HttpError('CONTENT_API_HTTP_CONNECTION', url, `${where}${detail}`, { cause: error });
}
