/**
 * `content-api check`: pages in, findings out, through the chosen reporter; exit 1 when
 * anything is found (warnings up to `--max-warnings` excepted).
 */
import { checkPages, type CheckOptions } from '../../check/check.js';
import { githubReport, jsonReport, junitReport } from '../../check/reporters/machine.js';
import { htmlReport } from '../../check/reporters/html.js';
import { textReport } from '../../check/reporters/text.js';
import { loadTargets, type TargetOptions } from '../../check/targets.js';
import { assertWritableFile, printData, printMessage, stylesFor, writeOutputFile } from '../output.js';

export const REPORTERS = ['text', 'json', 'junit', 'github', 'html'] as const;
export type ReporterName = (typeof REPORTERS)[number];

export interface CheckCommandOptions extends CheckOptions, TargetOptions {
  reporter: ReporterName;
  output?: string | undefined;
  maxWarnings: number;
}

export async function runCheck(targets: string[], options: CheckCommandOptions): Promise<number> {
  if (options.output) await assertWritableFile('--output', options.output);
  const pages = await loadTargets(targets, options);
  const report = await checkPages(pages, options);
  const stream = options.output ? null : process.stdout;
  const rendered = {
    text: () => textReport(report, stylesFor(stream ?? { isTTY: false } as NodeJS.WriteStream)),
    json: () => jsonReport(report),
    junit: () => junitReport(report),
    github: () => githubReport(report),
    html: () => htmlReport(report),
  }[options.reporter]();
  if (options.output) {
    await writeOutputFile('--output', options.output, `${rendered}\n`);
    printMessage(`${options.reporter} report written to ${options.output}: ${report.errors} error(s), ${report.warnings} warning(s)`);
  } else if (rendered !== '') {
    printData(rendered);
  }
  return report.errors > 0 || report.warnings > options.maxWarnings ? 1 : 0;
}
