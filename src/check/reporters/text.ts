/** The default reporter: findings grouped by page, then by JSON path. */
import type { CheckReport } from '../check.js';

export interface TextStyles {
  red(text: string): string;
  yellow(text: string): string;
  green(text: string): string;
  dim(text: string): string;
  bold(text: string): string;
}

const plain: TextStyles = { red: (t) => t, yellow: (t) => t, green: (t) => t, dim: (t) => t, bold: (t) => t };

export function textReport(report: CheckReport, styles: TextStyles = plain): string {
  const { red, yellow, green, dim, bold } = styles;
  const lines: string[] = [];
  for (const page of report.pages) {
    if (page.problems.length === 0) continue;
    lines.push(bold(page.source));
    const sorted = [...page.problems].sort((a, b) => a.path.localeCompare(b.path, 'en', { numeric: true }));
    for (const problem of sorted) {
      const label = problem.severity === 'error' ? red('error  ') : yellow('warning');
      lines.push(`  ${label} ${problem.path}  ${dim(`[${problem.rule}]`)} ${problem.message}`);
    }
    lines.push('');
  }
  const images = report.pages.reduce((sum, page) => sum + page.images.length, 0);
  const files = report.files ? `, ${report.files.probed} files probed (${(report.files.bytesRead / Math.max(1, report.files.probed) / 1024).toFixed(1)} KiB read per file)` : '';
  const counts = `${report.errors} error(s), ${report.warnings} warning(s)`;
  lines.push(`${report.pages.length} page(s), ${images} image(s)${files}: ${report.errors + report.warnings === 0 ? green('no findings') : report.errors > 0 ? red(counts) : yellow(counts)}`);
  return lines.join('\n');
}
