/**
 * Runs the built binary as a user would: `node bin/content-api.js ...`, without colour and
 * as in CI, and collects its exit code and output.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/content-api.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  cwd?: string;
  /** Written to standard input (which is otherwise closed). */
  input?: string;
  /** Variables added to (or, undefined, removed from) the environment. */
  env?: Record<string, string | undefined>;
  /** A program, with its arguments, that runs node with the rest: `['taskset', '-c', '0']` for one core. */
  wrapper?: string[];
}

export function startCli(
  args: string[],
  options: CliOptions = {},
): { child: ChildProcess; done: Promise<CliResult>; output: () => { stdout: string; stderr: string } } {
  const [program, ...before] = [...(options.wrapper ?? []), process.execPath];
  const child = spawn(program!, [...before, BIN, ...args], {
    cwd: options.cwd,
    env: { ...process.env, NO_COLOR: '1', CI: '1', FORCE_COLOR: undefined, ...options.env },
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (options.input !== undefined) child.stdin!.end(options.input);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done, output: () => ({ stdout, stderr }) };
}

/** Runs the CLI, SIGKILLed after `ms` if it has not ended (its `signal` then says so): a hang fails, not stalls. */
export async function runWithin(args: string[], ms = 20_000, options: CliOptions = {}): Promise<CliResult> {
  const { child, done } = startCli(args, options);
  const timer = setTimeout(() => child.kill('SIGKILL'), ms);
  try {
    return await done;
  } finally {
    clearTimeout(timer);
  }
}

export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return startCli(args, options).done;
}

/**
 * Runs the binary on a real pseudo-terminal (util-linux `script`), not in CI mode: what a
 * person at a terminal sees, stdout and stderr together, control sequences included.
 */
export function runInTerminal(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
  // A wide terminal, so that progress labels are not cut.
  const command = `stty cols 250 rows 50; ${[process.execPath, BIN, ...args].map(quote).join(' ')}`;
  const child = spawn('script', ['--quiet', '--return', '--command', command, '/dev/null'], {
    cwd: options.cwd,
    env: { ...process.env, NO_COLOR: '1', CI: '', FORCE_COLOR: undefined },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}
