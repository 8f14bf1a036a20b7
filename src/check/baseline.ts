/**
 * A baseline: the findings a team accepts for now, so that `check` fails only on new ones.
 * A finding is known by its page, rule and JSON path (never its message, which may name a
 * temporary folder or a port), so the file is stable across runs and machines: page files
 * are named relative to the baseline file, fetched pages by their URL path.
 */
import path from 'node:path';
import { z } from 'zod';
import { ContentApiError } from '../errors.js';
import { readFileWithin } from '../fs/read-within.js';
import { parseJsonAs } from '../json.js';

export interface BaselineEntry {
  page: string;
  rule: string;
  path: string;
  /** How many findings share page, rule and path (1 when absent). */
  count?: number;
}

const baselineSchema = z.object({
  version: z.literal(1),
  findings: z.array(
    z.object({ page: z.string(), rule: z.string(), path: z.string(), count: z.int().min(1).optional() }),
  ),
});

/** The largest baseline read. */
const MAX_BASELINE_BYTES = 256 * 1024 * 1024;

export class BaselineError extends ContentApiError {
  override name = 'BaselineError';
  constructor(file: string, reason: string) {
    super('CONTENT_API_INVALID_BASELINE', `--baseline ${file}: ${reason}`);
  }
}

/** A URL of any scheme: a fetched page (`https://`), a record in a bucket (`s3://`); else a file, or `stdin`. */
export const isUrlSource = (source: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(source);

/** How a page is named in a baseline kept at `baselineFile`. */
export function pageKey(source: string, baselineFile: string): string {
  if (source === 'stdin') return source;
  if (/^https?:\/\//i.test(source)) {
    const url = new URL(source);
    return `${url.pathname}${url.search}`;
  }
  // A record in a bucket (the archive checked whole): the bucket and prefix are what it is.
  if (isUrlSource(source)) return source;
  return path
    .relative(path.dirname(path.resolve(baselineFile)), path.resolve(source))
    .split(path.sep)
    .join('/');
}

const keyOf = (page: string, rule: string, at: string) => JSON.stringify([page, rule, at]);

/** The findings of a baseline file, each consumed once by a matching finding. */
export class Baseline {
  readonly file: string;
  readonly #left = new Map<string, number>();
  readonly #checkedPages = new Set<string>();
  matched = 0;

  constructor(file: string, entries: BaselineEntry[]) {
    this.file = file;
    for (const entry of entries) {
      const key = keyOf(entry.page, entry.rule, entry.path);
      this.#left.set(key, (this.#left.get(key) ?? 0) + (entry.count ?? 1));
    }
  }

  /**
   * The baseline in `file`. A file that is not there is an error, unless `missingIsEmpty` (a run that
   * writes the baseline: the one a config names is not there before the first).
   */
  static async load(file: string, { missingIsEmpty = false } = {}): Promise<Baseline> {
    // Only a regular file is read: a FIFO or /dev/zero is refused before a byte is read.
    const read = await readFileWithin(file, MAX_BASELINE_BYTES, 'the cap on a baseline');
    if (!read.ok && read.missing && missingIsEmpty) return new Baseline(file, []);
    if (!read.ok)
      throw new BaselineError(file, read.missing ? 'no such file (write one with --update-baseline)' : read.reason);
    const parsed = parseJsonAs(baselineSchema, read.bytes);
    if (!parsed.ok) throw new BaselineError(file, parsed.problems.join('; '));
    return new Baseline(file, parsed.data.findings);
  }

  /** The page was checked in this run: its baseline findings that nothing matched are fixed. */
  checked(source: string): string {
    const page = pageKey(source, this.file);
    this.#checkedPages.add(page);
    return page;
  }

  /** True (and the entry used up) when the baseline holds this finding. */
  take(page: string, rule: string, at: string): boolean {
    const key = keyOf(page, rule, at);
    const left = this.#left.get(key) ?? 0;
    if (left === 0) return false;
    if (left === 1) this.#left.delete(key);
    else this.#left.set(key, left - 1);
    this.matched++;
    return true;
  }

  /** Baseline findings of checked pages that no finding matched: fixed, so removable. */
  fixed(): BaselineEntry[] {
    const fixed: BaselineEntry[] = [];
    for (const [key, count] of this.#left) {
      const [page, rule, at] = JSON.parse(key) as [string, string, string];
      if (this.#checkedPages.has(page)) fixed.push({ page, rule, path: at, ...(count > 1 && { count }) });
    }
    return fixed;
  }
}

/** Collects findings for `--update-baseline`. */
export class BaselineRecorder {
  readonly file: string;
  readonly #counts = new Map<string, number>();

  constructor(file: string) {
    this.file = file;
  }

  add(source: string, rule: string, at: string): void {
    const key = keyOf(pageKey(source, this.file), rule, at);
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
  }

  /** Findings recorded. */
  get size(): number {
    let total = 0;
    for (const count of this.#counts.values()) total += count;
    return total;
  }

  /** The baseline file's text: entries sorted, so that it diffs well in review. */
  text(): string {
    const findings = [...this.#counts]
      .map(([key, count]) => {
        const [page, rule, at] = JSON.parse(key) as [string, string, string];
        return { page, rule, path: at, ...(count > 1 && { count }) };
      })
      .sort(
        (a, b) =>
          a.page.localeCompare(b.page, 'en') ||
          a.path.localeCompare(b.path, 'en', { numeric: true }) ||
          a.rule.localeCompare(b.rule, 'en'),
      );
    return `${JSON.stringify({ version: 1, findings }, null, 2)}\n`;
  }
}
