/**
 * `content-api inspect <target>`: its flags and help; the work is in run.ts.
 */
import type { Command } from 'commander';
import { HTTP_DEFAULTS } from '../../../client/defaults.js';
import { InvalidArgumentError } from '../../../errors.js';
import { epilogue } from '../../help.js';
import {
  addHttpOptions,
  addS3Options,
  addSiteOptions,
  baseUrlOption,
  type Flags,
  httpFrom,
  s3From,
  siteFrom,
} from '../../options.js';

const DESCRIPTION =
  'Load one page (a page id fetched from GET {base-url}/api/v2/pages/<id>/, a page endpoint URL, a JSON file, ' +
  'or - for standard input: the targets check takes) and print its headline data, stage, block outline, ' +
  'every Image with its five rendition sizes, the linked resources, and every problem found (JSON path and rule). ' +
  'With --all-pages, every published page of the site at --base-url, one report after another.';

const EXAMPLES = [
  'content-api inspect 101 --base-url http://127.0.0.1:8000',
  'content-api inspect samples/content/pages/101.json --verify-files samples/content/media',
  'content-api inspect samples/pages/presentation-every-block.json',
  "curl -s https://gallery.example.org/api/v2/pages/101/ | content-api inspect - --json | jq '.problems'",
  'CONTENT_API_BASE_URL=https://gallery.example.org content-api inspect 101 --format-api',
  'content-api inspect --all-pages --child-of 100 --base-url http://127.0.0.1:8000',
  "content-api inspect --all-pages --base-url http://127.0.0.1:8000 --json | jq '.[] | select(.errors > 0) | .url'",
];

const EXIT_CODES = {
  0: 'the page is valid (warnings may be listed); with --all-pages, every page is',
  1:
    'the page was read but problems were found, or it is JSON but not a page; with --all-pages, so was one\n' +
    'page at least, or one could not be fetched',
  2:
    'could not inspect: not found, unreachable, not JSON, bad flags; with --all-pages, a listing that cannot\n' +
    'be read, refuses the filters or gives no pages',
};

export function inspectCommand(program: Command): Command {
  const command = program
    .command('inspect')
    .summary('report on one page: from the Content API, a file, or standard input; or on every page of a site')
    .description(DESCRIPTION)
    .argument('[target]', 'a page id, a page endpoint URL, a page JSON file, or - for standard input')
    .addOption(
      baseUrlOption('the API base URL (no /api/v2 part): fetches a page id, fills {base_url} in a content-folder page'),
    )
    .option(
      '--format-api',
      'request ?format=api (a page id) or say the page was requested so, and check the URL rule that goes with it',
    )
    .option(
      '--verify-files <folder|url>',
      "also read every media file the page names and hold it to check's file rules: a folder or " +
        's3://bucket/prefix/ (URL paths below --media-prefix are looked up in it) or a base URL',
    )
    .option(
      '--media-prefix <path>',
      'URL path prefix of media files, looked up below a --verify-files folder',
      '/media/',
    );
  addHttpOptions(command, {
    timeout: 'timeout for connecting, headers, and between body chunks',
    retries: 'retries for connection errors, 502, 503, 504 and 429',
    deadline: 'deadline for the whole exchange, connecting to last byte',
    maxBytes: { what: 'largest response body accepted', default: HTTP_DEFAULTS.maxBytes },
  });
  command.option('--json', 'print the report as one JSON document (with --all-pages, a JSON array of them)');
  return addS3Options(addSiteOptions(command))
    .addHelpText('after', epilogue(EXAMPLES, EXIT_CODES))
    .action(async (target: string | undefined, flags: Flags) => {
      const site = siteFrom(flags, target === undefined ? [] : [target]);
      if (!site && target === undefined)
        throw new InvalidArgumentError("missing required argument 'target' (or --all-pages for every page of a site)");
      if (site && flags.formatApi) throw new InvalidArgumentError('--format-api is for one page, not --all-pages');
      const { runInspect } = await import('./run.js');
      process.exitCode = await runInspect(site ?? target!, {
        ...httpFrom(flags),
        baseUrl: flags.baseUrl as string | undefined,
        formatApi: Boolean(flags.formatApi),
        json: Boolean(flags.json),
        verifyFiles: flags.verifyFiles as string | undefined,
        mediaPrefix: flags.mediaPrefix as string,
        s3: s3From(flags),
      });
    });
}
