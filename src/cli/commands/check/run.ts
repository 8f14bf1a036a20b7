/**
 * `content-api check`: pages in, findings out through the chosen reporter, a page at a time;
 * exit 1 when anything is found (warnings up to `--max-warnings` excepted).
 */
import path from 'node:path';
import { Baseline, BaselineRecorder } from '../../../check/baseline.js';
import { CheckRun } from '../../../check/check.js';
import type { LoadedConfig } from '../../../check/config.js';
import { createPolicy } from '../../../check/policy.js';
import { closeFileSource, openFileSource } from '../../../check/probe.js';
import { createReporter, type ReporterName } from '../../../check/reporters/index.js';
import { loadTargets } from '../../../check/targets.js';
import { escapeText } from '../../../errors.js';
import type { S3Options } from '../../../storage/s3-url.js';
import { assertWritableFile, printMessage, stylesFor, writeOutputFile } from '../../output.js';
import { fileSink, type ReportSink, stdoutSink } from './sink.js';

export interface CheckCommandOptions {
  baseUrl?: string | undefined;
  verifyFiles?: string | undefined;
  mediaPrefix: string;
  reporter: ReporterName;
  output?: string | undefined;
  maxWarnings: number;
  concurrency: number;
  timeoutMs: number;
  /** Whole-exchange deadline for each page fetched and each media file read over HTTP. */
  deadlineMs?: number | undefined;
  retries: number;
  maxBytes: number;
  /** How to reach S3 for an `s3://` --verify-files. */
  s3?: S3Options | undefined;
  /** The config file in force (its rules and ignores; its flag defaults are already in the options). */
  config: LoadedConfig;
  baseline?: string | undefined;
  updateBaseline?: string | undefined;
}

export async function runCheck(targets: string[], options: CheckCommandOptions): Promise<number> {
  if (options.output) await assertWritableFile('--output', options.output);
  if (options.updateBaseline) await assertWritableFile('--update-baseline', options.updateBaseline);
  const baseline = options.baseline ? await Baseline.load(options.baseline) : undefined;
  const record = options.updateBaseline ? new BaselineRecorder(options.updateBaseline) : undefined;
  const configDir = options.config.file ? path.dirname(options.config.file) : process.cwd();
  const policy = createPolicy(options.config.config, configDir);
  const { mediaPrefix, timeoutMs, deadlineMs, s3 } = options;
  const files = options.verifyFiles
    ? await openFileSource(options.verifyFiles, { mediaPrefix, timeoutMs, deadlineMs, s3 })
    : undefined;
  let sink: ReportSink | undefined;
  try {
    // Colour only in a report for a terminal that wants it, never in a file.
    const styles = stylesFor(options.output ? ({ isTTY: false } as NodeJS.WriteStream) : process.stdout);
    const { baseUrl, retries, maxBytes } = options;
    const reporter = await createReporter(options.reporter, {
      styles,
      files,
      baseUrl,
      baseline: Boolean(options.baseline),
    });
    const run = new CheckRun({
      files,
      concurrency: options.concurrency,
      mediaPrefix: options.mediaPrefix,
      policy,
      baseline,
      record,
      keepText: reporter.needsText ?? false,
    });
    const pages = loadTargets(targets, {
      baseUrl,
      timeoutMs,
      deadlineMs,
      retries,
      maxBytes,
      skip: (source) => policy.ignoresPage(source),
    });
    sink = options.output ? fileSink('--output', options.output) : stdoutSink();
    await sink.write(reporter.start());
    for await (const page of run.run(pages)) await sink.write(reporter.page(page));
    const { summary } = run;
    await sink.write(await reporter.end({ summary, fixed: baseline?.fixed() ?? [], baseline: options.baseline }));
    await sink.close();
    sink = undefined;
    const inBaseline = summary.baselined ? `, ${summary.baselined} in the baseline` : '';
    const counts = `${summary.errors} error(s), ${summary.warnings} warning(s)${inBaseline}`;
    if (options.output) printMessage(`${options.reporter} report written to ${escapeText(options.output)}: ${counts}`);
    if (record) {
      await writeOutputFile('--update-baseline', record.file, record.text());
      printMessage(`baseline written to ${escapeText(record.file)}: ${record.size} finding(s) recorded`);
      return 0;
    }
    return summary.errors > 0 || summary.warnings > options.maxWarnings ? 1 : 0;
  } finally {
    await sink?.abort();
    if (files) await closeFileSource(files);
  }
}
