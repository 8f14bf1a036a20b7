/**
 * The registry of reporters: each name `check --reporter` takes, the config file's `reporter`
 * key and the library's `createReporter` all read this one map. Each reporter's module loads
 * only when it is asked for.
 */
import type { Styles } from '../../styles.js';
import type { FileSource } from '../probe.js';
import type { Reporter } from './reporter.js';

/** What a reporter may need besides the pages: each takes what it uses. */
export interface ReporterContext {
  /** Colours for the text report (default: none). */
  styles?: Styles | undefined;
  /** Where the renditions were read (`--verify-files`): the HTML report's thumbnails come from there. */
  files?: FileSource | undefined;
  /** The API base URL, for the HTML report's full-size links of root-relative URLs. */
  baseUrl?: string | undefined;
  /** A baseline is in use: SARIF marks findings new or unchanged. */
  baseline?: boolean | undefined;
}

export const REPORTERS = {
  text: async ({ styles }: ReporterContext) => (await import('./text.js')).textReporter(styles),
  json: async () => (await import('./machine.js')).jsonReporter(),
  'json-lines': async () => (await import('./machine.js')).jsonLinesReporter(),
  junit: async () => (await import('./machine.js')).junitReporter(),
  github: async () => (await import('./machine.js')).githubReporter(),
  sarif: async ({ baseline }: ReporterContext) => (await import('./sarif.js')).sarifReporter({ baseline }),
  html: async ({ files, baseUrl }: ReporterContext) => (await import('./html.js')).htmlReporter({ files, baseUrl }),
} satisfies Record<string, (context: ReporterContext) => Promise<Reporter>>;

export type ReporterName = keyof typeof REPORTERS;

/** Every reporter's name, in the order `--help` lists them. */
export const REPORTER_NAMES = Object.keys(REPORTERS) as [ReporterName, ...ReporterName[]];

/** The reporter of that name, its module loaded now. */
export function createReporter(name: ReporterName, context: ReporterContext = {}): Promise<Reporter> {
  return REPORTERS[name](context);
}
