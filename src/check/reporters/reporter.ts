/**
 * A reporter turns checked pages into text as they come: a head, one piece per page, and a
 * tail once the counts are known. The CLI writes each piece out at once, so only the HTML
 * report (which bounds itself) holds anything across pages.
 */
import type { BaselineEntry } from '../baseline.js';
import type { CheckedPage, CheckSummary } from '../check.js';

export interface RunEnd {
  summary: CheckSummary;
  /** Baseline findings of checked pages that no finding matched (with `--baseline`). */
  fixed: BaselineEntry[];
  /** The baseline file in use, if any. */
  baseline?: string | undefined;
}

export interface Reporter {
  /** Reporters that point at lines need each page's text. */
  readonly needsText?: boolean;
  start(): string;
  page(page: CheckedPage): string;
  end(end: RunEnd): string | Promise<string>;
}
