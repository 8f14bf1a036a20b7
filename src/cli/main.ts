/**
 * Entry point of the `content-api` binary: runs the program and turns errors into one-line
 * messages and exit codes (0 ok, 1 problems found, 2 could not run).
 */
import { CommanderError } from 'commander';
import { ContentApiError } from '../errors.js';
import { printMessage, stderrStyles } from './output.js';
import { buildProgram } from './program.js';

// A reader that stops early (`| head`) gets no message, but a command still at work when it left
// did not finish what it was asked (a check's verdict on pages never read): exit 2, never a pass.
// Any other failure of standard output (a full disk) is one line, exit 2.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE')
    printMessage(`${stderrStyles().red('error')}: cannot write to standard output (${error.code ?? error.message})`);
  process.exit(process.exitCode ?? 2);
});

// The AWS SDK (loaded for s3:// locations only) warns on Node 20 about its releases of 2027;
// the version this package pins runs on Node 20, so the warning is not the user's to act on.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const program = buildProgram();
try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // commander has printed the message (or the help, or the version) already.
    process.exitCode = error.exitCode === 0 ? 0 : 2;
  } else {
    const { red } = stderrStyles();
    if (error instanceof ContentApiError && !program.opts().debug) {
      printMessage(`${red('error')}: ${error.message}`);
    } else {
      printMessage(`${red('error')}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    }
    process.exitCode = 2;
  }
}
