/**
 * The commander program: the root's own options and help, and each command from its folder
 * under commands/ (flags, help and flag rules there; the work loaded only when it runs, so
 * `--help` never loads sharp).
 */
import { createRequire } from 'node:module';
import { Command } from 'commander';
import { checkCommand } from './commands/check/command.js';
import { inspectCommand } from './commands/inspect/command.js';
import { queueCommand } from './commands/queue/command.js';
import { renderCommand } from './commands/render/command.js';
import { schemaCommand } from './commands/schema/command.js';
import { serveCommand } from './commands/serve/command.js';
import { workerCommand } from './commands/worker/command.js';
import { epilogue } from './help.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/** Every command, in the order `--help` lists them. */
const COMMANDS = [
  renderCommand,
  workerCommand,
  queueCommand,
  inspectCommand,
  checkCommand,
  serveCommand,
  schemaCommand,
];

const EXAMPLES = [
  'content-api render samples/originals --out media',
  'content-api serve &',
  'content-api inspect 101 --base-url http://127.0.0.1:8000',
  'content-api check 101 --base-url http://127.0.0.1:8000 --verify-files http://127.0.0.1:8000',
  'content-api help render',
];

export function buildProgram(): Command {
  const program = new Command('content-api')
    .description("Renditions, inspection, checks and a local server for the gallery website's Content API.")
    .version(version)
    .option('--debug', 'print stack traces of unexpected errors')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', epilogue(EXAMPLES))
    .exitOverride();
  for (const command of COMMANDS) command(program);
  return program;
}
