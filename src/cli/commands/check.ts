/**
 * `content-api check`: pages in, findings out through the chosen reporter, a page at a time;
 * exit 1 when anything is found (warnings up to `--max-warnings` excepted).
 */
import path from 'node:path';
import { Baseline, BaselineRecorder } from '../../check/baseline.js';
import { CheckRun } from '../../check/check.js';
import { closeFileSource, type FileSource, openFileSource } from '../../check/probe.js';
import type { Reporter } from '../../check/reporters/reporter.js';
import { loadTargets } from '../../check/targets.js';
import { type LoadedConfig, REPORTER_NAMES } from '../../config/config.js';
import { createPolicy } from '../../config/policy.js';
import type { S3Options } from '../../storage/location.js';
import { assertWritableFile, printMessage, stylesFor, writeOutputFile } from '../output.js';
import { fileSink, type ReportSink, stdoutSink } from './check-output.js';

export const REPORTERS = REPORTER_NAMES;
export type ReporterName = (typeof REPORTERS)[number];

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

/** Flags given on the command line (or in the environment) win; then the config file; then the defaults. */
export function withConfigDefaults<T extends Record<string, unknown>>(
  flags: T,
  given: (name: string) => boolean,
  loaded: LoadedConfig,
): T {
  const { config, file } = loaded;
  const dir = file ? path.dirname(file) : process.cwd();
  const relative = (value: string | undefined) =>
    value === undefined || /^https?:\/\//i.test(value) ? value : path.resolve(dir, value);
  const defaults: Record<string, unknown> = {
    baseUrl: config.baseUrl,
    mediaPrefix: config.mediaPrefix,
    verifyFiles: relative(config.verifyFiles),
    reporter: config.reporter,
    output: relative(config.output),
    maxWarnings: config.maxWarnings,
    baseline: relative(config.baseline),
  };
  const merged: Record<string, unknown> = { ...flags };
  for (const [name, value] of Object.entries(defaults)) if (value !== undefined && !given(name)) merged[name] = value;
  return merged as T;
}

async function reporterFor(
  options: CheckCommandOptions,
  files: FileSource | undefined,
  sinkIsTerminal: boolean,
): Promise<Reporter> {
  switch (options.reporter) {
    case 'text': {
      const { textReporter } = await import('../../check/reporters/text.js');
      return textReporter(stylesFor(sinkIsTerminal ? process.stdout : ({ isTTY: false } as NodeJS.WriteStream)));
    }
    case 'html': {
      const { htmlReporter } = await import('../../check/reporters/html.js');
      return htmlReporter({ files, baseUrl: options.baseUrl });
    }
    case 'sarif': {
      const { sarifReporter } = await import('../../check/reporters/sarif.js');
      return sarifReporter({ baseline: Boolean(options.baseline) });
    }
    default: {
      const machine = await import('../../check/reporters/machine.js');
      return {
        json: machine.jsonReporter,
        'json-lines': machine.jsonLinesReporter,
        junit: machine.junitReporter,
        github: machine.githubReporter,
      }[options.reporter]();
    }
  }
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
    const reporter = await reporterFor(options, files, !options.output);
    const run = new CheckRun({
      files,
      concurrency: options.concurrency,
      mediaPrefix: options.mediaPrefix,
      policy,
      baseline,
      record,
      keepText: reporter.needsText ?? false,
    });
    const { baseUrl, retries, maxBytes } = options;
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
    const counts = `${summary.errors} error(s), ${summary.warnings} warning(s)${summary.baselined ? `, ${summary.baselined} in the baseline` : ''}`;
    if (options.output) printMessage(`${options.reporter} report written to ${options.output}: ${counts}`);
    if (record) {
      await writeOutputFile('--update-baseline', record.file, record.text());
      printMessage(`baseline written to ${record.file}: ${record.size} finding(s) recorded`);
      return 0;
    }
    return summary.errors > 0 || summary.warnings > options.maxWarnings ? 1 : 0;
  } finally {
    await sink?.abort();
    if (files) await closeFileSource(files);
  }
}
