/**
 * `content-api check`: pages in, findings out through the chosen reporter, a page at a time;
 * exit 1 when anything is found (warnings up to `--max-warnings` excepted). Without targets,
 * the records of the manifest in the `--verify-files` folder or bucket prefix in, a record at a time.
 */
import path from 'node:path';
import type { ArchiveOptions } from '../../../check/archive.js';
import { Baseline, BaselineRecorder } from '../../../check/baseline.js';
import { type CheckedPage, type CheckOptions, CheckRun, type CheckSummary } from '../../../check/check.js';
import type { LoadedConfig } from '../../../check/config.js';
import { createPolicy } from '../../../check/policy.js';
import { type FileSource, openFileSource } from '../../../check/probe.js';
import { createReporter, type ReporterName } from '../../../check/reporters/index.js';
import { loadSite, loadTargets, type TargetOptions } from '../../../check/targets.js';
import type { SiteQuery } from '../../../client/listing.js';
import { escapeText, InvalidArgumentError } from '../../../errors.js';
import type { S3Options } from '../../../storage/s3-url.js';
import {
  assertApart,
  assertOneOnStdout,
  assertWritableFile,
  outputPlace,
  printMessage,
  stylesFor,
  writeOutputFile,
} from '../../output.js';
import { ProgressLine } from '../../progress.js';
import { fileSink, type ReportSink, stdoutSink } from './sink.js';

export interface CheckCommandOptions {
  /** `--all-pages`: every page of the site at `baseUrl` its listing gives (with its filters), not targets. */
  site?: SiteQuery | undefined;
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
  const archive = targets.length === 0 && !options.site;
  if (archive && !options.verifyFiles)
    throw new InvalidArgumentError(
      "missing required argument 'targets': give pages to check, or --verify-files <folder|s3://bucket/prefix/> " +
        'alone to check the archive whole',
    );
  if (archive && /^https?:\/\//i.test(options.verifyFiles!))
    throw new InvalidArgumentError(
      `--verify-files ${escapeText(options.verifyFiles!)}: without page targets it takes a folder or ` +
        's3://bucket/prefix/, where render keeps its manifest (a server lists none)',
    );
  // Never written over a page checked, nor into the folder whose files are checked.
  const read = [
    ...targets.map((target) => ({ path: target, what: `among the targets (${target})` })),
    ...(options.verifyFiles
      ? [{ path: options.verifyFiles, what: `in the --verify-files folder ${options.verifyFiles}` }]
      : []),
  ].filter((place) => !/^(https?|s3):\/\//i.test(place.path) && !/^(\d+|-)$/.test(place.path));
  // The report goes to standard output unless --output names a file.
  await assertOneOnStdout([
    ['the report', options.output === undefined ? true : undefined],
    ['--output', options.output],
    ['--update-baseline', options.updateBaseline],
  ]);
  // Nor over the files the command reads first (the config file, the baseline; --update-baseline may
  // name its own --baseline), nor over each other: two documents in one file, the first one lost.
  const configFile = options.config.file
    ? [{ path: options.config.file, what: `the config file ${options.config.file}` }]
    : [];
  const baselineFile = options.baseline
    ? [{ path: options.baseline, what: `the --baseline file ${options.baseline}` }]
    : [];
  const reportFile = await outputPlace(options.output, 'the --output file too');
  for (const [flag, file, own] of [
    ['--output', options.output, [...configFile, ...baselineFile]],
    ['--update-baseline', options.updateBaseline, [...configFile, ...reportFile]],
  ] as const) {
    if (!file) continue;
    await assertApart(flag, file, [...read, ...own]);
    await assertWritableFile(flag, file);
  }
  const writing = Boolean(options.updateBaseline);
  const baseline = options.baseline ? await Baseline.load(options.baseline, { missingIsEmpty: writing }) : undefined;
  const record = options.updateBaseline ? new BaselineRecorder(options.updateBaseline) : undefined;
  const configDir = options.config.file ? path.dirname(options.config.file) : process.cwd();
  const policy = createPolicy(options.config.config, configDir);
  const { mediaPrefix, timeoutMs, deadlineMs, s3 } = options;
  const files = options.verifyFiles
    ? await openFileSource(options.verifyFiles, { mediaPrefix, timeoutMs, deadlineMs, s3 })
    : undefined;
  let sink: ReportSink | undefined;
  try {
    // Without targets, the manifest's first record is read before the report begins: no manifest,
    // or one that cannot be read, is exit 2, never an empty report.
    const { concurrency } = options;
    const archiveCheck = archive ? await checkArchive(files, { concurrency, policy, baseline, record }) : undefined;
    // Colour only in a report for a terminal that wants it, never in a file.
    const styles = stylesFor(options.output ? ({ isTTY: false } as NodeJS.WriteStream) : process.stdout);
    const { baseUrl, retries, maxBytes } = options;
    const reporter = await createReporter(options.reporter, {
      styles,
      files,
      baseUrl,
      baseline: Boolean(options.baseline),
    });
    const progress = options.site ? new ProgressLine() : undefined;
    let total = 0;
    const run =
      archiveCheck ??
      checkTargets(targets, options.site, {
        files,
        concurrency,
        mediaPrefix: options.mediaPrefix,
        policy,
        baseline,
        record,
        keepText: reporter.needsText ?? false,
        pages: {
          baseUrl,
          timeoutMs,
          deadlineMs,
          retries,
          maxBytes,
          skip: (source) => policy.ignoresPage(source),
          onTotal: (count) => {
            total = count;
          },
        },
      });
    sink = options.output ? await fileSink('--output', options.output) : stdoutSink();
    await sink.write(reporter.start());
    for await (const page of run.results) {
      progress?.clear();
      await sink.write(reporter.page(page));
      progress?.update(run.summary.pages, Math.max(total, run.summary.pages), page.source);
    }
    progress?.clear();
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
    if (files) await files.close();
  }
}

/** What a run checks, as it goes, and its counts. */
interface Checking {
  summary: CheckSummary;
  results: AsyncIterable<CheckedPage>;
}

/** The pages the targets name, or every page of the site its listing gives. */
function checkTargets(
  targets: string[],
  site: SiteQuery | undefined,
  options: CheckOptions & { pages: TargetOptions },
): Checking {
  const { pages, ...checkOptions } = options;
  const run = new CheckRun(checkOptions);
  return { summary: run.summary, results: run.run(site ? loadSite(site, pages) : loadTargets(targets, pages)) };
}

/** Every record of the manifest in the folder or bucket prefix (the archive checked whole). */
async function checkArchive(files: FileSource | undefined, options: Omit<ArchiveOptions, 'files'>): Promise<Checking> {
  if (files?.kind !== 'store')
    throw new InvalidArgumentError('--verify-files: a folder or s3://bucket/prefix/ is needed');
  const { ArchiveRun, archiveRecords } = await import('../../../check/archive.js');
  const records = await archiveRecords(files);
  const run = new ArchiveRun({ files, ...options });
  return { summary: run.summary, results: run.run(records) };
}
