/**
 * Files the user names for the tool to write (`render --report`, `--write-page`, `check
 * --output`) when the name is not a plain file (issue #35, item 19): a link to this process's
 * standard output, a FIFO, a device, a link to another file or to nothing. What is there is
 * written through or refused; a link is never renamed over, nothing temporary is left behind.
 * Through the built CLI: as a process where its standard output is what is written through (a real
 * file, as `> file` gives it, or the socket Node's spawn gives) or it must wait for a FIFO's reader,
 * in this process (runCli) otherwise; `openOutput` in-process for a link put in a file's place as it
 * is written.
 */
import { once } from 'node:events';
import { lstat, readdir, readFile, readlink, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openOutput } from '../../src/fs/atomic.js';
import { BIN, runCli, runWithin, startCli } from '../cli/run-cli.js';
import { photo, writeImage } from '../fixtures/images.js';
import { mkfifo, spawn } from '../fixtures/launcher.js';
import { tempDir } from '../fixtures/tmp.js';
import { PAGES } from '../page/variants.js';

const PAGE = path.join(PAGES, 'presentation-every-block.json');
const ORIGINALS = path.resolve(PAGES, '../originals');
const STDOUT_LINK = '/proc/self/fd/1';

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** What reached the file standard output was redirected to. */
  stdout: string;
  stderr: string;
}

/** Runs the CLI as `content-api ... > stdout.txt` would (standard output a regular file), killed after 30 s. */
async function runToFile(args: string[], dir: string): Promise<Run> {
  const file = path.join(dir, 'stdout.txt');
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, NO_COLOR: '1', CI: '1', FORCE_COLOR: undefined },
    stdio: ['ignore', { file }, 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (exit, killed) => resolve([exit, killed]));
  });
  clearTimeout(timer);
  return { code, signal, stdout: await readFile(file, 'utf8'), stderr };
}

/** A link in `dir` to `/proc/self/fd/1`: the process that opens it reaches its own standard output (as /dev/stdout does). */
async function stdoutLink(dir: string): Promise<string> {
  const link = path.join(dir, 'out-link');
  await symlink(STDOUT_LINK, link);
  return link;
}

/** The link is still a link to where it pointed, and no temporary file sits beside it. */
async function expectLinkKept(link: string, to: string): Promise<void> {
  expect((await lstat(link)).isSymbolicLink()).toBe(true);
  expect(await readlink(link)).toBe(to);
  expect((await readdir(path.dirname(link))).filter((name) => name.includes('.tmp-'))).toEqual([]);
}

async function originals(dir: string) {
  await writeImage(dir, 'in/b-wide.jpg', photo(600, 400));
  return { input: path.join(dir, 'in'), out: path.join(dir, 'media') };
}

describe('a link to standard output, redirected to a file, is written through, never renamed over', () => {
  it('check --output: the report reaches the redirected file, the link stays', async () => {
    const dir = await tempDir();
    const link = await stdoutLink(dir);
    const run = await runToFile(['check', PAGE, '--reporter', 'json', '--output', link], dir);
    expect([run.code, run.stderr]).toEqual([0, `json report written to ${link}: 0 error(s), 0 warning(s)\n`]);
    expect(JSON.parse(run.stdout).pages[0].source).toBe(PAGE);
    await expectLinkKept(link, STDOUT_LINK);
  });

  it('render --report: the contact sheet reaches the redirected file, the link stays', async () => {
    const dir = await tempDir();
    const { input, out } = await originals(dir);
    const link = await stdoutLink(dir);
    const run = await runToFile(['render', input, '--out', out, '--report', link], dir);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^<!doctype html>/i);
    expect(run.stdout).toContain('b-wide.jpg');
    await expectLinkKept(link, STDOUT_LINK);
  });

  it('two outputs on standard output are refused before any work (exit 2): two documents in one stream', async () => {
    const dir = await tempDir();
    const { input, out } = await originals(dir);
    const link = await stdoutLink(dir);
    const rendered = await runToFile(['render', input, '--out', out, '--report', link, '--json'], dir);
    expect([rendered.code, rendered.stdout]).toEqual([2, '']);
    expect(rendered.stderr).toBe(
      `error: --json and --report ${link} both write to standard output: write one of them elsewhere\n`,
    );
    await expect(readdir(out)).rejects.toThrow(/ENOENT/);
    const checked = await runToFile(['check', PAGE, '--update-baseline', '/dev/stdout'], dir);
    expect([checked.code, checked.stdout]).toEqual([2, '']);
    expect(checked.stderr).toContain(
      'the report and --update-baseline /dev/stdout both write to standard output: write one of them elsewhere',
    );
    await expectLinkKept(link, STDOUT_LINK);
  });

  describe('render --page --write-page', () => {
    let media = '';
    beforeAll(async () => {
      // Rendered once: the runs below find every rendition up to date and only write the page.
      media = path.join(await tempDir(), 'media');
      const first = await runCli(['render', '--page', PAGE, '--originals', ORIGINALS, '--out', media]);
      expect(first.code, first.stderr).toBe(0);
    });

    it('the page reaches the redirected file, the link stays', async () => {
      const dir = await tempDir();
      const link = await stdoutLink(dir);
      const args = ['render', '--page', PAGE, '--originals', ORIGINALS, '--out', media, '--write-page', link];
      const run = await runToFile(args, dir);
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout).presentation_stage).toBeDefined();
      await expectLinkKept(link, STDOUT_LINK);
    });
  });
});

describe('a pipe, a FIFO or a device is written through', () => {
  it('check --output and render --report to a link to a piped standard output (as /dev/stdout is): on stdout', async () => {
    const dir = await tempDir();
    const link = await stdoutLink(dir);
    // Standard output here is what Node's spawn gives, a socket: one that cannot be opened again by name.
    const checked = await runWithin(['check', PAGE, '--reporter', 'json', '--output', link]);
    expect(checked.code, checked.stderr).toBe(0);
    expect(JSON.parse(checked.stdout).pages[0].source).toBe(PAGE);
    const { input, out } = await originals(dir);
    const rendered = await runWithin(['render', input, '--out', out, '--report', '/dev/stdout']);
    expect(rendered.code, rendered.stderr).toBe(0);
    expect(rendered.stdout).toMatch(/^<!doctype html>/i);
    await expectLinkKept(link, STDOUT_LINK);
    expect((await lstat('/dev/stdout')).isSymbolicLink()).toBe(true);
  });

  it('check --output to a FIFO: its reader gets the report, the FIFO stays a FIFO', async () => {
    const dir = await tempDir();
    const fifo = path.join(dir, 'report.fifo');
    await mkfifo(fifo);
    const reader = spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'ignore'] });
    let read = '';
    reader.stdout!.setEncoding('utf8').on('data', (chunk: string) => (read += chunk));
    const readerDone = new Promise<void>((resolve) => reader.on('close', () => resolve()));
    try {
      const run = await runCli(['check', PAGE, '--reporter', 'json', '--output', fifo]);
      expect(run.code, run.stderr).toBe(0);
      // A run that never opened the FIFO leaves cat waiting for a writer: it is killed, and what it read is checked.
      const timer = setTimeout(() => reader.kill('SIGKILL'), 5_000);
      await readerDone;
      clearTimeout(timer);
      expect(JSON.parse(read).pages[0].source).toBe(PAGE);
    } finally {
      reader.kill('SIGKILL');
    }
    expect((await lstat(fifo)).isFIFO()).toBe(true);
    expect(await readdir(dir)).toEqual(['report.fifo']);
  });

  it('check --output to a FIFO nobody reads yet: says it waits for a reader, then its reader gets the report', async () => {
    const dir = await tempDir();
    const fifo = path.join(dir, 'report.fifo');
    await mkfifo(fifo);
    const { child, done, output } = startCli(['check', PAGE, '--reporter', 'json', '--output', fifo]);
    try {
      // The notice comes while the run is held at the FIFO: no reader has opened it yet.
      while (!output().stderr.includes('waiting')) await once(child.stderr!, 'data');
      expect(output().stderr).toBe(`--output ${fifo}: waiting for a reader of this FIFO\n`);
      const read = await readFile(fifo, 'utf8');
      const run = await done;
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(read).pages[0].source).toBe(PAGE);
    } finally {
      child.kill('SIGKILL');
    }
    expect((await lstat(fifo)).isFIFO()).toBe(true);
  });

  it('render --report /dev/null: rendered, the device untouched', async () => {
    const dir = await tempDir();
    const { input, out } = await originals(dir);
    const run = await runCli(['render', input, '--out', out, '--report', '/dev/null']);
    expect(run.code, run.stderr).toBe(0);
    expect((await stat('/dev/null')).isCharacterDevice()).toBe(true);
    expect((await lstat('/dev/null')).isCharacterDevice()).toBe(true);
  });
});

describe('a link to any other file, or to nothing, is refused before any work (exit 2), and kept', () => {
  it('check --output, render --report and --write-page to a link to a regular file', async () => {
    const dir = await tempDir();
    const target = path.join(dir, 'elsewhere.txt');
    await writeFile(target, 'kept\n');
    const link = path.join(dir, 'report-link');
    await symlink(target, link);
    const { input, out } = await originals(dir);
    const reason = 'cannot write (it is a symlink to a file: give the file its own path)';
    const runs: Array<[string[], string]> = [
      [['check', PAGE, '--output', link], `error: --output ${link}: ${reason}\n`],
      [['render', input, '--out', out, '--report', link], `error: --report ${link}: ${reason}\n`],
      [
        ['render', '--page', PAGE, '--originals', ORIGINALS, '--out', out, '--write-page', link],
        `error: --write-page ${link}: ${reason}\n`,
      ],
    ];
    for (const [args, message] of runs) {
      const run = await runCli(args);
      expect([run.code, run.stderr, run.stdout]).toEqual([2, message, '']);
      await expectLinkKept(link, target);
      expect(await readFile(target, 'utf8')).toBe('kept\n');
    }
    await expect(stat(out)).rejects.toThrow(/ENOENT/); // refused before any work
  });

  it('check --output to a link to nothing: refused, nothing made where it points', async () => {
    const dir = await tempDir();
    const nowhere = path.join(dir, 'nowhere.json');
    const link = path.join(dir, 'report-link');
    await symlink(nowhere, link);
    const run = await runCli(['check', PAGE, '--output', link]);
    expect([run.code, run.stderr]).toEqual([2, `error: --output ${link}: cannot write (it is a symlink to nothing)\n`]);
    await expectLinkKept(link, nowhere);
    await expect(lstat(nowhere)).rejects.toThrow(/ENOENT/);
  });
});

describe('openOutput', () => {
  it('a link put in the place of a file being written is not renamed over when it is done', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'report.json');
    const target = path.join(dir, 'elsewhere.txt');
    await writeFile(target, 'kept\n');
    const output = await openOutput(file);
    await output.write('{}\n');
    await symlink(target, file);
    await expect(output.close()).rejects.toThrow('it is a symlink to a file: give the file its own path');
    await expectLinkKept(file, target);
    expect(await readFile(target, 'utf8')).toBe('kept\n');
  });
});
