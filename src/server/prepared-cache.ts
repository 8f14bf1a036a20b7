/**
 * The prepared responses `serve` answers from, bounded: least recently used entries are
 * dropped once what they hold (bodies, keys, and a fixed cost for each) passes `maxBytes`.
 * The key includes the request's Host when `--base-url` is not given, and a query's URL, which
 * a client chooses freely: without a bound, requests with distinct Host headers or queries would
 * grow memory without end.
 */
export interface PreparedResponse {
  body: Buffer;
  etag: string;
}

/** 64 MiB of prepared bodies: every record of a sizeable site, in both formats, for a few hosts. */
export const PREPARED_CACHE_BYTES = 64 * 1024 * 1024;
/**
 * What an entry costs beyond its body and key: the entry, its ETag, the map's slot. Counted so that
 * many tiny answers (`?limit=0&_=1`, `?_=2`, ...) cannot hold more memory than the bound says.
 */
const ENTRY_BYTES = 256;

const cost = (key: string, entry: PreparedResponse) => entry.body.length + key.length * 2 + ENTRY_BYTES;

export class PreparedCache {
  readonly #entries = new Map<string, PreparedResponse>();
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(maxBytes = PREPARED_CACHE_BYTES) {
    this.#maxBytes = maxBytes;
  }

  /** The entry for `key`, made by `make` when missing; a hit becomes the most recently used. */
  get(key: string, make: () => PreparedResponse): PreparedResponse {
    const hit = this.#entries.get(key);
    if (hit) {
      this.#entries.delete(key);
      this.#entries.set(key, hit);
      return hit;
    }
    const made = make();
    this.#entries.set(key, made);
    this.#bytes += cost(key, made);
    for (const [oldest, entry] of this.#entries) {
      if (this.#bytes <= this.#maxBytes || oldest === key) break;
      this.#entries.delete(oldest);
      this.#bytes -= cost(oldest, entry);
    }
    return made;
  }

  /** Entries and the bytes they are counted as (bodies, keys and each entry's own), for tests and diagnostics. */
  get size(): { entries: number; bytes: number } {
    return { entries: this.#entries.size, bytes: this.#bytes };
  }
}
