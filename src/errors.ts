/**
 * Every failure the library reports is a `ContentApiError` with a stable `code`.
 * The message is one line that names the thing (file, URL, JSON path) and the reason,
 * so the CLI can print it as is. Anything else that escapes is a bug and gets a stack.
 */
export class ContentApiError extends Error {
  override name = 'ContentApiError';
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** A flag or option value the command cannot work with (exit code 2). */
export class InvalidArgumentError extends ContentApiError {
  override name = 'InvalidArgumentError';
  constructor(message: string) {
    super('CONTENT_API_INVALID_ARGUMENT', message);
  }
}

/** The output folder cannot be created or written (exit code 2). */
export class OutputNotWritableError extends ContentApiError {
  override name = 'OutputNotWritableError';
  constructor(folder: string, reason: string, options?: { cause?: unknown }) {
    super('CONTENT_API_OUTPUT_NOT_WRITABLE', `${folder}: output folder is not writable (${reason})`, options);
  }
}

/** Why one original could not be rendered; the batch goes on without it. */
export type SourceErrorCode =
  | 'CONTENT_API_UNREADABLE'
  | 'CONTENT_API_EMPTY_FILE'
  | 'CONTENT_API_UNSUPPORTED_FORMAT'
  | 'CONTENT_API_CORRUPT_IMAGE'
  | 'CONTENT_API_PIXEL_LIMIT'
  | 'CONTENT_API_METADATA_LIMIT'
  | 'CONTENT_API_NAME_COLLISION'
  | 'CONTENT_API_RENDER_FAILED';

/** One original failed: unreadable, empty, unsupported, corrupt, too large, or colliding. */
export class SourceError extends ContentApiError {
  override name = 'SourceError';
  readonly source: string;
  readonly reason: string;

  constructor(code: SourceErrorCode, source: string, reason: string, options?: { cause?: unknown }) {
    super(code, `${source}: ${reason}`, options);
    this.source = source;
    this.reason = reason;
  }
}

/** What libvips' messages mean for an image: the first pattern that matches wins. */
const SHARP_ERRORS: ReadonlyArray<[RegExp, SourceErrorCode, string?]> = [
  [/input file is missing/i, 'CONTENT_API_UNREADABLE', 'no such file'],
  [/unsupported image format/i, 'CONTENT_API_UNSUPPORTED_FORMAT', 'not an image in a supported format'],
  [/pixel limit/i, 'CONTENT_API_PIXEL_LIMIT', 'exceeds the pixel limit (see --pixel-limit)'],
  [/.*/, 'CONTENT_API_CORRUPT_IMAGE'],
];

/** A sharp/libvips error as a one-line SourceError naming the image (a SourceError passes through). */
export function sourceErrorFromSharp(source: string, error: unknown): SourceError {
  if (error instanceof SourceError) return error;
  const message = (error instanceof Error ? error.message : String(error)).split('\n')[0]!.trim();
  const [, code, reason] = SHARP_ERRORS.find(([pattern]) => pattern.test(message))!;
  return new SourceError(code, source, reason ?? `cannot decode image (${message})`, { cause: error });
}

/** The manifest in the output folder exists but cannot be read or locked. */
export class ManifestError extends ContentApiError {
  override name = 'ManifestError';
  constructor(file: string, reason: string, options?: { cause?: unknown }) {
    super('CONTENT_API_MANIFEST', `${file}: ${reason}`, options);
  }
}

/** First line of any error's message, for one-line reports. */
export function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return (text.split('\n').find((line) => line.trim() !== '') ?? text).trim();
}

/**
 * Why an operation failed, for a line that names the thing itself: a content-api error's message
 * (which names the object and says the reason; never its code, which says neither), a system
 * error's code (`ENOSPC`), else the first line of the message; escaped.
 */
export function failureReason(error: unknown): string {
  if (error instanceof ContentApiError) return escapeText(oneLine(error));
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return escapeText(typeof code === 'string' && code !== '' ? code : oneLine(error));
}

/**
 * Characters that must never reach a terminal raw from text someone else controls: C0 and C1
 * controls (line breaks, ESC sequences), DEL, the Unicode line and paragraph separators, the
 * bidirectional overrides and isolates (which reorder what a reader sees), and the byte-order
 * mark (invisible: a message quoting it would show a reader nothing).
 */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/g;

/**
 * The first `most` of `items`, and how many more (`a, b, c and 397 more`): a message that names
 * the members of a group must not grow with the group.
 */
export function someOf(items: readonly string[], most = 3, separator = ', '): string {
  if (items.length <= most) return items.join(separator);
  return `${items.slice(0, most).join(separator)} and ${items.length - most} more`;
}

/** `text` on one line with every unprintable character escaped as in JSON (`\n`, `\u001b`). */
export function escapeText(text: string): string {
  return text.replace(UNPRINTABLE, (c) => {
    const json = JSON.stringify(c).slice(1, -1);
    return json.length > 1 ? json : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

/**
 * `error`'s whole message on one line, control characters escaped as in JSON (JSON.parse quotes
 * the text it failed on).
 */
export function escapedMessage(error: unknown): string {
  return escapeText(error instanceof Error ? error.message : String(error));
}

/**
 * A store of media (a bucket, or a folder through the storage boundary) cannot be used: no
 * credentials, access denied, no such bucket, endpoint unreachable, throttled after retries.
 * Before any work it is exit code 2; for one object, that object fails alone.
 */
export class StorageError extends ContentApiError {
  override name = 'StorageError';
  /** What went wrong, for callers that decide by it (never by the message, which names the object). */
  readonly kind: StorageErrorKind;
  constructor(message: string, kind: StorageErrorKind = 'other', options?: { cause?: unknown }) {
    super('CONTENT_API_STORAGE', message, options);
    this.kind = kind;
  }
}

/** The store as a whole cannot be used (`credentials` ... `no-bucket`), or only this object (`missing`, `other`). */
export type StorageErrorKind =
  | 'credentials'
  | 'denied'
  | 'no-bucket'
  | 'unreachable'
  | 'throttled'
  | 'server'
  | 'missing'
  | 'invalid-key'
  | 'other';

/** Kinds that mean the whole store cannot be used, not one object. */
export const STORE_WIDE: ReadonlySet<StorageErrorKind> = new Set(['credentials', 'denied', 'no-bucket', 'unreachable']);

/**
 * The queue (Redis) cannot be used: unreachable, refused, not content-api's, or not the batch
 * asked for. Exit code 2.
 */
export class QueueError extends ContentApiError {
  override name = 'QueueError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('CONTENT_API_QUEUE', message, options);
  }
}
