/**
 * Entry point of the `content-api` binary: the process's part (a standard output that fails, the
 * environment), then the command line (run.ts), whose result is the exit code.
 */
import { printMessage, stderrStyles } from './output.js';
import { runCommandLine } from './run.js';

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

// The times a command says count from the process's start: its loading is part of the wait.
process.exitCode = await runCommandLine(process.argv, 0);
