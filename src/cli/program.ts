/**
 * The commander program: parses and normalises flags, then hands a typed options object to
 * a command module, imported lazily so `--help` never loads sharp.
 */
import { Command, Option } from 'commander';
import { createRequire } from 'node:module';
import { FORCEABLE_FORMATS } from '../renditions/formats.js';
import { DEFAULT_MEDIA_URL, NAMING_STYLES } from '../renditions/rules.js';
import { integerIn } from './parse.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

const EXIT_CODES = `
Exit codes:
  0  everything worked
  1  the command ran, but some items failed or problems were found
  2  the command could not run (bad flags, unwritable output folder, ...)`;

export function buildProgram(): Command {
  const program = new Command('content-api')
    .description("Renditions, inspection, checks and a local server for the gallery website's Content API.")
    .version(version)
    .option('--debug', 'print stack traces of unexpected errors')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', EXIT_CODES)
    .exitOverride();

  program
    .command('render')
    .summary('render originals into the five renditions and their Image objects')
    .description(
      'Render each original (files, or folders recursed) into five renditions, xs sm md lg xl, bounded by\n' +
        'boxes of 300, 600, 1200, 2400 and 4800 px, aspect kept, never upscaled, and describe each in an Image\n' +
        'object (spec 2.5). Unchanged originals whose files are intact are skipped (see --force).',
    )
    .argument('<inputs...>', 'original image files and folders of them')
    .option('-o, --out <dir>', 'output folder; folder structure below the inputs is kept', 'media')
    .option('--media-url <prefix>', 'URL prefix of the output folder in Image objects', DEFAULT_MEDIA_URL)
    .addOption(new Option('--naming <style>', 'file names: max = <name>.max-<n>x<n>.<ext>, underscore = <name>_<n>x<n>.<ext>').choices(NAMING_STYLES).default('max'))
    .addOption(new Option('--format <format>', 'convert every original to this format (default: keep web formats)').choices(FORCEABLE_FORMATS))
    .option('--jpeg-quality <1-100>', 'JPEG quality', integerIn('--jpeg-quality', 1, 100), 80)
    .option('--webp-quality <1-100>', 'WebP quality', integerIn('--webp-quality', 1, 100), 80)
    .option('--avif-quality <1-100>', 'AVIF quality', integerIn('--avif-quality', 1, 100), 50)
    .option('--keep-metadata', 'keep EXIF, XMP and IPTC metadata (default: stripped)')
    .option('--alt-text <file>', 'JSON object mapping originals (path or file name) to alt text')
    .option('--pixel-limit <pixels>', 'refuse originals larger than this many pixels; 0 for no limit', integerIn('--pixel-limit', 0), 268_402_689)
    .option('-j, --concurrency <n>', 'originals rendered at once (default: the number of cores)', integerIn('--concurrency', 1))
    .option('-f, --force', 'render everything again, even originals that are up to date')
    .option('-n, --dry-run', 'list what would be written, write nothing')
    .option('--json', 'print one JSON document with every result and failure on stdout')
    .addHelpText(
      'after',
      `
Examples:
  $ content-api render samples/originals --out media
  $ content-api render photos/ --out public/media --format webp --webp-quality 75 --json > images.json
  $ content-api render scan.tif --out media --media-url https://cdn.example.org/media/ --dry-run
${EXIT_CODES}`,
    )
    .action(async (inputs: string[], flags: Record<string, unknown>) => {
      const { runRender } = await import('./commands/render.js');
      process.exitCode = await runRender(inputs, {
        outDir: flags.out as string,
        mediaUrl: flags.mediaUrl as string,
        naming: flags.naming as (typeof NAMING_STYLES)[number],
        format: flags.format as (typeof FORCEABLE_FORMATS)[number] | undefined,
        quality: { jpeg: flags.jpegQuality as number, webp: flags.webpQuality as number, avif: flags.avifQuality as number },
        keepMetadata: Boolean(flags.keepMetadata),
        altTextFile: flags.altText as string | undefined,
        pixelLimit: flags.pixelLimit as number,
        concurrency: flags.concurrency as number | undefined,
        force: Boolean(flags.force),
        dryRun: Boolean(flags.dryRun),
        json: Boolean(flags.json),
      });
    });

  return program;
}
