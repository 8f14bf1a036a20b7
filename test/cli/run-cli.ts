/**
 * Runs the built command line as a user would, without colour and as in CI, and collects its exit
 * code and output: in this test process where the process itself is not what a test is about
 * (`runCli`), or as the binary in a process of its own, `node bin/content-api.js ...` (`startCli`,
 * `runWithin`, `runInTerminal`, and `runCli` where a process is needed), started by the tests'
 * launcher (test/fixtures/launcher.js).
 */
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type LaunchedProcess, spawn } from '../fixtures/launcher.js';

export const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/content-api.js');
const RUN = pathToFileURL(path.resolve(path.dirname(BIN), '../dist/cli/run.js')).href;

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
): { child: LaunchedProcess; done: Promise<CliResult>; output: () => { stdout: string; stderr: string } } {
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

/**
 * Runs the command line and collects its result. In this process, through the built CLI's
 * `runCommandLine` (what the binary runs after setting up its process), with the environment and
 * working folder a child would get: a process costs half a second to start, and a command's
 * files, output and exit code are the same. In a process of its own where the process matters or
 * this one cannot stand in: standard input given or read (`-`), a wrapper, Node's options in the
 * environment, a standard stream named as a file, or another command already running here (two
 * commands at once stay two processes, as a race between them needs).
 */
export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return needsProcess(args, options) ? startCli(args, options).done : runHere(args, options);
}

let runningHere = false;
const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

function needsProcess(args: string[], options: CliOptions): boolean {
  return (
    runningHere ||
    options.input !== undefined ||
    options.wrapper !== undefined ||
    Object.keys(options.env ?? {}).some((name) => name.startsWith('NODE_')) ||
    args.some((arg) => arg === '-' || /^\/(dev\/std|dev\/fd\/|proc\/self\/fd\/)/.test(arg))
  );
}

async function runHere(args: string[], options: CliOptions): Promise<CliResult> {
  runningHere = true;
  const env: Record<string, string | undefined> = { NO_COLOR: '1', CI: '1', FORCE_COLOR: undefined, ...options.env };
  const before = { env: Object.keys(env).map((name) => [name, process.env[name]] as const), cwd: process.cwd() };
  const writes = { stdout: process.stdout.write, stderr: process.stderr.write };
  const collected = { stdout: '', stderr: '' };
  for (const name of ['stdout', 'stderr'] as const) {
    const decoder = new StringDecoder('utf8');
    process[name].write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      collected[name] += typeof chunk === 'string' ? chunk : decoder.write(Buffer.from(chunk));
      const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
      if (callback) queueMicrotask(callback);
      return true;
    }) as typeof process.stdout.write;
  }
  setEnv(env);
  try {
    const { runCommandLine } = (await import(RUN)) as typeof import('../../src/cli/run.js');
    if (options.cwd) process.chdir(options.cwd);
    const listeners = SIGNALS.map((signal) => process.listenerCount(signal));
    const code = await runCommandLine([process.execPath, BIN, ...args]);
    // A command that returned has let go of the process: a signal's listener left behind would act on
    // this process's next signal (the binary's ends with the command, so nothing else would show it).
    const left = SIGNALS.filter((signal, i) => process.listenerCount(signal) !== listeners[i]);
    if (left.length > 0) throw new Error(`${args.join(' ')}: left listeners of ${left.join(', ')} on the process`);
    return { code, signal: null, ...collected };
  } finally {
    process.stdout.write = writes.stdout;
    process.stderr.write = writes.stderr;
    process.chdir(before.cwd);
    setEnv(Object.fromEntries(before.env));
    process.exitCode = undefined;
    runningHere = false;
  }
}

function setEnv(values: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
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
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}
