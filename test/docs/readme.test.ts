/**
 * The README as a newcomer meets it: short, the contractual quick start, and a tour whose every
 * command runs on the samples and prints what the README shows. The tour runs in a temporary
 * folder whose `samples` links to the repository's; the server gets `--port 0`, and its
 * address stands in for the README's `http://127.0.0.1:8000`.
 */
import { symlink } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CliResult, runCli, startCli } from '../cli/run-cli.js';
import { tempDir } from '../fixtures/tmp.js';
import { fences, ROOT, readDoc, section } from './markdown.js';

const README = readDoc('README.md');
const SHOWN_ADDRESS = 'http://127.0.0.1:8000';

interface Step {
  command: string;
  args: string[];
  exit: number;
  shown: string[] | undefined;
}

/**
 * The tour's commands in order: each `npx content-api` line of an `sh` block, its exit code
 * (`# exit code N`, else 0) and the `text` block after it.
 */
function tourSteps(): Step[] {
  const steps: Step[] = [];
  for (const fence of fences(section(README, 'A five-minute tour'))) {
    if (fence.lang === 'sh') {
      for (const line of fence.lines) {
        if (line.trim() === '' || line.trim().startsWith('#')) continue;
        const [command = '', comment] = line.split(/\s+#\s*/);
        const words = command.trim().split(/\s+/);
        expect(words.slice(0, 2), `a tour command that is not content-api: ${line}`).toEqual(['npx', 'content-api']);
        expect(command, 'tour commands are plain words (no quotes, pipes or variables)').toMatch(/^[\w ./:-]+$/);
        const exit = comment === undefined ? 0 : Number(/^exit code (\d+)/.exec(comment)?.[1]);
        expect(exit, `an exit code comment that says 'exit code N': ${line}`).not.toBeNaN();
        steps.push({ command: command.trim(), args: words.slice(2), exit, shown: undefined });
      }
    } else if (fence.lang === 'text') {
      const last = steps.at(-1);
      expect(last?.shown, 'an output block follows the command it shows, once').toBeUndefined();
      if (last) last.shown = fence.lines;
    }
  }
  return steps;
}

const normalise = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trimEnd().replace(/\b\d+(\.\d+)? ?(s|ms)\b/g, '<time>'))
    .join('\n')
    .replace(/\n+$/, '');

/**
 * Asserts that `output` is what `shown` shows: the stretches between `...` lines appear in it in
 * order, each as consecutive lines, the first at the start and the last at the end unless a
 * `...` stands there. Times are not compared.
 */
function expectShown(output: string, shown: string[], label: string) {
  const actual = normalise(output).split('\n');
  const stretches: string[][] = [[]];
  for (const line of normalise(shown.join('\n')).split('\n')) {
    if (line.trim() === '...') stretches.push([]);
    else stretches.at(-1)!.push(line);
  }
  let at = 0;
  stretches.forEach((stretch, i) => {
    if (stretch.length === 0) return;
    const anchoredStart = i === 0;
    const anchoredEnd = i === stretches.length - 1;
    let found = -1;
    for (let start = at; start + stretch.length <= actual.length; start++) {
      if (anchoredStart && start !== 0) break;
      if (anchoredEnd && start + stretch.length !== actual.length) continue;
      if (stretch.every((line, j) => actual[start + j] === line)) {
        found = start;
        break;
      }
    }
    expect(found, `${label}: the README shows\n${stretch.join('\n')}\n\nbut it printed\n${actual.join('\n')}`).not.toBe(
      -1,
    );
    at = found + stretch.length;
  });
}

describe('README.md', () => {
  it('is at most 200 lines', () => {
    expect(README.replace(/\n$/, '').split('\n').length).toBeLessThanOrEqual(200);
  });

  it('keeps the quick start: install, build and render the samples, then the tests', () => {
    const block = fences(section(README, 'Quick start')).find((fence) => fence.lang === 'sh');
    expect(block?.lines).toEqual(['npm install && npx content-api render samples/originals --out media', 'npm test']);
  });

  it('runs every command of the tour, with the exit code and output it shows', async () => {
    const steps = tourSteps();
    expect(steps.map((step) => step.args[0])).toEqual(expect.arrayContaining(['render', 'serve', 'inspect', 'check']));
    const cwd = await tempDir('content-api-tour-');
    await symlink(path.join(ROOT, 'samples'), path.join(cwd, 'samples'));

    // The quick start's render, which the tour starts from.
    const quickStart = README.match(/npm install && npx content-api (render [^\n]+)/)?.[1]?.split(' ') ?? [];
    const first = await runCli(quickStart, { cwd });
    expect(first.code, first.stderr).toBe(0);

    let server: ReturnType<typeof startCli> | undefined;
    let address = SHOWN_ADDRESS;
    try {
      for (const step of steps) {
        const label = `npx content-api ${step.args.join(' ')}`;
        if (step.args[0] === 'serve') {
          server = startCli([...step.args, '--port', '0'], { cwd });
          const started = server;
          address = await new Promise<string>((resolve, reject) => {
            const timer = setInterval(() => {
              const found = /serving .* at (http:\/\/\S+?)\/\n/.exec(started.output().stderr);
              if (found?.[1]) {
                clearInterval(timer);
                resolve(found[1]);
              }
            }, 50);
            started.done.then((result: CliResult) => {
              clearInterval(timer);
              reject(new Error(`${label} exited ${result.code}: ${result.stderr}`));
            }, reject);
          });
          const { stdout, stderr } = started.output();
          if (step.shown) expectShown((stdout + stderr).replaceAll(address, SHOWN_ADDRESS), step.shown, label);
          continue;
        }
        const result = await runCli(
          step.args.map((arg) => arg.replaceAll(SHOWN_ADDRESS, address)),
          { cwd },
        );
        expect(result.code, `${label}: ${result.stderr}`).toBe(step.exit);
        if (step.shown)
          expectShown((result.stdout + result.stderr).replaceAll(address, SHOWN_ADDRESS), step.shown, label);
      }
    } finally {
      if (server) {
        server.child.kill('SIGTERM');
        const stopped = await server.done;
        expect(stopped.code, 'serve stops with exit 0 on SIGTERM').toBe(0);
      }
    }
  });
});
