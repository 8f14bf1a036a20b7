/**
 * `content-api serve`: its flags and help; the server runs in run.ts.
 */
import { type Command, Option } from 'commander';
import { epilogue } from '../../help.js';
import type { Flags } from '../../options.js';
import { httpUrl, integerIn } from '../../parse.js';

const DESCRIPTION =
  'Serve GET/HEAD/OPTIONS /api/v2/pages/<id>/, the listing /api/v2/pages/ and /api/v2/pages/find/ as Wagtail API ' +
  'v2 answers them (type, fields, child_of, descendant_of, order, search, offset, limit, field filters), the ' +
  'linked resources and /media/ rendition files from a content folder (layout and every parameter in ' +
  'docs/commands/serve.md). Invalid content stops the server with every problem listed.';

const EXAMPLES = [
  'content-api serve',
  'content-api serve --content ./content --port 9000 --base-url https://staging.example.org',
  'content-api serve --port 0 --quiet',
  'content-api serve --limit-max 100   # then: curl "http://127.0.0.1:8000/api/v2/pages/?limit=100&fields=seo_title"',
];

const EXIT_CODES = {
  0: 'stopped by SIGINT or SIGTERM',
  2: 'could not serve: invalid content (every problem listed), port in use, bad flags',
};

export function serveCommand(program: Command): Command {
  return program
    .command('serve')
    .summary('serve the read-only Content API over a content folder')
    .description(DESCRIPTION)
    .option('--content <dir>', 'the content folder', 'samples/content')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('-p, --port <n>', 'port (0: any free port)', integerIn('--port', 0, 65535), 8000)
    .addOption(
      // Not from CONTENT_API_BASE_URL: that names the API to fetch from, this the one being served.
      new Option('--base-url <url>', 'base of absolute URLs in responses (default: the request Host)').argParser(
        httpUrl('--base-url'),
      ),
    )
    .option(
      '--limit-max <n>',
      "the most items a listing request may ask for (Wagtail's WAGTAILAPI_LIMIT_MAX; 0: no maximum)",
      integerIn('--limit-max', 0),
      20,
    )
    .option('-q, --quiet', 'no access log')
    .addHelpText('after', epilogue(EXAMPLES, EXIT_CODES))
    .action(async (flags: Flags) => {
      const { runServe } = await import('./run.js');
      process.exitCode = await runServe({
        content: flags.content as string,
        host: flags.host as string,
        port: flags.port as number,
        baseUrl: flags.baseUrl as string | undefined,
        quiet: Boolean(flags.quiet),
        limitMax: flags.limitMax as number,
      });
    });
}
