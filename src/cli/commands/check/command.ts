/**
 * `content-api check [targets...]`: its flags and help, with defaults from the config file;
 * the work is in run.ts. Without targets, `--verify-files` checks the archive whole.
 */
import { type Command, Option } from 'commander';
import { REPORTER_NAMES, type ReporterName } from '../../../check/reporters/index.js';
import { HTTP_DEFAULTS } from '../../../client/defaults.js';
import { epilogue } from '../../help.js';
import {
  addHttpOptions,
  addS3Options,
  addSiteOptions,
  baseUrlOption,
  concurrencyOption,
  type Flags,
  s3From,
  siteFrom,
} from '../../options.js';
import { integerIn } from '../../parse.js';

const DESCRIPTION =
  'Check pages (JSON files, folders of them, page ids or page endpoint URLs fetched from --base-url, or - ' +
  'for standard input) against the page schema and the rendition rules; with --verify-files, read the ' +
  'header of every media file a page names (on disk or over HTTP) and compare its real size and format ' +
  'with the JSON. With --verify-files and no targets, check the archive whole: every rendition the ' +
  'manifest in that folder or bucket prefix records (present, decodable, its recorded size and picture, ' +
  'the format its extension names, the sizes of its alternates). With --all-pages, every published page of the ' +
  'site at --base-url, walked from its listing (Wagtail API v2 or serve). ' +
  'Defaults for the flags, rule severities and ignored paths come from ' +
  'content-api.config.json (found upward from the working folder) or --config; flags win.';

const EXAMPLES = [
  'content-api check samples/pages --verify-files samples/content/media',
  'content-api check 101 201 --base-url http://127.0.0.1:8000 --verify-files http://127.0.0.1:8000 ' +
    '--reporter sarif -o check.sarif',
  'content-api check samples/content/pages --base-url http://127.0.0.1:8000 --verify-files samples/content/media',
  'content-api check pages/ --update-baseline check-baseline.json && ' +
    'content-api check pages/ --baseline check-baseline.json',
  'curl -s https://gallery.example.org/api/v2/pages/101/ | content-api check - --reporter github',
  'content-api check pages/ --verify-files s3://gallery-media/media/',
  'content-api check --verify-files s3://gallery-media/media/ --reporter junit -o archive.xml',
  'content-api check --all-pages --base-url https://gallery.example.org --verify-files https://gallery.example.org',
  'content-api check --all-pages --type site.PresentationPage --base-url http://127.0.0.1:8000 --reporter github',
];

const EXIT_CODES = {
  0: 'no findings (or only warnings, up to --max-warnings; findings in --baseline do not count)',
  1: 'findings',
  2:
    'could not run: bad flags, an invalid config file or baseline, a target that cannot be read or fetched,\n' +
    'a folder with no .json files, a listing (--all-pages) that cannot be read, refuses the filters or\n' +
    'gives no pages, a --verify-files folder that is not there, a folder or bucket prefix\n' +
    'that holds no files, a bucket that cannot be used or a server that cannot be reached; without\n' +
    'targets, no manifest in the --verify-files folder or prefix, or one (or a record of one) that\n' +
    'cannot be read or is not valid',
};

export function checkCommand(program: Command): Command {
  const command = program
    .command('check')
    .summary('prove that pages follow the rendition rules, and that the files behind them are right')
    .description(DESCRIPTION)
    .argument(
      '[targets...]',
      'page JSON files, folders, page ids, page endpoint URLs, or - for standard input; none: the archive ' +
        'checked whole (needs --verify-files)',
    )
    .addOption(
      baseUrlOption(
        'the API base URL: fetches page ids, fills {base_url} in content-folder pages, links the HTML report',
        { check: true },
      ),
    )
    .option(
      '--verify-files <folder|url>',
      'check every media file a page names: a folder or s3://bucket/prefix/ (URL paths below --media-prefix ' +
        'are looked up in it) or a base URL; without targets, every file the manifest of a folder or prefix records',
    )
    .option(
      '--media-prefix <path>',
      'URL path prefix of media files: strings under it are verified, and looked up below a --verify-files folder',
      '/media/',
    )
    .addOption(new Option('--reporter <name>', 'how to report').choices(REPORTER_NAMES).default('text'))
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
    .addOption(concurrencyOption('media files read at once', 16));
  addHttpOptions(command, {
    timeout: 'network timeout for pages and files (HTTP and S3)',
    retries: 'HTTP retries for page ids: connection errors, 502, 503, 504 and 429',
    deadline: 'HTTP deadline for each page fetched and each file read over HTTP, connecting to last byte',
    maxBytes: { what: 'largest page accepted (file, stdin or HTTP)', default: HTTP_DEFAULTS.maxBytes },
  });
  return addS3Options(addSiteOptions(command))
    .addHelpText('after', epilogue(EXAMPLES, EXIT_CODES))
    .action(async (targets: string[], flags: Flags, self: Command) => {
      const site = siteFrom(flags, targets);
      const { loadConfig } = await import('../../../check/config.js');
      const { withConfigDefaults } = await import('./config-defaults.js');
      const { runCheck } = await import('./run.js');
      const config = await loadConfig(flags.config as string | undefined);
      const given = (name: string) => ['cli', 'env'].includes(self.getOptionValueSource(name) ?? '');
      const merged = withConfigDefaults(flags, given, config);
      process.exitCode = await runCheck(targets, {
        site,
        baseUrl: merged.baseUrl as string | undefined,
        verifyFiles: merged.verifyFiles as string | undefined,
        mediaPrefix: merged.mediaPrefix as string,
        reporter: merged.reporter as ReporterName,
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
        s3: s3From(flags),
      });
    });
}
