/**
 * `content-api inspect <target>`: a readable report of one page (or `--json`), exit 1 when
 * problems were found.
 */

import type { FileSource } from '../../../check/probe.js';
import { openFileSource } from '../../../check/probe.js';
import type { SiteQuery } from '../../../client/listing.js';
import { escapeText } from '../../../errors.js';
import { type InspectTargetOptions, inspectSite, inspectTarget, NotAPageError } from '../../../inspect/inspect.js';
import type { InspectReport } from '../../../inspect/report.js';
import { shown } from '../../../page/text.js';
import { RENDITION_KEYS } from '../../../renditions/rules.js';
import type { S3Options } from '../../../storage/s3-url.js';
import { printData, printMessage, stderrStyles, stylesFor } from '../../output.js';
import { ProgressLine } from '../../progress.js';

export interface InspectCommandOptions extends Omit<InspectTargetOptions, 'files'> {
  json: boolean;
  /** `--verify-files`: a folder, `s3://bucket/prefix/` or a base URL. */
  verifyFiles?: string | undefined;
  mediaPrefix?: string | undefined;
  s3?: S3Options | undefined;
}

/** One page (a target), or every page of a site (`--all-pages`: its listing's filters). */
export async function runInspect(target: string | SiteQuery, options: InspectCommandOptions): Promise<number> {
  let report: InspectReport;
  const { verifyFiles, mediaPrefix, s3, timeoutMs, deadlineMs } = options;
  const files = verifyFiles ? await openFileSource(verifyFiles, { mediaPrefix, timeoutMs, deadlineMs, s3 }) : undefined;
  if (typeof target !== 'string') {
    try {
      return await inspectWholeSite(target, { ...options, files });
    } finally {
      if (files) await files.close();
    }
  }
  try {
    report = await inspectTarget(target, { ...options, files });
  } catch (error) {
    if (!(error instanceof NotAPageError)) throw error;
    // Read, but not a page: one line, and exit 1 as for any invalid page (not 2, could not run).
    printMessage(`${stderrStyles().red('error')}: ${error.message}`);
    return 1;
  } finally {
    if (files) await files.close();
  }
  printData(options.json ? JSON.stringify(report, null, 2) : formatReport(report));
  return report.errors > 0 ? 1 : 0;
}

/**
 * Every page of the site, a report each as it comes: text one after another, or `--json` as one
 * JSON array written an element at a time; a progress line on a terminal, a count at the end.
 */
async function inspectWholeSite(site: SiteQuery, options: InspectCommandOptions & { files?: FileSource }) {
  const progress = new ProgressLine();
  const { red } = stderrStyles();
  let total = 0;
  let done = 0;
  let withErrors = 0;
  let failed = 0;
  // The array opens with its first report: a listing that cannot be read (exit 2) leaves nothing on stdout.
  for await (const result of inspectSite(site, { ...options, onTotal: (count) => (total = count) })) {
    progress.clear();
    if ('failure' in result) {
      failed++;
      printMessage(`${red('error')}: ${result.failure}`);
    } else {
      if (result.errors > 0) withErrors++;
      const first = done - failed === 0;
      if (options.json) printData(`${first ? '[' : ','}${JSON.stringify(result, null, 2)}`);
      else printData(`${first ? '' : '\n'}${formatReport(result)}`);
    }
    done++;
    progress.update(done, Math.max(total, done), 'failure' in result ? result.source : result.url);
  }
  progress.clear();
  if (options.json) printData(done - failed === 0 ? '[]' : ']');
  const unread = failed > 0 ? `, ${failed} could not be inspected` : '';
  printMessage(`${done} page(s) inspected: ${withErrors} with errors${unread}`);
  return withErrors > 0 || failed > 0 ? 1 : 0;
}

export function formatReport(report: InspectReport): string {
  const { bold, dim, red, yellow, green } = stylesFor(process.stdout);
  const { page, stage } = report;
  const lines: string[] = [];
  // Everything shown comes from the page, remote text: escaped before it reaches the terminal.
  const show = (value: unknown) => escapeText(shown(value));
  const field = (name: string, value: unknown) =>
    lines.push(`  ${dim(name.padEnd(11))} ${value === null || value === undefined ? dim('-') : show(value)}`);
  lines.push(bold(`Page ${show(page.id)}: ${show(page.title)}`), dim(`  ${escapeText(report.url)}`));
  field('type', page.type);
  field('slug', page.slug);
  field('date', page.date);
  field('published', page.published ? `yes, ${show(page.firstPublishedAt)}` : 'no');
  field('html', page.htmlUrl);
  field('detail', page.detailUrl);
  field(
    'parent',
    page.parent ? `${show(page.parent.id)} ${show(page.parent.title)} (${show(page.parent.type)})` : null,
  );
  if (stage) {
    lines.push('', bold('Stage'));
    field('header', stage.header);
    field('title', stage.title);
    field('subtitle', stage.subtitle);
  }
  lines.push('', bold(`Blocks (${report.blocks.length})`));
  for (const block of report.blocks)
    lines.push(`  ${String(block.index).padStart(2)}  ${block.type.padEnd(22)} ${dim(block.id)}  ${block.summary}`);
  lines.push('', bold(`Images (${report.images.length})`));
  lines.push(
    dim(
      `  ${'xs'.padEnd(10)}${'sm'.padEnd(10)}${'md'.padEnd(10)}${'lg'.padEnd(11)}${'xl'.padEnd(11)}` +
        'srcset   names  where',
    ),
  );
  for (const image of report.images) {
    const sizes = RENDITION_KEYS.map((key, i) => (image.sizes[key] ?? '-').padEnd(i < 3 ? 10 : 11)).join('');
    const srcset = image.srcset === 'ok' ? green('ok') : image.srcset === 'absent' ? dim('absent') : red(image.srcset);
    const naming = image.naming === 'ok' ? green('ok') : red('wrong');
    const srcsetWidth = image.srcset === 'absent' ? 6 : image.srcset.length;
    const srcsetCell = `${srcset.padEnd(srcsetWidth)}${' '.repeat(9 - image.srcset.length)}`;
    const namingCell = `${naming}${' '.repeat(7 - image.naming.length)}`;
    lines.push(`  ${sizes}${srcsetCell}${namingCell}${image.path}`);
  }
  lines.push('', bold(`Linked resources (${report.links.length})`));
  for (const link of report.links)
    lines.push(`  ${link.kind.padEnd(14)} ${link.title.padEnd(30)} ${escapeText(link.url)}`);
  lines.push(
    '',
    bold(
      report.problems.length === 0
        ? green('No problems found')
        : `Problems: ${report.errors} error(s), ${report.warnings} warning(s)`,
    ),
  );
  for (const problem of report.problems) {
    const label = problem.severity === 'error' ? red('error  ') : yellow('warning');
    lines.push(`  ${label} ${problem.path}  ${dim(`[${problem.rule}]`)} ${problem.message}`);
  }
  return lines.join('\n');
}
