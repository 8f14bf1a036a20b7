/**
 * The commander program: parses and normalises flags, then hands a typed options object to
 * a command module, imported lazily so `--help` never loads sharp.
 */

import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { Command, Option } from 'commander';
import { InvalidArgumentError } from '../errors.js';
import { FORCEABLE_FORMATS } from '../renditions/formats.js';
import { DEFAULT_MEDIA_URL, NAMING_STYLES } from '../renditions/rules.js';
import { parseShard } from '../renditions/shard.js';
import { printData } from './output.js';
import { httpUrl, integerIn, originsFor } from './parse.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/** `check --reporter` names (also in the config file's schema). */
const REPORTER_CHOICES = ['text', 'json', 'json-lines', 'junit', 'github', 'sarif', 'html'];

const EXIT_CODES = `
Exit codes:
  0  everything worked
  1  the command ran, but some items failed or problems were found
  2  the command could not run (bad flags, unwritable output folder, ...)`;

const S3_GROUP = 'S3 (s3:// locations; credentials, region and endpoint as every AWS tool reads them):';
const S3_PATH_STYLE =
  'address buckets as https://host/bucket/ (S3-compatible services; always on for IP addresses and localhost)';
const s3EndpointOption = () =>
  new Option(
    '--s3-endpoint <url>',
    'an S3-compatible service (default: AWS, or AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL)',
  ).argParser(httpUrl('--s3-endpoint'));
const s3Options = (flags: Record<string, unknown>) => ({
  endpoint: flags.s3Endpoint as string | undefined,
  pathStyle: Boolean(flags.s3PathStyle),
  timeoutMs: flags.timeout as number,
});

/** `--queue`; from CONTENT_API_QUEUE too for the queue's own commands, never for render (a worker's setting must not turn renders into queue renders). */
const queueOption = (what: string, fromEnvironment = true) => {
  const option = new Option('--queue <redis-url>', `${what}: redis://[user:password@]host[:port][/db] or rediss://`);
  return fromEnvironment ? option.env('CONTENT_API_QUEUE').makeOptionMandatory() : option;
};
const queueNameOption = () =>
  new Option('--queue-name <name>', 'the queue in that Redis').env('CONTENT_API_QUEUE_NAME').default('content-api');
const queueTarget = (flags: Record<string, unknown>) => ({
  url: flags.queue as string,
  name: flags.queueName as string,
  timeoutMs: flags.timeout as number | undefined,
});

/** `writePage` -> `--write-page`; `download` -> `--no-download`. */
const flagName = (name: string) =>
  name === 'download' ? '--no-download' : `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

export function buildProgram(): Command {
  const program = new Command('content-api')
    .description("Renditions, inspection, checks and a local server for the gallery website's Content API.")
    .version(version)
    .option('--debug', 'print stack traces of unexpected errors')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText(
      'after',
      `
Examples:
  $ content-api render samples/originals --out media
  $ content-api serve &
  $ content-api inspect 101 --base-url http://127.0.0.1:8000
  $ content-api check 101 --base-url http://127.0.0.1:8000 --verify-files http://127.0.0.1:8000
  $ content-api help render
${EXIT_CODES}`,
    )
    .exitOverride();

  program
    .command('render')
    .summary('render originals into the five renditions and their Image objects')
    .description(
      'Render each original (files, or folders recursed) into five renditions, xs sm md lg xl, bounded by ' +
        'boxes of 300, 600, 1200, 2400 and 4800 px, aspect kept, never upscaled, and describe each in an Image ' +
        'object (spec 2.5). Unchanged originals whose files are intact are skipped (see --force).\n\n' +
        'With --page, render every image of a page instead: each source once, from the original of the same ' +
        'name in --originals or else from the largest rendition the page names, and with --write-page write ' +
        "the page with each Image's sizes and srcset brought in line, nothing else changed.",
    )
    .argument('[inputs...]', 'original image files and folders of them, or s3://bucket/prefix/')
    .option(
      '-o, --out <dir>',
      'output folder or s3://bucket/prefix/; folder structure below the inputs is kept',
      'media',
    )
    .option('--media-url <prefix>', 'URL prefix of the output folder in Image objects', DEFAULT_MEDIA_URL)
    .addOption(
      new Option('--naming <style>', 'file names: max = <name>.max-<n>x<n>.<ext>, underscore = <name>_<n>x<n>.<ext>')
        .choices(NAMING_STYLES)
        .default('max'),
    )
    .addOption(
      new Option('--format <format>', 'convert every original to this format (default: keep web formats)').choices(
        FORCEABLE_FORMATS,
      ),
    )
    .option('--jpeg-quality <1-100>', 'JPEG quality', integerIn('--jpeg-quality', 1, 100), 80)
    .option('--webp-quality <1-100>', 'WebP quality', integerIn('--webp-quality', 1, 100), 80)
    .option('--avif-quality <1-100>', 'AVIF quality', integerIn('--avif-quality', 1, 100), 50)
    .option('--keep-metadata', 'keep EXIF, XMP and IPTC metadata (default: stripped)')
    .option('--alt-text <file>', 'JSON object mapping originals (path or file name) to alt text')
    .option(
      '--pixel-limit <pixels>',
      'refuse originals larger than this many pixels; 0 for no limit',
      integerIn('--pixel-limit', 0),
      268_402_689,
    )
    .option(
      '-j, --concurrency <n>',
      'originals rendered at once (default: the number of cores)',
      integerIn('--concurrency', 1),
    )
    .option(
      '--shard <i/n>',
      "render only shard i (from 0) of n, by a hash of each original's name; auto/n takes i from JOB_COMPLETION_INDEX or AWS_BATCH_JOB_ARRAY_INDEX",
      (value: string) => value,
    )
    .option(
      '-f, --force',
      'render everything again, even what is up to date, and replace renditions another original wrote earlier',
    )
    .option('-n, --dry-run', 'list what would be written, write nothing')
    .option('--json', 'print one JSON document with every result and failure on stdout')
    .optionsGroup("Re-rendering a page's images (--page):")
    .option(
      '--page <id|file|->',
      'render every image of a page instead: a page id (from --base-url), a page endpoint URL, a JSON file, or - for standard input',
    )
    .option(
      '--originals <dir>',
      "originals for --page (a folder or s3://bucket/prefix/), matched by name to the images' rendition files (<name>.max-<n>x<n>.<ext>)",
    )
    .addOption(
      new Option(
        '--base-url <url>',
        'the API base URL: fetches a page id, and resolves /media/... URLs for downloads',
      ).env('CONTENT_API_BASE_URL'),
    )
    .option(
      '--no-download',
      "never download an image's largest rendition when no original matches it; such images fail",
    )
    .option(
      '--download-from <origin>',
      'also download renditions from this origin (repeatable; default: only the --base-url origin)',
      originsFor('--download-from'),
    )
    .option('--write-page <file>', "write the page with each Image's sizes and srcset replaced (- for standard output)")
    .option(
      '--timeout <ms>',
      'network timeout for the page, downloads and S3 requests: connecting, waiting, silence',
      integerIn('--timeout', 1),
      10_000,
    )
    .option('--retries <n>', 'HTTP retries for connection errors, 502, 503, 504 and 429', integerIn('--retries', 0), 3)
    .option(
      '--deadline <ms>',
      'whole-exchange deadline for the page and each download, connecting to last byte',
      integerIn('--deadline', 1),
      60_000,
    )
    .option(
      '--max-bytes <n>',
      'largest page (file, stdin or HTTP) and largest download accepted',
      integerIn('--max-bytes', 1),
      64 * 1024 * 1024,
    )
    .optionsGroup(S3_GROUP)
    .addOption(s3EndpointOption())
    .option('--s3-path-style', S3_PATH_STYLE)
    .optionsGroup('Rendering on workers (content-api worker), through a BullMQ queue on Redis:')
    .addOption(
      queueOption(
        'enqueue one job per original; workers render them; this command prints the same report as a local render',
        false,
      ),
    )
    .addOption(queueNameOption())
    .option('--detach', 'enqueue, print the batch id on stdout, and exit; read the report later with queue results')
    .addHelpText(
      'after',
      `
Examples:
  $ content-api render samples/originals --out media
  $ content-api render photos/ --out public/media --format webp --webp-quality 75 --json > images.json
  $ content-api render scan.tif --out media --media-url https://cdn.example.org/media/ --dry-run
  $ content-api render --page 101 --base-url http://127.0.0.1:8000 --originals samples/originals --out media --write-page page-101.json
  $ content-api render --page page.json --base-url https://gallery.example.org --out media --write-page page.json
  $ content-api render --page 101 --base-url https://gallery.example.org --download-from https://cdn.example.org --out media
  $ content-api render s3://gallery-originals/2026/ --out s3://gallery-media/media/ --media-url https://cdn.example.org/media/
  $ content-api render s3://gallery-originals/ --out s3://gallery-media/media/ --shard auto/16
  $ content-api render s3://gallery-originals/ --out s3://gallery-media/media/ --queue redis://redis.internal:6379
${EXIT_CODES}`,
    )
    .action(async (inputs: string[], flags: Record<string, unknown>, command: Command) => {
      const common = {
        outDir: flags.out as string,
        mediaUrl: flags.mediaUrl as string,
        naming: flags.naming as (typeof NAMING_STYLES)[number],
        format: flags.format as (typeof FORCEABLE_FORMATS)[number] | undefined,
        quality: {
          jpeg: flags.jpegQuality as number,
          webp: flags.webpQuality as number,
          avif: flags.avifQuality as number,
        },
        keepMetadata: Boolean(flags.keepMetadata),
        pixelLimit: flags.pixelLimit as number,
        concurrency: flags.concurrency as number | undefined,
        shard: flags.shard === undefined ? undefined : parseShard(flags.shard as string),
        force: Boolean(flags.force),
        dryRun: Boolean(flags.dryRun),
        json: Boolean(flags.json),
        s3: s3Options(flags),
      };
      const { runRender, runRenderPage } = await import('./commands/render.js');
      if (flags.detach && flags.queue === undefined)
        throw new InvalidArgumentError('--detach applies only with --queue');
      if (flags.queue !== undefined) {
        if (flags.page !== undefined)
          throw new InvalidArgumentError(
            "--queue does not apply to --page: a page's images are rendered here, together",
          );
        if (flags.dryRun) throw new InvalidArgumentError('--dry-run plans here, reading only headers: drop --queue');
        if (flags.concurrency !== undefined)
          throw new InvalidArgumentError(
            "--concurrency is the workers' (content-api worker --concurrency), not the queue's",
          );
        if (inputs.length === 0)
          throw new InvalidArgumentError('Expected originals to render (files, folders or s3:// prefixes)');
        const { runQueueRender } = await import('./commands/queue.js');
        process.exitCode = await runQueueRender(inputs, {
          ...common,
          altTextFile: flags.altText as string | undefined,
          queue: queueTarget(flags),
          detach: Boolean(flags.detach),
        });
        return;
      }
      if (flags.page === undefined) {
        const pageOnly = ['originals', 'writePage', 'download', 'downloadFrom'].filter(
          (name) => command.getOptionValueSource(name) === 'cli',
        );
        if (pageOnly.length > 0)
          throw new InvalidArgumentError(
            `${pageOnly.map(flagName).join(', ')} ${pageOnly.length === 1 ? 'applies' : 'apply'} only with --page`,
          );
        if (inputs.length === 0)
          throw new InvalidArgumentError('Expected originals to render (files or folders), or --page');
        process.exitCode = await runRender(inputs, { ...common, altTextFile: flags.altText as string | undefined });
        return;
      }
      if (inputs.length > 0)
        throw new InvalidArgumentError(
          `Expected original files and folders or --page, not both (got ${inputs.join(' ')} and --page)`,
        );
      if (flags.shard !== undefined)
        throw new InvalidArgumentError("--shard does not apply to --page: a page's images are rendered together");
      if (flags.altText)
        throw new InvalidArgumentError("--alt-text does not apply to --page: the alt text is the page's own");
      process.exitCode = await runRenderPage({
        ...common,
        page: flags.page as string,
        originals: flags.originals as string | undefined,
        baseUrl: flags.baseUrl as string | undefined,
        download: flags.download as boolean,
        downloadFrom: flags.downloadFrom as string[] | undefined,
        writePage: flags.writePage as string | undefined,
        timeoutMs: flags.timeout as number,
        deadlineMs: flags.deadline as number,
        retries: flags.retries as number,
        maxBytes: flags.maxBytes as number,
      });
    });

  program
    .command('worker')
    .summary('render the jobs of a queue (render --queue), on this machine, until stopped')
    .description(
      'Take render jobs from a BullMQ queue on Redis, one per original, and render them with the same pipeline ' +
        'as a local render, --concurrency at a time, into the output location each job names (an s3:// bucket, or ' +
        'a folder this machine shares). Run as many workers, on as many machines, as you like. SIGTERM finishes ' +
        'the jobs under way and exits; a worker killed outright loses nothing: its jobs run again elsewhere within ' +
        "15 s. Credentials for S3 come from this machine's environment.",
    )
    .addOption(queueOption('the queue to work for'))
    .addOption(queueNameOption())
    .option(
      '-j, --concurrency <n>',
      'originals rendered at once (default: the number of cores)',
      integerIn('--concurrency', 1),
    )
    .option(
      '--timeout <ms>',
      'connecting to Redis at start, and S3 timeouts: connecting, waiting, silence',
      integerIn('--timeout', 1),
      10_000,
    )
    .option('-q, --quiet', 'no line per job')
    .optionsGroup(S3_GROUP)
    .addOption(s3EndpointOption())
    .option('--s3-path-style', S3_PATH_STYLE)
    .addHelpText(
      'after',
      `
Examples:
  $ content-api worker --queue redis://redis.internal:6379 --concurrency 2
  $ CONTENT_API_QUEUE=redis://redis.internal:6379 content-api worker --quiet

Exit codes:
  0  stopped by SIGTERM or SIGINT, the jobs under way finished
  2  could not start: Redis unreachable, a queue name of another application, bad flags`,
    )
    .action(async (flags: Record<string, unknown>) => {
      const { runWorker } = await import('./commands/queue.js');
      process.exitCode = await runWorker({
        queue: queueTarget(flags),
        concurrency: (flags.concurrency as number | undefined) ?? availableParallelism(),
        s3: s3Options(flags),
        quiet: Boolean(flags.quiet),
      });
    });

  const queue = program
    .command('queue')
    .summary('what a render queue holds; the report of a batch')
    .description(
      'Look at a render queue (render --queue, content-api worker): its jobs, workers and rate, or the report of one batch.',
    );
  queue
    .command('status')
    .description(
      'Jobs waiting, active and retrying, workers connected, originals finished, the rate over the last minute and the time left, and the latest batches.',
    )
    .addOption(queueOption('the queue'))
    .option('--timeout <ms>', 'connecting to Redis', integerIn('--timeout', 1), 10_000)
    .addOption(queueNameOption())
    .option('--json', 'print the status as one JSON document')
    .addHelpText(
      'after',
      `
Examples:
  $ content-api queue status --queue redis://redis.internal:6379
  $ watch -n 5 content-api queue status --queue redis://redis.internal:6379

Exit codes:
  0  the status was printed
  2  Redis unreachable, no content-api queue of that name, bad flags`,
    )
    .action(async (flags: Record<string, unknown>) => {
      const { runQueueStatus } = await import('./commands/queue.js');
      process.exitCode = await runQueueStatus({ queue: queueTarget(flags), json: Boolean(flags.json) });
    });
  queue
    .command('results')
    .description(
      'The report of a batch (render --queue --detach printed its id), as render prints it: waits until every job has finished, unless --no-wait. Batches are kept 7 days.',
    )
    .argument('<batch>', 'the batch id')
    .addOption(queueOption('the queue'))
    .option('--timeout <ms>', 'connecting to Redis', integerIn('--timeout', 1), 10_000)
    .addOption(queueNameOption())
    .option('--no-wait', 'report what has finished now; the rest is listed as still queued')
    .option('--alt-text <file>', 'JSON object mapping originals (path or file name) to alt text, for the Image objects')
    .option('--json', 'print one JSON document with every result and failure on stdout')
    .addHelpText(
      'after',
      `
Examples:
  $ batch=$(content-api render s3://gallery-originals/ --out s3://gallery-media/media/ --queue redis://redis.internal:6379 --detach)
  $ content-api queue results "$batch" --queue redis://redis.internal:6379 --json > images.json

Exit codes:
  0  every original rendered or up to date
  1  some originals failed, or (--no-wait) are still queued
  2  Redis unreachable, no such batch, bad flags`,
    )
    .action(async (batch: string, flags: Record<string, unknown>) => {
      const { runQueueResults } = await import('./commands/queue.js');
      process.exitCode = await runQueueResults(batch, {
        queue: queueTarget(flags),
        wait: flags.wait as boolean,
        json: Boolean(flags.json),
        altTextFile: flags.altText as string | undefined,
      });
    });

  program
    .command('inspect')
    .summary('report on one page: from the Content API, a file, or standard input')
    .description(
      'Load one page (a page id fetched from GET {base-url}/api/v2/pages/<id>/, a page endpoint URL, a JSON file, ' +
        'or - for standard input: the targets check takes) and print its headline data, stage, block outline, ' +
        'every Image with its five rendition sizes, the linked resources, and every problem found (JSON path and rule).',
    )
    .argument('<target>', 'a page id, a page endpoint URL, a page JSON file, or - for standard input')
    .addOption(
      new Option(
        '--base-url <url>',
        'the API base URL (no /api/v2 part): fetches a page id, fills {base_url} in a content-folder page',
      ).env('CONTENT_API_BASE_URL'),
    )
    .option(
      '--format-api',
      'request ?format=api (a page id) or say the page was requested so, and check the URL rule that goes with it',
    )
    .option(
      '--timeout <ms>',
      'timeout for connecting, headers, and between body chunks',
      integerIn('--timeout', 1),
      10_000,
    )
    .option('--retries <n>', 'retries for connection errors, 502, 503, 504 and 429', integerIn('--retries', 0), 3)
    .option(
      '--deadline <ms>',
      'deadline for the whole exchange, connecting to last byte',
      integerIn('--deadline', 1),
      60_000,
    )
    .option('--max-bytes <n>', 'largest response body accepted', integerIn('--max-bytes', 1), 16 * 1024 * 1024)
    .option('--json', 'print the report as one JSON document')
    .addHelpText(
      'after',
      `
Examples:
  $ content-api inspect 101 --base-url http://127.0.0.1:8000
  $ content-api inspect samples/pages/presentation-every-block.json
  $ curl -s https://gallery.example.org/api/v2/pages/101/ | content-api inspect - --json | jq '.problems'
  $ CONTENT_API_BASE_URL=https://gallery.example.org content-api inspect 101 --format-api

Exit codes:
  0  the page is valid (warnings may be listed)
  1  the page was read but problems were found
  2  could not inspect: not found, unreachable, not JSON, bad flags`,
    )
    .action(async (target: string, flags: Record<string, unknown>) => {
      const { runInspect } = await import('./commands/inspect.js');
      process.exitCode = await runInspect(target, {
        baseUrl: flags.baseUrl as string | undefined,
        formatApi: Boolean(flags.formatApi),
        timeoutMs: flags.timeout as number,
        deadlineMs: flags.deadline as number,
        retries: flags.retries as number,
        maxBytes: flags.maxBytes as number,
        json: Boolean(flags.json),
      });
    });

  program
    .command('check')
    .summary('prove that pages follow the rendition rules, and that the files behind them are right')
    .description(
      'Check pages (JSON files, folders of them, page ids or page endpoint URLs fetched from --base-url, or - ' +
        'for standard input) against the page schema and the rendition rules; with --verify-files, read the ' +
        'header of every media file a page names (on disk or over HTTP) and compare its real size and format ' +
        'with the JSON. Defaults for the flags, rule severities and ignored paths come from ' +
        'content-api.config.json (found upward from the working folder) or --config; flags win.',
    )
    .argument('<targets...>', 'page JSON files, folders, page ids, page endpoint URLs, or - for standard input')
    .addOption(
      new Option(
        '--base-url <url>',
        'the API base URL: fetches page ids, fills {base_url} in content-folder pages, links the HTML report',
      )
        .env('CONTENT_API_BASE_URL')
        .argParser(httpUrl('--base-url')),
    )
    .option(
      '--verify-files <folder|url>',
      'check every media file a page names: a folder or s3://bucket/prefix/ (URL paths below --media-prefix are looked up in it) or a base URL',
    )
    .option(
      '--media-prefix <path>',
      'URL path prefix of media files: strings under it are verified, and looked up below a --verify-files folder',
      '/media/',
    )
    .addOption(new Option('--reporter <name>', 'how to report').choices(REPORTER_CHOICES).default('text'))
    .option('-o, --output <file>', 'write the report to this file instead of stdout')
    .option(
      '--config <file>',
      'the config file (default: content-api.config.json in this folder or the nearest one above)',
    )
    .option('--baseline <file>', 'fail only on findings that this baseline does not hold; list the ones fixed since')
    .option(
      '--update-baseline <file>',
      'write every finding of this run to a baseline file (exit 0 unless the check could not run)',
    )
    .option('--max-warnings <n>', 'warnings allowed before the check fails', integerIn('--max-warnings', 0), 0)
    .option('-j, --concurrency <n>', 'media files read at once', integerIn('--concurrency', 1), 16)
    .option('--timeout <ms>', 'network timeout for pages and files (HTTP and S3)', integerIn('--timeout', 1), 10_000)
    .option(
      '--retries <n>',
      'HTTP retries for page ids: connection errors, 502, 503, 504 and 429',
      integerIn('--retries', 0),
      3,
    )
    .option(
      '--deadline <ms>',
      'HTTP deadline for each page fetched, connecting to last byte',
      integerIn('--deadline', 1),
      60_000,
    )
    .option(
      '--max-bytes <n>',
      'largest page accepted (file, stdin or HTTP)',
      integerIn('--max-bytes', 1),
      16 * 1024 * 1024,
    )
    .optionsGroup(S3_GROUP)
    .addOption(s3EndpointOption())
    .option('--s3-path-style', S3_PATH_STYLE)
    .addHelpText(
      'after',
      `
Examples:
  $ content-api check samples/pages --verify-files samples/content/media
  $ content-api check 101 201 --base-url http://127.0.0.1:8000 --verify-files http://127.0.0.1:8000 --reporter sarif -o check.sarif
  $ content-api check samples/content/pages --base-url http://127.0.0.1:8000 --verify-files samples/content/media
  $ content-api check pages/ --update-baseline check-baseline.json && content-api check pages/ --baseline check-baseline.json
  $ curl -s https://gallery.example.org/api/v2/pages/101/ | content-api check - --reporter github
  $ content-api check pages/ --verify-files s3://gallery-media/media/

Exit codes:
  0  no findings (or only warnings, up to --max-warnings; findings in --baseline do not count)
  1  findings
  2  could not run: bad flags, an invalid config file or baseline, a target that cannot be read or fetched,
     a --verify-files folder that is not there or a server that cannot be reached`,
    )
    .action(async (targets: string[], flags: Record<string, unknown>, command: Command) => {
      const { loadConfig } = await import('../config/config.js');
      const { runCheck, withConfigDefaults } = await import('./commands/check.js');
      const config = await loadConfig(flags.config as string | undefined);
      const given = (name: string) => ['cli', 'env'].includes(command.getOptionValueSource(name) ?? '');
      const merged = withConfigDefaults(flags, given, config);
      process.exitCode = await runCheck(targets, {
        baseUrl: merged.baseUrl as string | undefined,
        verifyFiles: merged.verifyFiles as string | undefined,
        mediaPrefix: merged.mediaPrefix as string,
        reporter: merged.reporter as 'text',
        output: merged.output as string | undefined,
        maxWarnings: merged.maxWarnings as number,
        concurrency: merged.concurrency as number,
        timeoutMs: merged.timeout as number,
        deadlineMs: merged.deadline as number,
        retries: merged.retries as number,
        maxBytes: merged.maxBytes as number,
        config,
        baseline: merged.baseline as string | undefined,
        updateBaseline: merged.updateBaseline as string | undefined,
        s3: s3Options(flags),
      });
    });

  program
    .command('serve')
    .summary('serve the read-only Content API over a content folder')
    .description(
      'Serve GET/HEAD/OPTIONS /api/v2/pages/<id>/, the linked resources and /media/ rendition files from a content folder (layout in the README). Invalid content stops the server with every problem listed.',
    )
    .option('--content <dir>', 'the content folder', 'samples/content')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('-p, --port <n>', 'port (0: any free port)', integerIn('--port', 0, 65535), 8000)
    .addOption(
      new Option('--base-url <url>', 'base of absolute URLs in responses (default: the request Host)').argParser(
        httpUrl('--base-url'),
      ),
    )
    .option('-q, --quiet', 'no access log')
    .addHelpText(
      'after',
      `
Examples:
  $ content-api serve
  $ content-api serve --content ./content --port 9000 --base-url https://staging.example.org
  $ content-api serve --port 0 --quiet

Exit codes:
  0  stopped by SIGINT or SIGTERM
  2  could not serve: invalid content (every problem listed), port in use, bad flags`,
    )
    .action(async (flags: Record<string, unknown>) => {
      const { runServe } = await import('./commands/serve.js');
      process.exitCode = await runServe({
        content: flags.content as string,
        host: flags.host as string,
        port: flags.port as number,
        baseUrl: flags.baseUrl as string | undefined,
        quiet: Boolean(flags.quiet),
      });
    });

  program
    .command('schema')
    .summary('print the JSON Schema of the Page, or of the config file')
    .description(
      'Print the JSON Schema (draft 2020-12) of the Page, generated from the zod model, for other languages and tools; with --config, that of content-api.config.json.',
    )
    .option('--config', 'print the schema of the config file (content-api.config.json) instead')
    .addHelpText(
      'after',
      '\nExamples:\n  $ content-api schema > page.schema.json\n  $ content-api schema | jq .properties.meta\n  $ content-api schema --config > content-api.config.schema.json',
    )
    .action(async (flags: Record<string, unknown>) => {
      if (flags.config) {
        const { configJsonSchema } = await import('../config/config.js');
        printData(JSON.stringify(configJsonSchema(), null, 2));
        return;
      }
      const { pageJsonSchema } = await import('../page/schema.js');
      printData(JSON.stringify(pageJsonSchema(), null, 2));
    });

  return program;
}
