/**
 * Hostile and faulty surroundings for `render` (issue #14): a folder that loops through a
 * symlink, files that are not rendered, an output folder that cannot be made, a disk that
 * fills up mid-run. Each case: one line naming the thing and the reason, the rest completes,
 * nothing partial or stale is left, the report is printed.
 */
import { randomFillSync } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, rmdir, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { MANIFEST_RECORDS } from '../../src/renditions/manifest.js';
import { photo, writeImage } from '../fixtures/images.js';
import { execFile } from '../fixtures/launcher.js';
import { readEntries } from '../fixtures/manifest.js';
import { tempDir } from '../fixtures/tmp.js';
import { runCli, runInTerminal, startCli } from './run-cli.js';

describe('render in hostile surroundings', () => {
  it('a symlink that loops back up the input folder: each real folder is walked once', async () => {
    const dir = await tempDir();
    await writeImage(dir, 'in/a/one.jpg', photo(400, 300).jpeg());
    await writeImage(dir, 'in/two.jpg', photo(300, 400).jpeg());
    await symlink('..', path.join(dir, 'in/a/up'));
    await symlink(path.join(dir, 'in'), path.join(dir, 'in/a/again'));
    const result = await runCli(['render', path.join(dir, 'in'), '--out', path.join(dir, 'out'), '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).results.map((r: { source: string }) => path.relative(dir, r.source))).toEqual([
      'in/a/one.jpg',
      'in/two.jpg',
    ]);
  });

  it(
    'files in a folder that are not rendered (SVG, PDF, camera raw) are named in a warning; ' +
      'notes beside originals are not',
    async () => {
      const dir = await tempDir();
      await writeImage(dir, 'in/photo.jpg', photo(400, 300).jpeg());
      for (const name of [
        'logo.svg',
        'catalogue.pdf',
        'IMG_0001.CR2',
        'SOURCES.md',
        'alt.json',
        'notes.txt',
        'copyright',
      ])
        await writeFile(path.join(dir, 'in', name), 'x');
      const result = await runCli(['render', path.join(dir, 'in'), '--out', path.join(dir, 'out')]);
      expect(result.code).toBe(0);
      const warnings = result.stderr.split('\n').filter((line) => line.startsWith('warning: '));
      expect(warnings).toEqual([
        `warning: ${path.join(dir, 'in')}: 3 file(s) not rendered, ` +
          'not an image type render takes (IMG_0001.CR2, catalogue.pdf, logo.svg)',
      ]);
    },
  );

  it(
    'an original whose name is legal but too long for its renditions fails alone; ' +
      'the rest is rendered and recorded',
    async () => {
      const dir = await tempDir();
      const long = `${'a'.repeat(240)}.jpg`; // legal here; its renditions' temporary names are not
      await writeImage(dir, `in/${long}`, photo(400, 300).jpeg());
      await writeImage(dir, 'in/short.jpg', photo(400, 300).jpeg());
      const out = path.join(dir, 'out');
      const result = await runCli(['render', path.join(dir, 'in'), '--out', out, '--json']);
      expect(result.code).toBe(1);
      const report = JSON.parse(result.stdout);
      expect(report.results.map((r: { source: string }) => path.basename(r.source))).toEqual(['short.jpg']);
      expect(report.failures).toHaveLength(1);
      expect(report.failures[0].error).toMatch(/aaaa\.jpg: cannot write renditions \(ENAMETOOLONG\)$/);
      expect(Object.keys({ entries: await readEntries(out) }.entries)).toEqual(['short.jpg']);
      expect(
        (await readdir(out)).filter((name) => name.includes('.tmp-') || name.startsWith('.content-api-claims')),
      ).toEqual([]);
    },
  );

  it(
    'file names with escape sequences and a line break are printed escaped: they neither drive the terminal ' +
      'nor forge a line, in the report or in the progress line',
    async () => {
      const dir = await tempDir();
      const evil = 'evil\x1b]0;pwned\x07\nfailed: forged.jpg'; // retitles the terminal, then a second `failed:` line
      await writeImage(dir, 'in/photo.jpg', photo(400, 300).jpeg());
      await writeFile(path.join(dir, 'in', evil), 'not a picture');
      await writeFile(path.join(dir, 'in', 'logo\x1b[2J.svg'), 'x'); // clears the screen
      const args = ['render', path.join(dir, 'in'), '--out', path.join(dir, 'out')];
      const result = await runCli(args);
      expect(result.code).toBe(1);
      expect(result.stderr).not.toContain('\x1b');
      const lines = result.stderr.trimEnd().split('\n');
      expect(lines.filter((line) => line.startsWith('failed: '))).toEqual([
        `failed: ${path.join(dir, 'in')}/evil\\u001b]0;pwned\\u0007\\nfailed: forged.jpg: ` +
          'not an image in a supported format',
      ]);
      expect(lines.filter((line) => line.startsWith('warning: '))).toEqual([
        `warning: ${path.join(dir, 'in')}: 1 file(s) not rendered, not an image type render takes (logo\\u001b[2J.svg)`,
      ]);
      expect(lines).toHaveLength(3); // the failure, the warning, the summary

      const tty = await runInTerminal([...args, '--force', '--concurrency', '1']);
      expect(tty.stdout).toContain('evil\\u001b]0;pwned\\u0007\\nfailed: forged.jpg');
      expect(tty.stdout).not.toMatch(/\x1b\]0;|\x1b\[2J|\x07/);
    },
  );

  it(
    'an output folder that cannot be made, even where the system loops (/proc): ' + 'one line, exit 2, at once',
    async () => {
      const started = Date.now();
      const result = await runCli(['render', 'samples/originals/dandelion.jpg', '--out', '/proc/content-api-nope']);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe('error: /proc/content-api-nope: output folder is not writable (ENOENT)\n');
      expect(Date.now() - started).toBeLessThan(10_000);
    },
  );
});

/** A tmpfs of `size`, where the system lets this process mount one (root on Linux); else null, and its tests skip. */
async function tmpfs(name: string, size: string): Promise<string | null> {
  const dir = path.join('/tmp', `content-api-${name}-${process.pid}`);
  try {
    await mkdir(dir, { recursive: true });
    await execFile('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  } catch {
    await rmdir(dir).catch(() => undefined);
    return null;
  }
  afterAll(async () => {
    await execFile('umount', [dir]);
    await rmdir(dir);
  });
  return dir;
}

let noisy: Promise<string> | undefined;
afterAll(async () => {
  if (noisy) await rm(await noisy, { recursive: true, force: true });
});

/**
 * A folder of six 1600x1200 PNGs of noise, slow to encode, large to write: made once, on first use, for the tests
 * below that read it (the folder is never written to).
 */
function noisyOriginals(): Promise<string> {
  noisy ??= (async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'content-api-noisy-'));
    await Promise.all(
      Array.from({ length: 6 }, (_, i) => {
        const pixels = Buffer.alloc(1600 * 1200 * 3);
        for (let p = 0; p < pixels.length; p++) pixels[p] = (p * 2654435761 + i) >>> 24;
        return writeImage(
          dir,
          `noisy-${i}.png`,
          sharp(pixels, { raw: { width: 1600, height: 1200, channels: 3 } }).png(),
        );
      }),
    );
    return dir;
  })();
  return noisy;
}

const tiny = await tmpfs('tiny', '3m');

describe.skipIf(tiny === null)('a disk that fills up mid-run', () => {
  it(
    'the originals that could not be written fail with the reason; the others are recorded; the report is printed; ' +
      'nothing stale is left',
    async () => {
      const out = path.join(tiny!, 'out');
      const result = await runCli(['render', await noisyOriginals(), '--out', out, '--json', '--concurrency', '1']);
      expect(result.code).toBe(1);
      const report = JSON.parse(result.stdout);
      expect(report.failures.length).toBeGreaterThan(0);
      for (const failure of report.failures) expect(failure.error).toMatch(/ENOSPC/);
      expect(report.results.length + report.failures.length).toBe(6);
      const names = await readdir(out);
      expect(names.filter((name) => /\.tmp-|\.lock$/.test(name))).toEqual([]);
      const records = await readdir(path.join(out, MANIFEST_RECORDS), { recursive: true }).catch(() => []);
      expect(records.filter((name) => /\.tmp-/.test(name))).toEqual([]);
      const manifest = { entries: await readEntries(out) };
      // What the manifest records is there, whole; what failed is not recorded.
      const recorded = Object.values(manifest.entries) as Array<{
        renditions: Record<string, { path: string; bytes: number }>;
      }>;
      for (const entry of recorded) {
        for (const rendition of Object.values(entry.renditions))
          expect((await readFile(path.join(out, rendition.path))).length).toBe(rendition.bytes);
      }
      expect(recorded.length).toBeLessThanOrEqual(report.results.length);
    },
  );
});

/** A tmpfs to turn read-only mid-run. */
const later = await tmpfs('later', '64m');

describe.skipIf(later === null)('an output folder that turns read-only mid-run', () => {
  it('the originals it stops fail with the reason, the report is printed, exit 1: never a stack (#22)', async () => {
    const out = path.join(later!, 'out');
    const { done } = startCli(['render', await noisyOriginals(), '--out', out, '--json', '--concurrency', '1']);
    // The first rendition written, the folder turns read-only.
    while (!(await readdir(out).catch(() => [])).some((name) => name.startsWith('noisy-'))) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    // Refused (busy) while a file on it is open for writing: tried again until it takes, the run going on.
    for (let attempt = 1; ; attempt++) {
      try {
        await execFile('mount', ['-o', 'remount,ro', later!]);
        break;
      } catch (error) {
        if (attempt === 200 || !String((error as { stderr?: string }).stderr).includes('busy')) throw error;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
    const result = await done;
    expect(result.code, result.stderr).toBe(1);
    const report = JSON.parse(result.stdout);
    expect(report.failures.length).toBeGreaterThan(0);
    for (const failure of report.failures) expect(failure.error).toMatch(/EROFS/);
    expect(report.results.length + report.failures.length).toBe(6);
    expect(result.stderr).not.toMatch(/^(error|Error)|\n\s+at /m);
  });
});

describe('progress on a terminal', () => {
  it('shows the original under way, not the last one finished: a long encode is named while it runs', async () => {
    const dir = await tempDir();
    await writeImage(dir, 'in/a-small.jpg', photo(200, 100).jpeg());
    // Noise: a slow PNG encode, about a second here, where the progress line is drawn at most every 80 ms.
    const pixels = randomFillSync(Buffer.alloc(2000 * 1500 * 3));
    await writeImage(dir, 'in/b-large.png', sharp(pixels, { raw: { width: 2000, height: 1500, channels: 3 } }).png());
    const tty = await runInTerminal([
      'render',
      path.join(dir, 'in'),
      '--out',
      path.join(dir, 'out'),
      '--concurrency',
      '1',
    ]);
    expect(tty.code).toBe(0);
    // When the small one has finished (1/2), the line names the large one, which is under way.
    expect(tty.stdout).toMatch(/\] 1\/2 \S*b-large\.png/);
    expect(tty.stdout).not.toMatch(/\] 1\/2 \S*a-small\.jpg/);
  });
});
