/**
 * `content-api render` as a user meets it: help, dry run, JSON on stdout, messages on
 * stderr, incremental reruns, no colour when NO_COLOR is set.
 */
import { readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { photo, writeImage } from '../fixtures/images.js';
import { tempDir } from '../fixtures/tmp.js';
import { versioned } from '../fixtures/versions.js';
import { runCli, runInTerminal } from './run-cli.js';

async function twoOriginals() {
  const dir = await tempDir();
  const inDir = path.join(dir, 'in');
  await writeImage(inDir, 'wide.jpg', photo(1000, 500).jpeg());
  await writeImage(inDir, 'sub/Tall One.png', photo(300, 700));
  return { dir, inDir, out: path.join(dir, 'out') };
}

describe('content-api render', () => {
  it('--help shows the options, examples and exit codes', async () => {
    const result = await runCli(['render', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: content-api render [options] [inputs...]');
    for (const flag of [
      '--out',
      '--media-url',
      '--naming',
      '--format',
      '--jpeg-quality',
      '--pixel-limit',
      '--concurrency',
      '--force',
      '--dry-run',
      '--json',
    ]) {
      expect(result.stdout).toContain(flag);
    }
    expect(result.stdout).toMatch(/Examples:\n {2}\$ content-api render samples\/originals --out media/);
    expect(result.stdout).toMatch(/Exit codes:\n {2}0 .*\n {2}1 .*\n {2}2 /);
  });

  it('--dry-run lists the files it would write and writes nothing', async () => {
    const { inDir, out } = await twoOriginals();
    const result = await runCli(['render', inDir, '--out', out, '--dry-run']);
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(10);
    expect(lines[0]).toBe(`would write\t${path.join(out, 'sub/tall-one.max-300x300.png')}\t129x300`);
    expect(lines).toContain(`would write\t${path.join(out, 'wide.max-4800x4800.jpg')}\t1000x500`);
    expect(result.stderr).toMatch(/2 would be rendered, 0 up to date/);
    await expect(stat(out)).rejects.toThrow();

    // After a real run, a change of naming would write new files, and, with --prune, remove the old ones.
    await runCli(['render', inDir, '--out', out]);
    const kept = await runCli(['render', inDir, '--out', out, '--dry-run', '--naming', 'underscore']);
    expect(kept.stdout).toContain(`would write\t${path.join(out, 'wide_300x300.jpg')}\t300x150`);
    expect(kept.stdout).not.toContain('would remove');
    const renamed = await runCli(['render', inDir, '--out', out, '--dry-run', '--prune', '--naming', 'underscore']);
    expect(renamed.stdout).toContain(`would write\t${path.join(out, 'wide_300x300.jpg')}\t300x150`);
    expect(renamed.stdout).toContain(`would remove\t${path.join(out, 'wide.max-300x300.jpg')}\tno longer written`);
    expect(renamed.stdout.split('\n').filter((line) => line.startsWith('would remove'))).toHaveLength(10);
    expect(await stat(path.join(out, 'wide.max-300x300.jpg'))).toBeTruthy();
  });

  it('--json prints one document on stdout; a rerun skips, --force renders again', async () => {
    const { inDir, out } = await twoOriginals();
    const first = await runCli(['render', inDir, '--out', out, '--json', '--media-url', 'https://cdn.example.org/m/']);
    expect(first.code).toBe(0);
    expect(first.stderr).toBe('');
    const report = JSON.parse(first.stdout);
    expect(report.failures).toEqual([]);
    expect(report.results.map((r: { status: string }) => r.status)).toEqual(['rendered', 'rendered']);
    const tall = report.results.find((r: { source: string }) => r.source.endsWith('Tall One.png'));
    expect(tall.image.sizes.md).toEqual({
      width: 300,
      height: 700,
      url: await versioned(
        'https://cdn.example.org/m/sub/tall-one.max-1200x1200.png',
        path.join(out, 'sub/tall-one.max-1200x1200.png'),
      ),
    });
    expect(tall.image.width).toBeCloseTo(300 / 700, 6);
    expect(tall.files).toHaveLength(5);

    const second = await runCli(['render', inDir, '--out', out, '--json']);
    expect(JSON.parse(second.stdout).results.map((r: { status: string }) => r.status)).toEqual(['skipped', 'skipped']);
    const forced = await runCli(['render', inDir, '--out', out, '--json', '--force']);
    expect(JSON.parse(forced.stdout).results.map((r: { status: string }) => r.status)).toEqual([
      'rendered',
      'rendered',
    ]);
  });

  it('prints only a summary on stderr without --json, and no colour under NO_COLOR', async () => {
    const { inDir, out } = await twoOriginals();
    const result = await runCli(['render', inDir, '--out', out]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim()).toMatch(/^2 rendered, 0 up to date in \d+\.\d s \(output: .*out\)$/);
    expect(result.stderr).not.toContain('\x1b');
    const rerun = await runCli(['render', inDir, '--out', out]);
    expect(rerun.stderr.trim()).toMatch(/^0 rendered, 2 up to date in/);
  });

  it('the summary counts the files of earlier renderings it kept, and those --prune removed or would remove (#22, #34)', async () => {
    const { inDir, out } = await twoOriginals();
    await runCli(['render', inDir, '--out', out, '--format', 'webp']);
    const webp = async () => (await readdir(out, { recursive: true })).filter((f) => f.endsWith('.webp'));
    expect(await webp()).toHaveLength(10);

    // Back to each original's own format: the WebP files stay, and the summary says how to remove them.
    const rerun = await runCli(['render', inDir, '--out', out]);
    expect(rerun.code).toBe(0);
    expect(rerun.stderr.trim()).toMatch(
      /^2 rendered, 0 up to date, 10 files of earlier renderings kept \(--prune removes them; --prune --dry-run lists them first\) in \d+\.\d s \(output: .*out\)$/,
    );
    expect(await webp()).toHaveLength(10);
    expect((await runCli(['render', inDir, '--out', out])).stderr.trim()).toMatch(
      /^0 rendered, 2 up to date, 10 files of earlier renderings kept \(/,
    );

    // With --json, the document counts them too.
    const json = JSON.parse((await runCli(['render', inDir, '--out', out, '--json'])).stdout);
    expect([json.removed, json.kept]).toEqual([0, 10]);
    expect(json.results.flatMap((r: { kept: string[] }) => r.kept)).toHaveLength(10);

    // --prune: listed first by a dry run, then removed, and the summary says so.
    const planned = await runCli(['render', inDir, '--out', out, '--prune', '--dry-run']);
    expect(planned.stderr.trim()).toMatch(
      /^0 would be rendered, 2 up to date, 10 files of earlier renderings to be removed in \d+\.\d s$/,
    );
    expect(planned.stdout.split('\n').filter((line) => line.startsWith('would remove'))).toHaveLength(10);
    expect(await webp()).toHaveLength(10);
    const pruned = await runCli(['render', inDir, '--out', out, '--prune']);
    expect(pruned.stderr.trim()).toMatch(
      /^0 rendered, 2 up to date, 10 files of earlier renderings removed in \d+\.\d s \(output: .*out\)$/,
    );
    expect(await webp()).toEqual([]);
    const after = JSON.parse((await runCli(['render', inDir, '--out', out, '--json'])).stdout);
    expect([after.removed, after.kept]).toEqual([0, 0]);
    expect((await runCli(['render', inDir, '--out', out])).stderr.trim()).toMatch(/^0 rendered, 2 up to date in /);
  });

  it('--alt-text fills alt_text from a JSON map; a bad map is exit 2', async () => {
    const { dir, inDir, out } = await twoOriginals();
    const map = path.join(dir, 'alt.json');
    await writeFile(map, JSON.stringify({ 'wide.jpg': 'A wide gradient', 'wdie.jpg': 'a typo' }));
    const result = await runCli(['render', inDir, '--out', out, '--json', '--alt-text', map]);
    const alt = JSON.parse(result.stdout).results.map((r: { image: { alt_text: string | null } }) => r.image.alt_text);
    expect(alt).toEqual([null, 'A wide gradient']);
    expect(JSON.parse(result.stdout).warnings).toEqual([`--alt-text ${map}: 'wdie.jpg' names no original of this run`]);
    // Without --json (no result kept), the typo is found all the same.
    const plain = await runCli(['render', inDir, '--out', out, '--alt-text', map]);
    expect(plain.stderr).toContain(`warning: --alt-text ${map}: 'wdie.jpg' names no original of this run`);
    expect(plain.stderr).not.toContain("'wide.jpg' names no original");
    await writeFile(map, '[1, 2]');
    const bad = await runCli(['render', inDir, '--out', out, '--alt-text', map]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--alt-text .*alt\.json: expected a JSON object of strings/);
    expect(await readdir(out)).toContain('.content-api-manifest');
  });

  it(
    'an original named twice (directly and in its folder) is rendered once, ' +
      'not refused as a collision with itself',
    async () => {
      const { inDir, out } = await twoOriginals();
      const result = await runCli([
        'render',
        inDir,
        path.join(inDir, 'wide.jpg'),
        `./${path.relative(process.cwd(), path.join(inDir, 'wide.jpg'))}`,
        path.join(inDir, 'sub'),
        '--out',
        out,
        '--json',
      ]);
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout).results.map((r: { source: string }) => path.relative(inDir, r.source))).toEqual([
        'sub/Tall One.png',
        'wide.jpg',
      ]);
      expect(JSON.parse(result.stdout).warnings).toEqual([]); // sub/ held an image, found before through in/
    },
  );

  it(
    'a folder with no images is a warning; ' +
      'a folder inside the output folder, or a file in the way of a dry run, is exit 2',
    async () => {
      const { dir, inDir, out } = await twoOriginals();
      const empty = path.join(dir, 'empty');
      await writeFile(path.join(dir, 'notes.txt'), 'x');
      await (await import('node:fs/promises')).mkdir(empty);
      const none = await runCli(['render', empty, '--out', out]);
      expect(none.code).toBe(0);
      expect(none.stderr).toContain(`warning: ${empty}: no images found (files ending in .jpg .jpeg`);

      const inside = await runCli(['render', inDir, '--out', dir]);
      expect(inside.stderr).toBe(
        `error: ${inDir}: is inside the output folder ${dir}, ` +
          'whose files are never taken as originals; keep originals elsewhere\n',
      );
      expect(inside.code).toBe(2);

      const dryRun = await runCli(['render', inDir, '--out', path.join(dir, 'notes.txt'), '--dry-run']);
      expect(dryRun.stderr).toBe(
        `error: ${path.join(dir, 'notes.txt')}: output folder is not writable (a file is in the way, not a folder)\n`,
      );
      expect(dryRun.code).toBe(2);
    },
  );

  it('on a terminal, draws a progress line and erases it before the summary; never in a pipe', async () => {
    const { inDir, out } = await twoOriginals();
    const tty = await runInTerminal(['render', inDir, '--out', out]);
    expect(tty.code).toBe(0);
    // Drawn when the first original starts (intermediate states within 80 ms of a draw wait for the next one).
    expect(tty.stdout).toMatch(/\r\x1b\[2K\[-{24}\] 0\/2 \S+/);
    expect(tty.stdout).toMatch(/\r\x1b\[2K\[#{24}\] 2\/2 \S+/);
    expect(tty.stdout).toMatch(/\r\x1b\[2K2 rendered, 0 up to date in \d+\.\d s/); // the bar erased, then the summary
    const piped = await runCli(['render', inDir, '--out', out, '--force']);
    expect(piped.stderr).not.toMatch(/[\r\x1b]/);
  });
});
