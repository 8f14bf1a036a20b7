/**
 * `content-api render`: runs the batch (originals, or a page's images with `--page`) and
 * reports it: JSON on stdout with `--json`, a progress bar on a terminal, failures and a
 * summary on stderr.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { escapedMessage, InvalidArgumentError } from '../../errors.js';
import type { RenderPageOptions } from '../../page-render/render-page.js';
import type { Original } from '../../renditions/discover.js';
import { type RenderOptions, type RenderReport, type RenderResult, renderOriginals } from '../../renditions/render.js';
import { RENDITION_KEYS } from '../../renditions/rules.js';
import { joinLocation } from '../../storage/location.js';
import { assertWritableFile, ProgressLine, printData, printMessage, stderrStyles, writeOutputFile } from '../output.js';

export interface RenderCommandOptions extends Omit<RenderOptions, 'altText' | 'onProgress' | 'signal'> {
  altTextFile?: string | undefined;
  json: boolean;
}

export interface RenderPageCommandOptions extends Omit<RenderPageOptions, 'onProgress' | 'onDownload' | 'signal'> {
  /** A page id, a JSON file, or `-` for standard input. */
  page: string;
  /** Where to write the page with its new renditions; `-` for standard output. */
  writePage?: string | undefined;
  json: boolean;
}

export async function runRender(inputs: string[], options: RenderCommandOptions): Promise<number> {
  const { altTextFile, json, ...renderOptions } = options;
  const altText = altTextFile ? await loadAltText(altTextFile) : undefined;
  const { report, seconds } = await withProgress(({ onDownload, ...hooks }) =>
    renderOriginals(inputs, { ...renderOptions, altText: altText?.lookup, ...hooks }),
  );
  return printReport(report, seconds, options, altText);
}

/** Prints a batch's report (local, or gathered from the queue) as `render` does; returns the exit code. */
export function printReport(
  report: RenderReport & { pending?: string[] },
  seconds: number,
  options: Pick<RenderCommandOptions, 'altTextFile' | 'json' | 'outDir' | 'dryRun' | 'shard'>,
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
        { results, failures: report.failures, notStarted: report.notStarted, warnings: report.warnings, ...pending },
        null,
        2,
      ),
    );
  } else if (options.dryRun) printDryRun(report.results, options);
  printMessages(report);
  if (!json)
    printMessage(
      `${options.shard ? `shard ${options.shard.index}/${options.shard.count}: ` : ''}${summary(report, seconds, options)}`,
    );
  return report.failures.length > 0 || report.notStarted.length > 0 || (report.pending?.length ?? 0) > 0 ? 1 : 0;
}

export async function runRenderPage(options: RenderPageCommandOptions): Promise<number> {
  const { page: target, writePage, json, ...renderOptions } = options;
  if (writePage === '-' && json)
    throw new InvalidArgumentError('--write-page - and --json both want standard output; write the page to a file');
  if (writePage && writePage !== '-' && !options.dryRun) await assertWritableFile('--write-page', writePage);
  // Loaded here, so rendering files does not pay for the page model and the HTTP client.
  const [{ loadPage }, { renderPage }] = await Promise.all([
    import('../../client/pages.js'),
    import('../../page-render/render-page.js'),
  ]);
  const page = await loadPage(target, renderOptions);
  const { report, seconds } = await withProgress((hooks) => renderPage(page, { ...renderOptions, ...hooks }));
  const written = writePage && !options.dryRun ? writePage : null;
  if (written === '-')
    process.stdout.write(report.text); // byte for byte: no newline added
  else if (written) await writeOutputFile('--write-page', written, report.text);

  if (json) {
    const results = report.results.map((result) => ({
      paths: result.paths,
      origin: result.origin,
      ...resultJson(result, options),
    }));
    const { page: source, failures, notStarted, warnings, updated } = report;
    printData(JSON.stringify({ page: source, results, failures, notStarted, warnings, updated, written }, null, 2));
  } else if (options.dryRun) {
    printDryRun(report.results, options);
    if (writePage) printData(`would write\t${writePage}\tthe page with ${report.updated.length} Image(s) updated`);
  }
  printMessages(report);
  if (!json) {
    const where = written
      ? `; page written to ${written === '-' ? 'stdout' : written} (${report.updated.length} Image(s) updated)`
      : '';
    printMessage(`${page.source}: ${summary(report, seconds, options)}${where}`);
  }
  return report.failures.length > 0 || report.notStarted.length > 0 ? 1 : 0;
}

type Hooks = Pick<RenderPageOptions, 'onProgress' | 'onDownload' | 'signal'>;

/** Runs a batch with a progress line on a terminal; the first Ctrl-C lets the originals under way finish. */
export async function withProgress<T>(run: (hooks: Hooks) => Promise<T>): Promise<{ report: T; seconds: number }> {
  const progress = new ProgressLine();
  const controller = new AbortController();
  const onSignal = () => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort();
    progress.clear();
    printMessage('interrupted: finishing the originals under way (press Ctrl-C again to stop now)');
  };
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
  const started = performance.now();
  try {
    const report = await run({
      signal: controller.signal,
      // What is under way, not what finished last: a long encode shows as the file being encoded.
      onProgress: ({ done, total, active, source }) => {
        progress.update(
          done,
          total,
          active.length === 0 ? source : `${active[0]}${active.length > 1 ? ` (+${active.length - 1} more)` : ''}`,
        );
      },
      onDownload: (event) => progress.update(event.done, event.total, `download ${event.url}`),
    });
    return { report, seconds: (performance.now() - started) / 1000 };
  } finally {
    progress.clear();
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
  }
}

function resultJson({ source, status, format, image, files, removed }: RenderResult, options: { outDir: string }) {
  const inOut = (file: string) => joinLocation(options.outDir, file);
  return {
    source,
    status,
    format,
    image,
    files: RENDITION_KEYS.map((key) => inOut(files[key].path)),
    removed: removed.map(inOut),
  };
}

function printDryRun(results: RenderResult[], options: { outDir: string }): void {
  for (const result of results) {
    const verb = result.status === 'skipped' ? 'up to date' : 'would write';
    for (const key of RENDITION_KEYS) {
      const file = result.files[key];
      printData(`${verb}\t${joinLocation(options.outDir, file.path)}\t${file.width}x${file.height}`);
    }
    for (const file of result.removed)
      printData(`would remove\t${joinLocation(options.outDir, file)}\tno longer written`);
  }
}

function printMessages(report: { warnings: string[]; failures: Array<{ error: string }> }): void {
  const { red, yellow } = stderrStyles();
  for (const warning of report.warnings) printMessage(`${yellow('warning')}: ${warning}`);
  for (const failure of report.failures) printMessage(`${red('failed')}: ${failure.error}`);
}

function summary(
  report: Pick<RenderReport, 'results' | 'failures' | 'notStarted'> & { pending?: string[] },
  seconds: number,
  options: { outDir: string; dryRun?: boolean | undefined },
): string {
  const count = (status: string) => report.results.filter((r) => r.status === status).length;
  const { green, red } = stderrStyles();
  const parts = options.dryRun
    ? [`${count('planned')} would be rendered`, `${count('skipped')} up to date`]
    : [green(`${count('rendered')} rendered`), `${count('skipped')} up to date`];
  if (report.failures.length > 0) parts.push(red(`${report.failures.length} failed`));
  if (report.notStarted.length > 0) parts.push(`${report.notStarted.length} not started (interrupted)`);
  if (report.pending && report.pending.length > 0) parts.push(`${report.pending.length} still queued`);
  return `${parts.join(', ')} in ${seconds.toFixed(1)} s${options.dryRun ? '' : ` (output: ${options.outDir})`}`;
}

export interface AltText {
  lookup: (original: Pick<Original, 'source'>) => string | undefined;
  unused: () => string[];
}

/**
 * `--alt-text` file: a JSON object whose keys are originals, as reported (`samples/a.jpg`)
 * or by file name (`a.jpg`), and whose values are their alt text. `unused` lists the keys
 * no original asked for (a typo, or a file that is not there).
 */
export async function loadAltText(file: string): Promise<AltText> {
  let map: unknown;
  try {
    map = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new InvalidArgumentError(`--alt-text ${file}: ${escapedMessage(error)}`);
  }
  if (
    typeof map !== 'object' ||
    map === null ||
    Array.isArray(map) ||
    Object.values(map).some((v) => typeof v !== 'string')
  ) {
    throw new InvalidArgumentError(`--alt-text ${file}: expected a JSON object of strings`);
  }
  const texts = new Map(Object.entries(map as Record<string, string>));
  const used = new Set<string>();
  const lookup = (original: Pick<Original, 'source'>) => {
    const key = [original.source, path.normalize(original.source), path.basename(original.source)].find((candidate) =>
      texts.has(candidate),
    );
    if (key === undefined) return undefined;
    used.add(key);
    return texts.get(key);
  };
  return { lookup, unused: () => [...texts.keys()].filter((key) => !used.has(key)) };
}
