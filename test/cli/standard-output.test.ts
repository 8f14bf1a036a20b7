/**
 * Where the CLI's output goes when it cannot go there: a reader that leaves early (`| true`), a full
 * disk (`> /dev/full`), a file named over what the command reads or checks.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../fixtures/tmp.js';
import { PAGES } from '../page/variants.js';
import { BIN, runCli } from './run-cli.js';

/** `script` in bash, `$CLI` the built binary; its stdout (the last line: an exit code it echoes) and stderr. */
async function bash(script: string, cwd: string): Promise<{ stdout: string; stderr: string }> {
  const env = { ...process.env, NO_COLOR: '1', CLI: `${process.execPath} ${BIN}` };
  return promisify(execFile)('bash', ['-c', script], { cwd, env });
}

/** Pages with a finding each, enough that their report is written after its reader has gone. */
async function pagesWithFindings(): Promise<string> {
  const dir = await tempDir();
  const page = JSON.parse(await readFile(path.join(PAGES, 'presentation-every-block.json'), 'utf8'));
  page.presentation_stage.colour = 'red';
  await mkdir(path.join(dir, 'pages'));
  for (let i = 0; i < 40; i++) await writeFile(path.join(dir, 'pages', `${i}.json`), JSON.stringify(page));
  return dir;
}

describe('standard output', () => {
  it('a reader that leaves early: check never passes (exit 2, no message), whatever the reporter', async () => {
    const dir = await pagesWithFindings();
    for (const reporter of ['text', 'json']) {
      const { stdout, stderr } = await bash(
        `$CLI check pages --reporter ${reporter} --max-warnings 0 | true; echo "\${PIPESTATUS[0]}"`,
        dir,
      );
      expect([stdout.trim(), stderr]).toEqual(['2', '']);
    }
  });

  it('a write that fails (a full disk): one line naming it, exit 2, no stack trace', async () => {
    const dir = await pagesWithFindings();
    const { stdout, stderr } = await bash('$CLI check pages > /dev/full; echo "$?" >&2', dir);
    expect(stdout).toBe('');
    expect(stderr).toBe('error: cannot write to standard output (ENOSPC)\n2\n');
  });
});

describe('a file written over what the command reads or checks', () => {
  it('check -o and --update-baseline: refused among the targets and in the --verify-files folder', async () => {
    const dir = await tempDir();
    await cp(path.resolve('samples/content'), path.join(dir, 'content'), { recursive: true });
    const page = path.join('content', 'pages', '101.json');
    const before = await readFile(path.join(dir, page), 'utf8');
    const refused = async (args: string[], message: string) => {
      const result = await runCli(['check', page, '--verify-files', 'content/media', ...args], { cwd: dir });
      expect([result.code, result.stderr]).toEqual([2, `error: ${message}\n`]);
    };
    await refused(['-o', page], `--output ${page}: it is among the targets (${page}); write it elsewhere`);
    await refused(
      ['--update-baseline', 'content/media/x.json'],
      '--update-baseline content/media/x.json: it is in the --verify-files folder content/media; write it elsewhere',
    );
    // Through a link to the folder too.
    await symlink(path.join(dir, 'content', 'media'), path.join(dir, 'link'));
    await refused(
      ['-o', 'link/marigold.max-300x300.png'],
      '--output link/marigold.max-300x300.png: it is in the --verify-files folder content/media; write it elsewhere',
    );
    expect(await readFile(path.join(dir, page), 'utf8')).toBe(before);
    // Elsewhere, written.
    const ok = await runCli(['check', page, '--verify-files', 'content/media', '-o', 'report.txt'], { cwd: dir });
    expect(ok.stderr).toMatch(/^text report written to report\.txt: /);
    expect(await readFile(path.join(dir, 'report.txt'), 'utf8')).toContain(page);
  });

  it('render --report through a link to the output folder is refused as in it', async () => {
    const dir = await tempDir();
    await mkdir(path.join(dir, 'out'));
    await symlink(path.join(dir, 'out'), path.join(dir, 'outlink'));
    const result = await runCli(
      ['render', path.resolve('samples/originals/ladybird.jpg'), '--out', 'out', '--report', 'outlink/sheet.html'],
      { cwd: dir },
    );
    expect([result.code, result.stderr]).toEqual([
      2,
      'error: --report outlink/sheet.html: it is in the output folder out; write it elsewhere\n',
    ]);
  });
});
