/**
 * The HTTP client's bounds by default, apart from the client itself so that the CLI's `--help`
 * can show them without loading undici.
 */

export const HTTP_DEFAULTS = {
  timeoutMs: 10_000,
  deadlineMs: 60_000,
  retries: 3,
  backoffMs: 250,
  maxBackoffMs: 10_000,
  /** A page, or any other response: 16 MiB. */
  maxBytes: 16 * 1024 * 1024,
} as const;

/**
 * `render --page`'s bound on the page and on each rendition it downloads (64 MiB): a rendition
 * of a large artwork, downloaded when no original is at hand, is far larger than any page.
 */
export const RENDER_PAGE_MAX_BYTES = 64 * 1024 * 1024;
