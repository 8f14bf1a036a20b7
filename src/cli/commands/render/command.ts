/**
 * `content-api render`: its flags, help and flag-combination rules. The work is in run.ts
 * (a batch of originals, or a page's images with `--page`) and queue.ts (`--queue`), loaded
 * when the command runs, so `--help` never loads sharp.
 */

import path from 'node:path';
import type { Command } from 'commander';
import { RENDER_PAGE_MAX_BYTES } from '../../../client/defaults.js';
import { InvalidArgumentError } from '../../../errors.js';
import { resolvePictureOptions } from '../../../markup/picture.js';
import { parseShard } from '../../../renditions/shard.js';
import { isS3Url } from '../../../storage/s3-url.js';
import { epilogue } from '../../help.js';
import {
  addHttpOptions,
  addQueueOptions,
  addS3Options,
  addSettingOptions,
  baseUrlOption,
  concurrencyOption,
  type Flags,
  httpFrom,
  queueFrom,
  s3From,
  settingsFrom,
} from '../../options.js';
import { assertApart, assertOneOnStdout, assertWritableFile, outputPlace } from '../../output.js';
import { originsFor } from '../../parse.js';

const DESCRIPTION =
  'Render each original (files, or folders recursed) into five renditions, xs sm md lg xl, bounded by ' +
  'boxes of 300, 600, 1200, 2400 and 4800 px, aspect kept, never upscaled, and describe each in an Image ' +
  'object (spec 2.5). Unchanged originals whose files are intact are skipped (see --force).\n\n' +
  'With --page, render every image of a page instead: each source once, from the original of the same ' +
  'name in --originals or else from the largest rendition the page names, and with --write-page write ' +
  "the page with each Image's sizes and srcset brought in line, nothing else changed.";

const EXAMPLES = [
  'content-api render samples/originals --out media',
  'content-api render photos/ --out public/media --format webp --webp-quality 75 --json > images.json',
  'content-api render scan.tif --out media --media-url https://cdn.example.org/media/ --dry-run',
  'content-api render photos/ --out public/media --formats keep,avif,webp --html > pictures.html',
  'content-api render photos/ --out media --report report.html',
  'content-api render photos/ --out media --quality auto --jpeg-mozjpeg',
  'content-api render --page 101 --base-url http://127.0.0.1:8000 --originals samples/originals --out media ' +
    '--write-page page-101.json',
  'content-api render --page page.json --base-url https://gallery.example.org --out media --write-page page.json',
  'content-api render --page 101 --base-url https://gallery.example.org --download-from https://cdn.example.org ' +
    '--out media',
  'content-api render s3://gallery-originals/2026/ --out s3://gallery-media/media/ ' +
    '--media-url https://cdn.example.org/media/',
  'content-api render s3://gallery-originals/ --out s3://gallery-media/media/ --shard auto/16',
  'content-api render s3://gallery-originals/ --out s3://gallery-media/media/ --queue redis://redis.internal:6379',
];

/** The flags that only `--page` takes, by commander's name for them. */
const PAGE_ONLY: Record<string, string> = {
  originals: '--originals',
  writePage: '--write-page',
  download: '--no-download',
  downloadFrom: '--download-from',
};

export function renderCommand(program: Command): Command {
  const command = program
    .command('render')
    .summary('render originals into the five renditions and their Image objects')
    .description(DESCRIPTION)
    .argument('[inputs...]', 'original image files and folders of them, or s3://bucket/prefix/')
    .option(
      '-o, --out <dir>',
      'output folder or s3://bucket/prefix/; folder structure below the inputs is kept',
      'media',
    );
  addSettingOptions(command)
    .option('--alt-text <file>', 'JSON object mapping originals (path or file name) to alt text')
    .addOption(concurrencyOption('originals rendered at once (default: the number of cores)'))
    .option(
      '--shard <i/n>',
      "render only shard i (from 0) of n, by a hash of each original's name; " +
        'auto/n takes i from JOB_COMPLETION_INDEX or AWS_BATCH_JOB_ARRAY_INDEX',
      (value: string) => value,
    )
    .option(
      '-f, --force',
      'render everything again, even what is up to date, and replace renditions another original wrote earlier',
    )
    .option(
      '--prune',
      'remove the files of earlier renderings of these originals that this run no longer writes ' +
        '(a format no longer listed, another naming); without it nothing is removed',
    )
    .option('-n, --dry-run', 'list what would be written (and, with --prune, removed), write nothing')
    .option('--json', 'print one JSON document with every result and failure on stdout')
    .option(
      '--html',
      "print each image's <picture> markup on stdout, in the order of the inputs, up-to-date images too " +
        '(docs/guides/markup.md)',
    )
    .option('--sizes <value>', "the markup's sizes attribute (default: auto, 100vw)")
    .option(
      '--report <file>',
      'write a contact sheet of the batch to this HTML file: every original with its renditions as thumbnails, ' +
        'bytes per format, failures and warnings first',
    )
    .optionsGroup("Re-rendering a page's images (--page):")
    .option(
      '--page <id|file|->',
      'render every image of a page instead: a page id (from --base-url), a page endpoint URL, a JSON file, ' +
        'or - for standard input',
    )
    .option(
      '--originals <dir>',
      "originals for --page (a folder or s3://bucket/prefix/), matched by name to the images' rendition files " +
        '(<name>.max-<n>x<n>.<ext>)',
    )
    .addOption(baseUrlOption('the API base URL: fetches a page id, and resolves /media/... URLs for downloads'))
    .option(
      '--no-download',
      "never download an image's largest rendition when no original matches it; such images fail",
    )
    .option(
      '--download-from <origin>',
      'also download renditions from this origin (repeatable; default: only the --base-url origin)',
      originsFor('--download-from'),
    )
    .option(
      '--write-page <file>',
      "write the page with each Image's sizes and srcset replaced (- for standard output)",
    );
  addHttpOptions(command, {
    timeout: 'network timeout for the page, downloads and S3 requests: connecting, waiting, silence',
    retries: 'HTTP retries for connection errors, 502, 503, 504 and 429',
    deadline: 'whole-exchange deadline for the page and each download, connecting to last byte',
    maxBytes: {
      what: 'largest page (file, stdin or HTTP) and largest download accepted',
      default: RENDER_PAGE_MAX_BYTES,
    },
  });
  addS3Options(command).optionsGroup('Rendering on workers (content-api worker), through a BullMQ queue on Redis:');
  addQueueOptions(
    command,
    'enqueue one job per original; workers render them; this command prints the same report as a local render',
    false,
  )
    .option('--detach', 'enqueue, print the batch id on stdout, and exit; read the report later with queue results')
    .addHelpText('after', epilogue(EXAMPLES))
    .action((inputs: string[], flags: Flags, self: Command) => runAction(inputs, flags, self));
  return command;
}

/** Whether two paths name one file as given (from the working folder). */
const samePath = (a: string, b: string) => path.resolve(a) === path.resolve(b);

async function runAction(inputs: string[], flags: Flags, command: Command): Promise<void> {
  const common = {
    ...settingsFrom(flags),
    outDir: flags.out as string,
    concurrency: flags.concurrency as number | undefined,
    shard: flags.shard === undefined ? undefined : parseShard(flags.shard as string),
    force: Boolean(flags.force),
    prune: Boolean(flags.prune),
    dryRun: Boolean(flags.dryRun),
    json: Boolean(flags.json),
    s3: s3From(flags),
  };
  const altTextFile = flags.altText as string | undefined;
  const html = markupFrom(flags);
  const reportFile = flags.report as string | undefined;
  const writePage = flags.writePage as string | undefined;
  const local = (place: unknown): place is string => typeof place === 'string' && !isS3Url(place);
  const page = flags.page as string | undefined;
  const pageFile = local(page) && !/^(\d+|-|https?:\/\/.*)$/i.test(page) ? page : undefined;
  // What a file the run writes never replaces: an original, a rendition, a file it reads.
  const places = (read: Array<[file: unknown, what: string]>) =>
    read.flatMap(([file, what]) => (local(file) ? [{ path: file, what }] : []));
  const folders = places([
    [common.outDir, `in the output folder ${common.outDir}`],
    [flags.originals, `in the --originals folder ${flags.originals}`],
  ]);
  if (reportFile !== undefined) {
    if (flags.detach) throw new InvalidArgumentError('--report writes the results: drop --detach');
    await assertApart('--report', reportFile, [
      ...inputs.filter(local).map((input) => ({ path: input, what: `among the inputs (${input})` })),
      ...folders,
      ...places([
        [altTextFile, `the --alt-text file ${altTextFile}`],
        [pageFile, `the --page file ${pageFile}`],
      ]),
      ...(await outputPlace(writePage, 'the --write-page file too')),
    ]);
    await assertWritableFile('--report', reportFile);
  }
  // The page rewritten in place is the documented use; in the output or --originals folder it would
  // replace a rendition or an original.
  if (writePage !== undefined && writePage !== '-' && (pageFile === undefined || !samePath(writePage, pageFile)))
    await assertApart('--write-page', writePage, folders);
  await assertOneOnStdout([
    ['--json', flags.json ? true : undefined],
    ['--html', flags.html ? true : undefined],
    ['--report', reportFile],
    // `-` is standard output by name.
    ['--write-page -', flags.writePage === '-' ? true : undefined],
    ['--write-page', flags.writePage === '-' ? undefined : (flags.writePage as string | undefined)],
  ]);
  if (flags.detach && flags.queue === undefined) throw new InvalidArgumentError('--detach applies only with --queue');
  if (flags.queue !== undefined) {
    if (flags.page !== undefined) {
      throw new InvalidArgumentError("--queue does not apply to --page: a page's images are rendered here, together");
    }
    if (flags.dryRun) throw new InvalidArgumentError('--dry-run plans here, reading only headers: drop --queue');
    if (flags.prune) throw new InvalidArgumentError('--prune removes files here, never on workers: drop --queue');
    if (flags.concurrency !== undefined) {
      throw new InvalidArgumentError(
        "--concurrency is the workers' (content-api worker --concurrency), not the queue's",
      );
    }
    if (inputs.length === 0) {
      throw new InvalidArgumentError('Expected originals to render (files, folders or s3:// prefixes)');
    }
    const { runQueueRender } = await import('./queue.js');
    const queue = queueFrom(flags);
    if (html && flags.detach) throw new InvalidArgumentError('--html prints the results: drop --detach');
    const detach = Boolean(flags.detach);
    process.exitCode = await runQueueRender(inputs, {
      ...common,
      altTextFile,
      queue,
      detach,
      html,
      inputs,
      reportFile,
    });
    return;
  }
  const { runRender, runRenderPage } = await import('./run.js');
  if (flags.page === undefined) {
    const pageOnly = Object.keys(PAGE_ONLY).filter((name) => command.getOptionValueSource(name) === 'cli');
    if (pageOnly.length > 0) {
      const names = pageOnly.map((name) => PAGE_ONLY[name]).join(', ');
      throw new InvalidArgumentError(`${names} ${pageOnly.length === 1 ? 'applies' : 'apply'} only with --page`);
    }
    if (inputs.length === 0) {
      throw new InvalidArgumentError('Expected originals to render (files or folders), or --page');
    }
    process.exitCode = await runRender(inputs, { ...common, altTextFile, html, inputs, reportFile });
    return;
  }
  if (inputs.length > 0) {
    throw new InvalidArgumentError(
      `Expected original files and folders or --page, not both (got ${inputs.join(' ')} and --page)`,
    );
  }
  if (html) throw new InvalidArgumentError("--html does not apply to --page: the page's Images are its markup");
  if (flags.shard !== undefined) {
    throw new InvalidArgumentError("--shard does not apply to --page: a page's images are rendered together");
  }
  if (altTextFile)
    throw new InvalidArgumentError("--alt-text does not apply to --page: the alt text is the page's own");
  process.exitCode = await runRenderPage({
    ...common,
    ...httpFrom(flags),
    page: flags.page as string,
    originals: flags.originals as string | undefined,
    baseUrl: flags.baseUrl as string | undefined,
    download: flags.download as boolean,
    downloadFrom: flags.downloadFrom as string[] | undefined,
    writePage: flags.writePage as string | undefined,
    reportFile,
  });
}

/** `--html` and `--sizes`, checked before any work. */
function markupFrom(flags: Flags): { sizes?: string | undefined } | undefined {
  const sizes = flags.sizes as string | undefined;
  if (!flags.html) {
    if (sizes !== undefined) throw new InvalidArgumentError('--sizes applies only with --html');
    return undefined;
  }
  if (flags.json) throw new InvalidArgumentError('--html and --json both want standard output: give one');
  // A dry run writes nothing, so it knows neither the files' versions (`?v=`) nor the placeholder, nor
  // which alternates turn out heavier than the primary: its markup would not be the run's.
  if (flags.dryRun) {
    throw new InvalidArgumentError(
      '--html prints the markup of the files written, which --dry-run does not write: drop one (--dry-run lists them)',
    );
  }
  resolvePictureOptions({ sizes });
  return { sizes };
}
