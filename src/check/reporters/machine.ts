/** Reporters for machines: JSON, JUnit XML and GitHub workflow annotations. */
import type { CheckReport } from '../check.js';

export function jsonReport(report: CheckReport): string {
  return JSON.stringify(report, null, 2);
}

const xml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** One test suite per page; one failing test case per finding, one passing case for a clean page. */
export function junitReport(report: CheckReport): string {
  const suites = report.pages.map((page) => {
    const cases = page.problems.length === 0
      ? [`    <testcase classname="${xml(page.source)}" name="page follows the Content API rules"/>`]
      : page.problems.map((p) => {
          const body = xml(`${p.severity} ${p.path} [${p.rule}] ${p.message}`);
          return `    <testcase classname="${xml(page.source)}" name="${xml(`${p.path} [${p.rule}]`)}">\n      <failure type="${xml(`${p.severity}:${p.rule}`)}" message="${xml(p.message)}">${body}</failure>\n    </testcase>`;
        });
    const failures = page.problems.length;
    return `  <testsuite name="${xml(page.source)}" tests="${Math.max(1, failures)}" failures="${failures}" errors="0">\n${cases.join('\n')}\n  </testsuite>`;
  });
  const tests = report.pages.reduce((n, page) => n + Math.max(1, page.problems.length), 0);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="content-api check" tests="${tests}" failures="${report.errors + report.warnings}">\n${suites.join('\n')}\n</testsuites>`;
}

const escapeData = (text: string) => text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
const escapeProperty = (text: string) => escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');

/** GitHub Actions workflow commands: `::error file=...,title=...::message`. */
export function githubReport(report: CheckReport): string {
  const lines: string[] = [];
  for (const page of report.pages) {
    const file = /^https?:\/\//.test(page.source) || page.source === 'stdin' ? '' : `file=${escapeProperty(page.source)},`;
    for (const p of page.problems) {
      lines.push(`::${p.severity} ${file}title=${escapeProperty(`content-api ${p.rule}`)}::${escapeData(`${p.path}: ${p.message}${file ? '' : ` (${page.source})`}`)}`);
    }
  }
  return lines.join('\n');
}
