/** Reporters for machines: JSON, JSON lines, JUnit XML and GitHub workflow annotations. */
import { escapeText } from '../../errors.js';
import { isUrlSource } from '../baseline.js';
import type { CheckedPage } from '../check.js';
import { locator } from '../locate.js';
import type { Reporter, RunEnd } from './reporter.js';

const pageRecord = (page: CheckedPage) => ({
  source: page.source,
  ...(page.record !== undefined && { record: page.record }),
  ...(page.baseUrl && { baseUrl: page.baseUrl }),
  problems: page.problems,
  baselined: page.baselined,
  images: page.images,
});

const endRecord = ({ summary, fixed }: RunEnd) => ({ ...summary, fixed });

/** The document's keys after `pages` (whose length is the page count). */
const documentTail = (end: RunEnd) => {
  const { pages: _count, ...rest } = endRecord(end);
  return rest;
};

/** One JSON document, `{ pages: [...], files, errors, warnings, ... }`, written a page at a time. */
export function jsonReporter(): Reporter {
  let first = true;
  return {
    start: () => '{\n  "pages": [',
    page(page) {
      const text = `${first ? '\n' : ',\n'}    ${JSON.stringify(pageRecord(page))}`;
      first = false;
      return text;
    },
    end(end) {
      const tail = JSON.stringify(documentTail(end), null, 2).slice(1); // the summary's keys, after "pages"
      return `${first ? '' : '\n  '}],${tail}\n`;
    },
  };
}

/** One JSON object per line: `{"type":"page",...}` per page, then `{"type":"summary",...}`. */
export function jsonLinesReporter(): Reporter {
  return {
    start: () => '',
    page: (page) => `${JSON.stringify({ type: 'page', ...pageRecord(page) })}\n`,
    end: (end) => `${JSON.stringify({ type: 'summary', ...endRecord(end) })}\n`,
  };
}

/**
 * Text as XML 1.0 allows it: characters XML forbids (C0 controls but tab and line breaks, lone
 * surrogates, U+FFFE and U+FFFF) written as visible `\u....` escapes, markup characters as
 * entities; in attributes, tabs and line breaks as character references so they survive.
 */
export function xmlText(text: string, attribute = false): string {
  const escaped = text
    .replace(
      /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu,
      (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`,
    )
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
  return attribute
    ? escaped.replace(/"/g, '&quot;').replace(/\t/g, '&#9;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;')
    : escaped;
}

const attr = (text: string) => xmlText(text, true);

/**
 * One test suite per page; a failing test case per finding, a skipped one per finding the
 * baseline holds, one passing case for a clean page. Streamed, so the root element carries
 * no totals (each suite has its own).
 */
export function junitReporter(): Reporter {
  return {
    start: () => '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="content-api check">\n',
    page(page) {
      const suite = attr(page.source);
      const cases = page.problems.map((p) => {
        const body = xmlText(`${p.severity} ${p.path} [${p.rule}] ${p.message}`);
        return (
          `    <testcase classname="${suite}" name="${attr(`${p.path} [${p.rule}]`)}">\n` +
          `      <failure type="${attr(`${p.severity}:${p.rule}`)}" message="${attr(p.message)}">${body}</failure>\n` +
          '    </testcase>'
        );
      });
      for (const p of page.baselined) {
        cases.push(
          `    <testcase classname="${suite}" name="${attr(`${p.path} [${p.rule}]`)}">\n` +
            `      <skipped message="${attr(`in the baseline: ${p.message}`)}"/>\n` +
            '    </testcase>',
        );
      }
      if (cases.length === 0)
        cases.push(`    <testcase classname="${suite}" name="page follows the Content API rules"/>`);
      return (
        `  <testsuite name="${suite}" tests="${cases.length}" failures="${page.problems.length}" errors="0" ` +
        `skipped="${page.baselined.length}">\n${cases.join('\n')}\n  </testsuite>\n`
      );
    },
    end: () => '</testsuites>\n',
  };
}

/**
 * A workflow command's message as GitHub documents it (`%`, CR and LF as `%25`, `%0D`, `%0A`, so
 * no text starts a line of its own), then every other unprintable character escaped
 * (`escapeText`: no ESC sequence reaches the log).
 */
const escapeData = (text: string) => escapeText(text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A'));
/** A workflow command's property (`file=`, `title=`): its data, and `:` and `,` as `%3A` and `%2C`. */
const escapeProperty = (text: string) => escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');

/** Page files (not URLs or standard input) can be pointed at. */
export const isFileSource = (source: string) => !isUrlSource(source) && source !== 'stdin';

/**
 * GitHub Actions workflow commands: `::error file=...,line=...,col=...,title=...::message`,
 * the line and column those of the finding's JSON path in the page file.
 */
export function githubReporter(): Reporter {
  return {
    needsText: true,
    start: () => '',
    page(page) {
      if (page.problems.length === 0) return '';
      const file = isFileSource(page.source);
      const paths = page.problems.map((p) => p.path);
      const locate = file && page.text !== undefined ? locator(page.text, paths) : null;
      return page.problems
        .map((p) => {
          const at = locate?.(p.path);
          const where = file
            ? `file=${escapeProperty(page.source)},${at ? `line=${at.line},col=${at.column},` : ''}`
            : '';
          const title = escapeProperty(`content-api ${p.rule}`);
          const message = escapeData(`${p.path}: ${p.message}${file ? '' : ` (${page.source})`}`);
          return `::${p.severity} ${where}title=${title}::${message}\n`;
        })
        .join('');
    },
    end: ({ fixed, baseline }) => {
      if (fixed.length === 0) return '';
      const message = `${fixed.length} finding(s) in ${baseline} are fixed: update it with --update-baseline`;
      return `::notice title=content-api baseline::${escapeData(message)}\n`;
    },
  };
}
