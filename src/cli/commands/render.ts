/**
 * `content-api render`: runs the batch and reports it: JSON on stdout with `--json`, a
 * progress bar on a terminal, failures and a summary on stderr.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { InvalidArgumentError } from '../../errors.js';
import type { Original } from '../../renditions/discover.js';
import { renderOriginals, type RenderOptions, type RenderReport } from '../../renditions/render.js';
import { RENDITION_KEYS } from '../../renditions/rules.js';
import { printData, printMessage, ProgressLine, stderrStyles } from '../output.js';

export interface RenderCommandOptions extends Omit<RenderOptions, 'altText' | 'onProgress' | 'signal'> {
  altTextFile?: string | undefined;
  json: boolean;
}

export async function runRender(inputs: string[], options: RenderCommandOptions): Promise<number> {
  const { altTextFile, json, ...renderOptions } = options;
  const altText = altTextFile ? await loadAltText(altTextFile) : undefined;
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
  let report: RenderReport;
  try {
    report = await renderOriginals(inputs, {
      ...renderOptions,
      altText,
      signal: controller.signal,
      onProgress: (event) => progress.update(event.done, event.total, event.source),
    });
  } finally {
    progress.clear();
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
  }
  const seconds = (performance.now() - started) / 1000;

  if (json) {
    const results = report.results.map(({ source, status, format, image, files }) => ({
      source,
      status,
      format,
      image,
      files: RENDITION_KEYS.map((key) => path.join(options.outDir, files[key].path)),
    }));
    printData(JSON.stringify({ results, failures: report.failures, warnings: report.warnings }, null, 2));
  } else if (options.dryRun) {
    for (const result of report.results) {
      const verb = result.status === 'skipped' ? 'up to date' : 'would write';
      for (const key of RENDITION_KEYS) {
        const file = result.files[key];
        printData(`${verb}\t${path.join(options.outDir, file.path)}\t${file.width}x${file.height}`);
      }
    }
  }
  const { red, yellow } = stderrStyles();
  for (const warning of report.warnings) printMessage(`${yellow('warning')}: ${warning}`);
  for (const failure of report.failures) printMessage(`${red('failed')}: ${failure.error}`);
  if (!json) printMessage(summary(report, seconds, options));
  return report.failures.length > 0 ? 1 : 0;
}

function summary(report: RenderReport, seconds: number, options: RenderCommandOptions): string {
  const count = (status: string) => report.results.filter((r) => r.status === status).length;
  const { green, red } = stderrStyles();
  const parts = options.dryRun
    ? [`${count('planned')} would be rendered`, `${count('skipped')} up to date`]
    : [green(`${count('rendered')} rendered`), `${count('skipped')} up to date`];
  if (report.failures.length > 0) parts.push(red(`${report.failures.length} failed`));
  return `${parts.join(', ')} in ${seconds.toFixed(1)} s${options.dryRun ? '' : ` (output: ${options.outDir})`}`;
}

/**
 * `--alt-text` file: a JSON object whose keys are originals, as reported (`samples/a.jpg`)
 * or by file name (`a.jpg`), and whose values are their alt text.
 */
async function loadAltText(file: string): Promise<(original: Original) => string | undefined> {
  let map: unknown;
  try {
    map = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new InvalidArgumentError(`--alt-text ${file}: ${(error as Error).message}`);
  }
  if (typeof map !== 'object' || map === null || Array.isArray(map) || Object.values(map).some((v) => typeof v !== 'string')) {
    throw new InvalidArgumentError(`--alt-text ${file}: expected a JSON object of strings`);
  }
  const texts = map as Record<string, string>;
  return (original) => texts[original.source] ?? texts[path.normalize(original.source)] ?? texts[path.basename(original.source)];
}
