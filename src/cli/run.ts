/**
 * The command line as a function: parses `argv`, runs the command, turns errors into one-line
 * messages, and returns the exit code (0 ok, 1 problems found, 2 could not run). The binary calls it
 * once (main.ts); the tests call it in their own process where the process is not what they test.
 */
import { CommanderError } from 'commander';
import { ContentApiError } from '../errors.js';
import { printMessage, stderrStyles } from './output.js';
import { buildProgram } from './program.js';
import { startCommandClock } from './progress.js';

/**
 * Runs `argv` (as `process.argv`: node, the script, then the arguments) and returns its exit code.
 * `startedAt` (on `performance.now()`'s clock) is when the times a command says count from: the
 * call by default, the process's start for the binary.
 */
export async function runCommandLine(argv: string[], startedAt = performance.now()): Promise<number> {
  startCommandClock(startedAt);
  const program = buildProgram();
  try {
    // A command's action sets the exit code of its work (1 when it found problems).
    process.exitCode = undefined;
    await program.parseAsync(argv);
    return Number(process.exitCode ?? 0);
  } catch (error) {
    // commander has printed the message (or the help, or the version) already.
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    const { red } = stderrStyles();
    if (error instanceof ContentApiError && !program.opts().debug) {
      printMessage(`${red('error')}: ${error.message}`);
    } else {
      printMessage(`${red('error')}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    }
    return 2;
  }
}
