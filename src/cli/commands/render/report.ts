/**
 * How `render` reports a batch (local, or gathered from the queue): JSON on stdout with
 * `--json`, `would write` lines for a dry run, warnings, failures and a summary on stderr.
 * Names in the lines come from elsewhere (files, object keys, job data, results read back from
 * Redis): each line is escaped (`escapeText`), so none drives the terminal or forges a line.
 */
import { escapeText } from '../../../errors.js';
import { picturesHtml } from '../../../markup/picture.js';
import type { RenderReport, RenderResult } from '../../../renditions/render.js';
import { RENDITION_KEYS } from '../../../renditions/rules.js';
import type { Shard } from '../../../renditions/shard.js';
import { joinLocation } from '../../../storage/location.js';
import type { S3Options } from '../../../storage/s3-url.js';
import { printData, printMessage, stderrStyles, writeOutputFile } from '../../output.js';
import type { AltText } from './alt-text.js';

/** What reporting a batch needs of the command's options. */
export interface ReportOptions {
  altTextFile?: string | undefined;
  json: boolean;
  outDir: string;
  dryRun?: boolean | undefined;
  shard?: Shard | undefined;
  /** Print each image's `<picture>` markup on stdout (`--html`), with this `sizes` attribute. */
  html?: { sizes?: string | undefined } | undefined;
  /** The inputs as given: `--html` prints in their order. */
  inputs?: string[];
  /** `--report <file>`: the contact sheet of the batch is written there, its thumbnails read from the output. */
  reportFile?: string | undefined;
  s3?: S3Options | undefined;
}

/**
 * Writes the contact sheet (`--report`), then prints the report as `printReport` does; returns
 * the exit code. The sheet is written first, so a folder that cannot take it fails the command
 * before the summary says all is well.
 */
export async function finishReport(
  report: RenderReport & { pending?: string[] },
  seconds: number,
  options: ReportOptions,
  altText?: AltText,
): Promise<number> {
  await writeContactSheet(report, options);
  return printReport(report, seconds, options, altText);
}

/** With `--report <file>`, the contact sheet of `report`, its thumbnails read from the output. */
export async function writeContactSheet(
  report: RenderReport,
  options: Pick<ReportOptions, 'reportFile' | 'outDir' | 's3'>,
): Promise<void> {
  if (!options.reportFile) return;
  const [{ contactSheetHtml }, { openStore }] = await Promise.all([
    import('../../../contact-sheet/contact-sheet.js'),
    import('../../../storage/location.js'),
  ]);
  const store = await openStore(options.outDir, options.s3);
  try {
    const sheet = await contactSheetHtml(report, { store, title: `content-api render: ${options.outDir}` });
    await writeOutputFile('--report', options.reportFile, sheet);
  } finally {
    await store.close();
  }
}

/** Prints a batch's report (local, or gathered from the queue) as `render` does; returns the exit code. */
export function printReport(
  report: RenderReport & { pending?: string[] },
  seconds: number,
  options: ReportOptions,
  altText?: AltText,
): number {
  const { altTextFile, json } = options;
  // Failed originals had no Image object to ask for their alt text; their keys are not typos.
  for (const failure of report.failures) altText?.lookup(failure);
  if (altText)
    report.warnings.push(
      ...altText.unused().map((key) => `--alt-text ${altTextFile}: '${key}' names no original of this run`),
    );
  const pending = report.pending && report.pending.length > 0 ? { pending: report.pending } : {};
  if (json) {
    const results = report.results.map((result) => resultJson(result, options));
    printData(
      JSON.stringify(
        {
          results,
          failures: report.failures,
          notStarted: report.notStarted,
          warnings: report.warnings,
          removed: report.counts.removed,
          kept: report.counts.kept,
          ...pending,
        },
        null,
        2,
      ),
    );
  } else if (options.html) {
    printData(picturesHtml(inInputOrder(report.results, options.inputs ?? []), options.html));
    const without = report.results.filter((result) => result.image.alt_text === null).length;
    if (without > 0) {
      report.warnings.push(
        `${without} of ${report.results.length} image(s) have no alt text: their markup says alt="", which marks ` +
          'an image as decorative (screen readers skip it); give each its text with --alt-text <file>',
      );
    }
  } else if (options.dryRun) printDryRun(report.results, options);
  printMessages(report);
  if (!json) {
    const shardPrefix = options.shard ? `shard ${options.shard.index}/${options.shard.count}: ` : '';
    printMessage(`${shardPrefix}${summary(report, seconds, options)}`);
  }
  return report.failures.length > 0 || report.notStarted.length > 0 || (report.pending?.length ?? 0) > 0 ? 1 : 0;
}

/**
 * Results in the order of the inputs they came from (the first input that names or holds each),
 * each input's in the order of their sources, as discovery walks a folder.
 */
function inInputOrder(results: RenderResult[], inputs: string[]): RenderResult[] {
  const from = (source: string) => {
    const index = inputs.findIndex(
      (input) => source === input || source.startsWith(input.endsWith('/') ? input : `${input}/`),
    );
    return index === -1 ? inputs.length : index;
  };
  return [...results].sort((a, b) => from(a.source) - from(b.source) || a.source.localeCompare(b.source));
}

export function resultJson(
  { source, status, format, image, files, bytes, measured, alternates, placeholder, removed, kept }: RenderResult,
  options: { outDir: string },
) {
  const inOut = (file: string) => joinLocation(options.outDir, file);
  const paths = (each: RenderResult['files']) => RENDITION_KEYS.map((key) => inOut(each[key].path));
  return {
    source,
    status,
    format,
    image,
    files: paths(files),
    bytes,
    ...(measured && { measured }),
    alternates: alternates.map((alternate) => ({ ...alternate, files: paths(alternate.files) })),
    ...(placeholder && { placeholder }),
    removed: removed.map(inOut),
    kept: kept.map(inOut),
  };
}

export function printDryRun(results: RenderResult[], options: { outDir: string }): void {
  for (const result of results) {
    // A planned output with bytes is one up to date: its record says what is there.
    for (const { files, bytes } of [result, ...result.alternates]) {
      const verb = result.status === 'skipped' || bytes !== null ? 'up to date' : 'would write';
      for (const key of RENDITION_KEYS) {
        const file = files[key];
        printData(`${verb}\t${escapeText(joinLocation(options.outDir, file.path))}\t${file.width}x${file.height}`);
      }
    }
    for (const file of result.removed)
      printData(`would remove\t${escapeText(joinLocation(options.outDir, file))}\tno longer written`);
  }
}

export function printMessages(report: { warnings: string[]; failures: Array<{ error: string }> }): void {
  const { red, yellow } = stderrStyles();
  for (const warning of report.warnings) printMessage(`${yellow('warning')}: ${escapeText(warning)}`);
  for (const failure of report.failures) printMessage(`${red('failed')}: ${escapeText(failure.error)}`);
}

export function summary(
  report: Pick<RenderReport, 'counts' | 'failures' | 'notStarted'> & { pending?: string[] },
  seconds: number,
  options: { outDir: string; dryRun?: boolean | undefined },
): string {
  const { counts } = report;
  const { green, red } = stderrStyles();
  const parts = options.dryRun
    ? [`${counts.planned} would be rendered`, `${counts.skipped} up to date`]
    : [green(`${counts.rendered} rendered`), `${counts.skipped} up to date`];
  const { removed, kept } = counts;
  if (removed > 0) parts.push(`${removed} files of earlier renderings ${options.dryRun ? 'to be removed' : 'removed'}`);
  if (kept > 0) {
    const how = options.dryRun ? '--prune removes them' : '--prune removes them; --prune --dry-run lists them first';
    parts.push(`${kept} files of earlier renderings kept (${how})`);
  }
  if (report.failures.length > 0) parts.push(red(`${report.failures.length} failed`));
  if (report.notStarted.length > 0) parts.push(`${report.notStarted.length} not started (interrupted)`);
  if (report.pending && report.pending.length > 0) parts.push(`${report.pending.length} still queued`);
  const output = options.dryRun ? '' : ` (output: ${escapeText(options.outDir)})`;
  return `${parts.join(', ')} in ${seconds.toFixed(1)} s${output}`;
}
