/**
 * The last step of `npm test`, after the dependency check, lint and build: the type-check and vitest at
 * once. The type-check (tsc, 13-15 s in a clean clone) runs on one core, so run first it left the other
 * idle; beside vitest it takes its share of both. vitest writes to the terminal as it runs; the
 * type-check's output (nothing when it passes) follows vitest's summary. The exit code is vitest's, or
 * the type-check's when vitest passed; Ctrl-C reaches both (they share the terminal's process group).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Runs `command` with `args`, its output collected (`inherit` false) or the terminal's; resolves its result. */
function run(command, args, inherit) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: inherit ? 'inherit' : ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk) => (output += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    // Killed by a signal, a child has no exit code: a failure.
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

const typecheck = run(npm, ['run', '--silent', 'typecheck'], false);
const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
const tests = await run(process.execPath, [vitest, 'run'], true);
const types = await typecheck;
if (types.code !== 0) process.stderr.write(`\nnpm run typecheck failed (exit code ${types.code}):\n${types.output}`);
process.exitCode = tests.code || types.code;
