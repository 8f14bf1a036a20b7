/**
 * Bad input and faults, through the real binary: each bad original fails alone with one
 * line naming it, the rest completes, exit codes mean what the README says, and the output
 * folder never holds a partial or temporary file, even after kill -9.
 */
import { randomFillSync } from 'node:crypto';
import { chmod, copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { photo, writeImage } from '../fixtures/images.js';
import { readEntries } from '../fixtures/manifest.js';
import { tempDir } from '../fixtures/tmp.js';
import { runCli, startCli } from './run-cli.js';

/** Every file in `dir` (recursively) decodes, and none is a temporary file. */
async function expectOnlyWholeFiles(dir: string) {
  const names = (await readdir(dir, { recursive: true })) as string[];
  expect(names.filter((name) => /\.tmp-/.test(name))).toEqual([]);
  for (const name of names) {
    const file = path.join(dir, name);
    if (name.endsWith('.json') || !/\.(jpg|png|webp|gif|avif)$/.test(name)) continue;
    await expect(sharp(file).metadata(), file).resolves.toBeTruthy();
    await expect(sharp(file).raw().toBuffer(), file).resolves.toBeTruthy();
  }
}

/**
 * A noisy JPEG of some megapixels: slow enough to render (noise neither compresses nor resizes
 * cheaply) that a batch of them can be interrupted after its first rendition and before its end.
 */
async function noisyJpeg(file: string, width = 2000, height = 1333) {
  const pixels = randomFillSync(Buffer.alloc(width * height * 3));
  await mkdir(path.dirname(file), { recursive: true });
  await sharp(pixels, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 90 })
    .toFile(file);
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await sleep(20);
  }
}

const hasRendition = (dir: string) => async () =>
  ((await readdir(dir, { recursive: true }).catch(() => [])) as string[]).some((name) =>
    /\.max-\d+x\d+\.jpg$/.test(name),
  );

describe('bad originals fail alone', () => {
  it('names each bad file and its reason on one line, renders the rest, exits 1', async () => {
    const dir = await tempDir();
    const inDir = path.join(dir, 'in');
    await writeImage(inDir, 'good.jpg', photo(200, 150).jpeg());
    await writeFile(
      path.join(inDir, 'corrupt.jpg'),
      Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 37) % 256)),
    );
    const whole = await photo(200, 150).jpeg().toBuffer();
    await writeFile(path.join(inDir, 'truncated.jpg'), whole.subarray(0, whole.length >> 1));
    await writeFile(path.join(inDir, 'empty.png'), '');
    await writeFile(path.join(inDir, 'notes.png'), 'this is text, not a PNG\n');
    await writeImage(inDir, 'huge.png', photo(300, 300));
    const svg = path.join(dir, 'drawing.svg');
    await writeFile(svg, '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>');
    const out = path.join(dir, 'out');

    const args = ['render', inDir, svg, '--out', out, '--pixel-limit', '50000'];
    const text = await runCli(args);
    expect(text.code).toBe(1);
    const lines = text.stderr
      .trim()
      .split('\n')
      .filter((line) => line.startsWith('failed: '));
    const expected: Record<string, RegExp> = {
      'corrupt.jpg': /corrupt\.jpg: not an image in a supported format|corrupt\.jpg: cannot decode/,
      'truncated.jpg': /truncated\.jpg: cannot decode image/,
      'empty.png': /empty\.png: file is empty/,
      'notes.png': /notes\.png: not an image in a supported format/,
      'huge.png': /huge\.png: 300x300 exceeds the pixel limit of 50000/,
      'drawing.svg': /drawing\.svg: SVG is a vector format/,
    };
    expect(lines).toHaveLength(Object.keys(expected).length);
    for (const [name, pattern] of Object.entries(expected)) {
      expect(
        lines.filter((line) => line.includes(name)),
        name,
      ).toHaveLength(1);
      expect(lines.find((line) => line.includes(name))).toMatch(pattern);
    }
    expect(text.stderr).toMatch(/1 rendered, 0 up to date, 6 failed/);
    await expectOnlyWholeFiles(out);
    expect((await readdir(out)).filter((f) => f.startsWith('good.'))).toHaveLength(5);

    const json = await runCli([...args, '--json', '--force']);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout);
    expect(report.results.map((r: { source: string }) => path.basename(r.source))).toEqual(['good.jpg']);
    const codes = Object.fromEntries(
      report.failures.map((f: { source: string; code: string }) => [path.basename(f.source), f.code]),
    );
    expect(codes).toEqual({
      'corrupt.jpg': 'CONTENT_API_UNSUPPORTED_FORMAT',
      'truncated.jpg': 'CONTENT_API_CORRUPT_IMAGE',
      'empty.png': 'CONTENT_API_EMPTY_FILE',
      'notes.png': 'CONTENT_API_UNSUPPORTED_FORMAT',
      'huge.png': 'CONTENT_API_PIXEL_LIMIT',
      'drawing.svg': 'CONTENT_API_UNSUPPORTED_FORMAT',
    });
    for (const failure of report.failures) expect(failure.error).not.toContain('\n');
  });

  it('reports an unreadable file (not when root, who reads anything)', async (context) => {
    if (process.getuid?.() === 0) context.skip('root reads any file, whatever its mode');
    const dir = await tempDir();
    const file = await writeImage(dir, 'secret.jpg', photo(50, 50).jpeg());
    await chmod(file, 0o000);
    const result = await runCli(['render', file, '--out', path.join(dir, 'out'), '--json']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).failures[0]).toMatchObject({ code: 'CONTENT_API_UNREADABLE' });
  });
});

describe('could not run: exit 2', () => {
  it.each([
    [['--concurrency', 'abc'], /Expected a positive integer for --concurrency but got 'abc'/],
    [['--jpeg-quality', '0'], /Expected an integer from 1 to 100 for --jpeg-quality but got '0'/],
    [['--format', 'bmp'], /argument 'bmp' is invalid\. Allowed choices are jpeg, png, webp, avif/],
    [['--naming', 'dots'], /Allowed choices are max, underscore/],
    [['--unknown-flag'], /unknown option '--unknown-flag'/],
    [
      ['--media-url', 'media'],
      /Expected a path starting with \/ or an absolute http\(s\) URL, without spaces, .* for --media-url but got 'media'/,
    ],
    [
      ['--quality', 'best'],
      /Expected fixed, auto, or auto:<score> with a score from 30 to 99 for --quality but got 'best'/,
    ],
  ])('%j', async (flags, message) => {
    const dir = await tempDir();
    const result = await runCli(['render', dir, '--out', path.join(dir, 'out'), ...flags]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe('');
  });

  it('an output folder that cannot be created', async () => {
    const dir = await tempDir();
    const source = await writeImage(dir, 'a.jpg', photo(50, 50).jpeg());
    await writeFile(path.join(dir, 'file'), 'not a folder');
    const result = await runCli(['render', source, '--out', path.join(dir, 'file', 'out')]);
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toMatch(
      /^error: .*file\/out: output folder is not writable \(a file is in the way, not a folder\)$/,
    );
  });

  it('a missing command argument', async () => {
    const result = await runCli(['render']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/Expected originals to render \(files or folders\), or --page/);
  });
});

describe('interruptions and concurrent runs', () => {
  // The noisy originals the interrupted runs read (never change), made once for both.
  let noisy: string;
  beforeAll(async () => {
    noisy = await mkdtemp(path.join(tmpdir(), 'content-api-noisy-'));
    await Promise.all(Array.from({ length: 10 }, (_, i) => noisyJpeg(path.join(noisy, `photo-${i}.jpg`))));
  });
  afterAll(() => rm(noisy, { recursive: true, force: true }));

  /** A folder of `count` of the noisy originals, `photo-0.jpg` on. */
  async function noisyOriginals(dir: string, count: number) {
    await mkdir(dir, { recursive: true });
    for (let i = 0; i < count; i++)
      await copyFile(path.join(noisy, `photo-${i}.jpg`), path.join(dir, `photo-${i}.jpg`));
  }

  it('kill -9 mid-batch, then a rerun completes with whole files and a valid manifest', async () => {
    const dir = await tempDir();
    const inDir = path.join(dir, 'in');
    await noisyOriginals(inDir, 10);
    const out = path.join(dir, 'out');
    const args = ['render', inDir, '--out', out, '--concurrency', '2'];

    const { child, done } = startCli(args);
    await waitFor(hasRendition(out));
    child.kill('SIGKILL');
    const killed = await done;
    expect(killed.signal).toBe('SIGKILL');
    expect(await readdir(out)).toContain('.content-api-claims'); // the dead run's claims, still there

    const rerun = await runCli(args);
    expect(rerun.code).toBe(0);
    await expectOnlyWholeFiles(out);
    const manifest = { entries: await readEntries(out) };
    expect(Object.keys(manifest.entries).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `photo-${i}.jpg`));
    for (const entry of Object.values(manifest.entries) as Array<{
      renditions: Record<string, { path: string; width: number; height: number }>;
    }>) {
      for (const rendition of Object.values(entry.renditions)) {
        const meta = await sharp(path.join(out, rendition.path)).metadata();
        expect([meta.width, meta.height]).toEqual([rendition.width, rendition.height]);
      }
    }
    const third = await runCli([...args, '--json']);
    expect(JSON.parse(third.stdout).results.every((r: { status: string }) => r.status === 'skipped')).toBe(true);
    // The killed run's claims on the images it had under way are released by the rerun, not left forever.
    expect((await readdir(out)).filter((name) => name.startsWith('.content-api-claims'))).toEqual([]);
  });

  it('SIGINT lets the originals under way finish and leaves no temporary file', async () => {
    const dir = await tempDir();
    const inDir = path.join(dir, 'in');
    await noisyOriginals(inDir, 8);
    const out = path.join(dir, 'out');
    const { child, done } = startCli(['render', inDir, '--out', out, '--concurrency', '1']);
    await waitFor(hasRendition(out));
    child.kill('SIGINT');
    const result = await done;
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/interrupted/);
    // Originals never started are counted apart, not as failures (one real failure is not "7 failed").
    expect(result.stderr).not.toMatch(/failed/);
    expect(result.stderr).toMatch(/\d rendered, 0 up to date, [1-7] not started \(interrupted\) in /);
    await expectOnlyWholeFiles(out);
  });

  it(
    'two runs at once rendering different pictures of the same names: ' +
      'each name is rendered by one run, refused by the other',
    async () => {
      const dir = await tempDir();
      for (const [batch, width] of [
        ['a', 1600],
        ['b', 1000],
      ] as const) {
        await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            writeImage(path.join(dir, batch), `same-${i}.jpg`, photo(width, 800).jpeg()),
          ),
        );
      }
      const out = path.join(dir, 'out');
      const runs = await Promise.all(
        ['a', 'b'].map((batch) =>
          runCli(['render', path.join(dir, batch), '--out', out, '--concurrency', '1', '--json']),
        ),
      );
      const reports = runs.map(
        (run) =>
          JSON.parse(run.stdout) as {
            results: Array<{ source: string }>;
            failures: Array<{ source: string; code: string; error: string }>;
          },
      );
      for (let i = 0; i < 6; i++) {
        const name = `same-${i}.jpg`;
        const rendered = reports.map((report) => report.results.some((r) => path.basename(r.source) === name));
        const refused = reports.map((report) => report.failures.find((f) => path.basename(f.source) === name));
        // Exactly one run rendered it; the other refused it as a collision, naming the picture it would overwrite.
        expect(rendered.filter(Boolean)).toHaveLength(1);
        const loser = rendered.indexOf(false);
        expect(refused[loser]?.code).toBe('CONTENT_API_NAME_COLLISION');
        expect(refused[loser]?.error).toMatch(/would overwrite the renditions of/);
        // The files are the winner's picture.
        const width = rendered[0] ? 1600 : 1000;
        expect((await sharp(path.join(out, `same-${i}.max-300x300.jpg`)).metadata()).width).toBe(300);
        expect((await sharp(path.join(out, `same-${i}.max-4800x4800.jpg`)).metadata()).width).toBe(width);
      }
      const manifest = { entries: await readEntries(out) };
      expect(Object.keys(manifest.entries)).toHaveLength(6);
      expect((await readdir(out)).filter((name) => name.startsWith('.content-api-claims'))).toEqual([]);
      await expectOnlyWholeFiles(out);
    },
  );

  it('two runs into one output folder at once keep both runs in the manifest', async () => {
    const dir = await tempDir();
    for (const batch of ['a', 'b']) {
      await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          writeImage(path.join(dir, batch), `${batch}${i}.jpg`, photo(1200, 800).jpeg()),
        ),
      );
    }
    const out = path.join(dir, 'out');
    const [a, b] = await Promise.all(
      ['a', 'b'].map((batch) => runCli(['render', path.join(dir, batch), '--out', out, '--concurrency', '1'])),
    );
    expect([a!.code, b!.code]).toEqual([0, 0]);
    const manifest = { entries: await readEntries(out) };
    expect(Object.keys(manifest.entries).sort()).toEqual(
      ['a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'b0', 'b1', 'b2', 'b3', 'b4', 'b5'].map((k) => `${k}.jpg`),
    );
    await expectOnlyWholeFiles(out);
  });
});
