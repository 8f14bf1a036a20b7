/**
 * SARIF 2.1.0 (OASIS), for GitHub code scanning and other code-review tools: one run, every
 * rule in the driver's rule list, one result per finding with the page file and the line of
 * its JSON path (a logical location holds the path itself). Written a result at a time.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isUrlSource } from '../baseline.js';
import type { Finding } from '../check.js';
import { locator } from '../locate.js';
import { CHECK_RULES } from '../rules.js';
import { isFileSource } from './machine.js';
import type { Reporter } from './reporter.js';

const { version } = createRequire(import.meta.url)('../../../package.json') as { version: string };

const RULES = Object.entries(CHECK_RULES).map(([id, description]) => ({
  id,
  shortDescription: { text: description },
  defaultConfiguration: {
    level: id === 'unknown-key' || id === 'unknown-block-type' || id === 'not-shown-type' ? 'warning' : 'error',
  },
}));
const RULE_INDEX = new Map(RULES.map((rule, i) => [rule.id, i]));

/**
 * Where a page is: a relative file as a URI reference against `%SRCROOT%` (the repository in
 * CI, as code scanning expects), an absolute one as a file: URL, a fetched page (or a record in
 * a bucket) as its URL.
 */
function artifactLocation(source: string): { uri: string; uriBaseId?: string } {
  if (!isFileSource(source)) return { uri: source };
  if (path.isAbsolute(source)) return { uri: pathToFileURL(source).href };
  return { uri: encodeURI(path.normalize(source).split(path.sep).join('/')), uriBaseId: '%SRCROOT%' };
}

export interface SarifOptions {
  /** Findings are new against a baseline (SARIF `baselineState`). */
  baseline?: boolean;
}

export function sarifReporter(options: SarifOptions = {}): Reporter {
  let first = true;
  const result = (
    page: { source: string },
    finding: Finding,
    locate: ReturnType<typeof locator>,
    state: 'new' | 'unchanged' | null,
  ) => {
    const position = locate?.(finding.path);
    const physical =
      isFileSource(page.source) || isUrlSource(page.source)
        ? {
            physicalLocation: {
              artifactLocation: artifactLocation(page.source),
              ...(position && { region: { startLine: position.line, startColumn: position.column } }),
            },
          }
        : {};
    return {
      ruleId: finding.rule,
      ruleIndex: RULE_INDEX.get(finding.rule) ?? -1,
      level: finding.severity === 'error' ? 'error' : 'warning',
      message: { text: `${finding.path}: ${finding.message}` },
      locations: [{ ...physical, logicalLocations: [{ fullyQualifiedName: finding.path, kind: 'member' }] }],
      ...(state && { baselineState: state }),
      ...(state === 'unchanged' && {
        suppressions: [{ kind: 'external', justification: 'in the content-api baseline' }],
      }),
    };
  };
  return {
    needsText: true,
    start() {
      const driver = { name: 'content-api', version, semanticVersion: version, rules: RULES };
      const head = JSON.stringify({ $schema: 'https://json.schemastore.org/sarif-2.1.0.json', version: '2.1.0' }).slice(
        0,
        -1,
      );
      return `${head},"runs":[{"tool":${JSON.stringify({ driver })},"columnKind":"utf16CodeUnits","results":[`;
    },
    page(page) {
      if (page.problems.length + page.baselined.length === 0) return '';
      const paths = [...page.problems, ...page.baselined].map((f) => f.path);
      const locate = page.text !== undefined && isFileSource(page.source) ? locator(page.text, paths) : null;
      const results = [
        ...page.problems.map((f) => result(page, f, locate, options.baseline ? 'new' : null)),
        ...page.baselined.map((f) => result(page, f, locate, 'unchanged')),
      ];
      const text = `${first ? '\n' : ',\n'}${results.map((r) => JSON.stringify(r)).join(',\n')}`;
      first = false;
      return text;
    },
    end({ summary }) {
      const invocation = { executionSuccessful: true, properties: { ...summary } };
      return `\n],"invocations":[${JSON.stringify(invocation)}]}]}\n`;
    },
  };
}
