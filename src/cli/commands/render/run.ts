/**
 * `content-api render`: runs the batch (originals, or a page's images with `--page`) and
 * reports it (report.ts), with a progress bar on a terminal.
 */
import { escapeText } from '../../../errors.js';
import type { RenderPageOptions } from '../../../page-render/render-page.js';
import { type RenderOptions, renderOriginals } from '../../../renditions/render.js';
import { assertWritableFile, printData, printMessage, writeOutputFile } from '../../output.js';
import { withProgress } from '../../progress.js';
import { setRenderThreads } from '../../threads.js';
import { loadAltText } from './alt-text.js';
import { finishReport, printDryRun, printMessages, resultJson, summary, writeContactSheet } from './report.js';

export interface RenderCommandOptions extends Omit<RenderOptions, 'altText' | 'onProgress' | 'signal'> {
  altTextFile?: string | undefined;
  json: boolean;
  /** `--html`: each image's markup on stdout, with this `sizes`. */
  html?: { sizes?: string | undefined } | undefined;
  /** The inputs as given, for `--html`'s order. */
  inputs?: string[];
  /** `--report <file>`: the contact sheet of the batch. */
  reportFile?: string | undefined;
}

export interface RenderPageCommandOptions extends Omit<RenderPageOptions, 'onProgress' | 'onDownload' | 'signal'> {
  /** A page id, a JSON file, or `-` for standard input. */
  page: string;
  /** Where to write the page with its new renditions; `-` for standard output. */
  writePage?: string | undefined;
  json: boolean;
  /** `--report <file>`: the contact sheet of the page's sources. */
  reportFile?: string | undefined;
}

export async function runRender(inputs: string[], options: RenderCommandOptions): Promise<number> {
  const { altTextFile, json, html: _html, inputs: _inputs, reportFile: _report, ...renderOptions } = options;
  setRenderThreads();
  const altText = altTextFile ? await loadAltText(altTextFile) : undefined;
  const { report, seconds } = await withProgress(({ onDownload, ...hooks }) =>
    renderOriginals(inputs, {
      ...renderOptions,
      altText: altText?.lookup,
      // A summary needs counts only: an archive of any size is rendered in bounded memory.
      // (With --alt-text too: its keys that name no original are found as results are built.)
      collectResults:
        json || options.html !== undefined || options.reportFile !== undefined || options.dryRun || Boolean(altText),
      ...hooks,
    }),
  );
  return finishReport(report, seconds, options, altText);
}

export async function runRenderPage(options: RenderPageCommandOptions): Promise<number> {
  const { page: target, writePage, json, reportFile: _report, ...renderOptions } = options;
  setRenderThreads();
  // A dry run too: it says what the run would write, and this run would refuse it.
  if (writePage && writePage !== '-') await assertWritableFile('--write-page', writePage);
  // Loaded here, so rendering files does not pay for the page model and the HTTP client.
  const [{ loadPage }, { renderPage }] = await Promise.all([
    import('../../../client/pages.js'),
    import('../../../page-render/render-page.js'),
  ]);
  const page = await loadPage(target, renderOptions);
  const { report, seconds } = await withProgress((hooks) => renderPage(page, { ...renderOptions, ...hooks }));
  const written = writePage && !options.dryRun ? writePage : null;
  if (written === '-')
    process.stdout.write(report.text); // byte for byte: no newline added
  else if (written) await writeOutputFile('--write-page', written, report.text);

  await writeContactSheet(report, options);
  if (json) {
    const results = report.results.map((result) => ({
      paths: result.paths,
      origin: result.origin,
      ...resultJson(result, options),
    }));
    const { page: source, failures, notStarted, warnings, updated } = report;
    const { removed, kept } = report.counts;
    const document = { page: source, results, failures, notStarted, warnings, removed, kept, updated, written };
    printData(JSON.stringify(document, null, 2));
  } else if (options.dryRun) {
    printDryRun(report.results, options);
    if (writePage)
      printData(`would write\t${escapeText(writePage)}\tthe page with ${report.updated.length} Image(s) updated`);
  }
  printMessages(report);
  if (!json) {
    const to = written === '-' ? 'stdout' : escapeText(written ?? '');
    const where = written ? `; page written to ${to} (${report.updated.length} Image(s) updated)` : '';
    printMessage(`${escapeText(page.source)}: ${summary(report, seconds, options)}${where}`);
  }
  return report.failures.length > 0 || report.notStarted.length > 0 ? 1 : 0;
}
