/**
 * The default reporter: findings grouped by page, then by JSON path, and a summary line. Names
 * and messages (from pages, their files, the config file) are printed escaped (`escapeText`).
 */
import { escapeText } from '../../errors.js';
import { PLAIN_STYLES, type Styles } from '../../styles.js';
import type { Finding } from '../check.js';
import type { Reporter, RunEnd } from './reporter.js';

const byPath = (a: Finding, b: Finding) => a.path.localeCompare(b.path, 'en', { numeric: true });

export function textReporter(styles: Styles = PLAIN_STYLES): Reporter {
  const { red, yellow, green, dim, bold } = styles;
  return {
    start: () => '',
    page(page) {
      if (page.problems.length === 0) return '';
      const lines = [bold(escapeText(page.source))];
      for (const problem of [...page.problems].sort(byPath)) {
        const label = problem.severity === 'error' ? red('error  ') : yellow('warning');
        const { path, rule, message } = problem;
        lines.push(`  ${label} ${escapeText(path)}  ${dim(`[${escapeText(rule)}]`)} ${escapeText(message)}`);
      }
      return `${lines.join('\n')}\n\n`;
    },
    end({ summary, fixed, baseline }: RunEnd) {
      const lines: string[] = [];
      if (fixed.length > 0) {
        lines.push(bold(`Fixed since the baseline (${fixed.length}), removable from ${escapeText(baseline ?? '')}:`));
        for (const { page, path, rule } of fixed)
          lines.push(`  ${green('fixed  ')} ${escapeText(`${page} ${path}`)}  ${dim(`[${escapeText(rule)}]`)}`);
        lines.push('');
      }
      const { files } = summary;
      const read = files
        ? `, ${files.probed} files probed ` +
          `(${(files.bytesRead / Math.max(1, files.probed) / 1024).toFixed(1)} KiB read per file)`
        : '';
      const counts = `${summary.errors} error(s), ${summary.warnings} warning(s)`;
      const result =
        summary.errors + summary.warnings === 0
          ? green('no findings')
          : summary.errors > 0
            ? red(counts)
            : yellow(counts);
      const extra = [
        summary.baselined > 0 && `${summary.baselined} in the baseline`,
        summary.ignored > 0 && `${summary.ignored} ignored by the config`,
      ].filter(Boolean);
      const extraNote = extra.length ? dim(` (${extra.join(', ')})`) : '';
      const checked =
        summary.records === undefined
          ? `${summary.pages} page(s), ${summary.images} image(s)`
          : `${summary.records} manifest record(s)`;
      lines.push(`${checked}${read}: ${result}${extraNote}`);
      return `${lines.join('\n')}\n`;
    },
  };
}
