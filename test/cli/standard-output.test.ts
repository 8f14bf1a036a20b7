/**
 * Where the CLI's output goes when it cannot go there: a reader that leaves early (`| true`), a full
 * disk (`> /dev/full`), a file named over what the command reads or checks.
 */
import { cp, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { execFile } from '../fixtures/launcher.js';
import { tempDir } from '../fixtures/tmp.js';
import { PAGES } from '../page/variants.js';
import { BIN, runCli } from './run-cli.js';

/** `script` in bash, `$CLI` the built binary; its stdout (the last line: an exit code it echoes) and stderr. */
async function bash(script: string, cwd: string): Promise<{ stdout: string; stderr: string }> {
  const env = { ...process.env, NO_COLOR: '1', CLI: `${process.execPath} ${BIN}` };
  return execFile('bash', ['-c', script], { cwd, env });
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

describe('an output written over a file the command reads first, or over another output', () => {
  it('check -o and --update-baseline: refused over the config file, the baseline and each other', async () => {
    const dir = await tempDir();
    const page = path.join(PAGES, 'presentation-every-block.json');
    await writeFile(path.join(dir, 'config.json'), '{}\n');
    const written = await runCli(['check', page, '--update-baseline', 'baseline.json'], { cwd: dir });
    expect(written.code).toBe(0);
    const baseline = await readFile(path.join(dir, 'baseline.json'), 'utf8');
    const refused = async (args: string[], message: string) => {
      const result = await runCli(['check', page, ...args], { cwd: dir });
      expect([result.code, result.stderr]).toEqual([2, `error: ${message}\n`]);
    };
    await refused(
      ['--config', 'config.json', '-o', 'config.json'],
      '--output config.json: it is the config file config.json; write it elsewhere',
    );
    await refused(
      ['--config', 'config.json', '--update-baseline', './config.json'],
      '--update-baseline ./config.json: it is the config file config.json; write it elsewhere',
    );
    await refused(
      ['--baseline', 'baseline.json', '-o', 'baseline.json'],
      '--output baseline.json: it is the --baseline file baseline.json; write it elsewhere',
    );
    await refused(
      ['-o', 'both.json', '--update-baseline', 'both.json'],
      '--update-baseline both.json: it is the --output file too; write it elsewhere',
    );
    expect(await readFile(path.join(dir, 'config.json'), 'utf8')).toBe('{}\n');
    expect(await readFile(path.join(dir, 'baseline.json'), 'utf8')).toBe(baseline);
    // A baseline brought up to date in place, and a device that takes both, still are.
    const update = ['--baseline', 'baseline.json', '--update-baseline', 'baseline.json'];
    expect((await runCli(['check', page, ...update], { cwd: dir })).code).toBe(0);
    const discarded = await runCli(['check', page, '-o', '/dev/null', '--update-baseline', '/dev/null'], { cwd: dir });
    expect(discarded.code).toBe(0);
  });

  it('render --report and --write-page: never over what the run reads or writes, nor an original or a rendition', async () => {
    const dir = await tempDir();
    const page = path.join(dir, 'page.json');
    await cp(path.join(PAGES, 'presentation-every-block.json'), page);
    await writeFile(path.join(dir, 'alt.json'), '{"ladybird.jpg": "A ladybird"}\n');
    const originals = path.resolve(PAGES, '../originals');
    const refused = async (args: string[], message: string) => {
      const result = await runCli(['render', '--out', 'media', ...args], { cwd: dir });
      expect([result.code, result.stderr]).toEqual([2, `error: ${message}\n`]);
    };
    await refused(
      [path.resolve('samples/originals/ladybird.jpg'), '--alt-text', 'alt.json', '--report', 'alt.json'],
      '--report alt.json: it is the --alt-text file alt.json; write it elsewhere',
    );
    await refused(
      ['--page', 'page.json', '--report', 'page.json'],
      '--report page.json: it is the --page file page.json; write it elsewhere',
    );
    await refused(
      ['--page', 'page.json', '--originals', originals, '--report', path.join(originals, 'sheet.html')],
      `--report ${path.join(originals, 'sheet.html')}: it is in the --originals folder ${originals}; write it elsewhere`,
    );
    await refused(
      ['--page', 'page.json', '--write-page', 'out.json', '--report', 'out.json'],
      '--report out.json: it is the --write-page file too; write it elsewhere',
    );
    // --write-page: never over an original or a rendition; over the page itself, as documented.
    const copies = path.join(dir, 'originals');
    await cp(originals, copies, { recursive: true });
    const ladybird = await readFile(path.join(copies, 'ladybird.jpg'));
    await refused(
      ['--page', 'page.json', '--originals', 'originals', '--write-page', 'originals/ladybird.jpg'],
      '--write-page originals/ladybird.jpg: it is in the --originals folder originals; write it elsewhere',
    );
    await refused(
      ['--page', 'page.json', '--originals', 'originals', '--write-page', 'media/page.json'],
      '--write-page media/page.json: it is in the output folder media; write it elsewhere',
    );
    expect(await readFile(path.join(copies, 'ladybird.jpg'))).toEqual(ladybird);
    await cp(page, path.join(copies, 'page.json'));
    const inPlace = [
      '--page',
      'originals/page.json',
      '--originals',
      'originals',
      '--write-page',
      'originals/page.json',
    ];
    expect((await runCli(['render', '--out', 'media', ...inPlace, '--dry-run'], { cwd: dir })).code).toBe(0);
    expect(await readFile(path.join(dir, 'alt.json'), 'utf8')).toBe('{"ladybird.jpg": "A ladybird"}\n');
    expect(await readFile(page, 'utf8')).toBe(
      await readFile(path.join(PAGES, 'presentation-every-block.json'), 'utf8'),
    );
  });
});
