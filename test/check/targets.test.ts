/**
 * What check reads, through the real binary: the sample pages folder (pages only, no
 * patches), a serve content folder with --base-url, folders that loop through symlinks or
 * hold special files, and many pages in a heap that cannot hold them all.
 */
import { link, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, runCli } from '../cli/run-cli.js';
import { mkfifo, spawn } from '../fixtures/launcher.js';
import { tempDir } from '../fixtures/tmp.js';
import { PAGES } from '../page/variants.js';

const VALID = path.join(PAGES, 'presentation-every-block.json');
const CONTENT = path.resolve(PAGES, '../content');

describe('the samples', () => {
  it('check samples/pages reads only pages (the variant patches live with the tests)', async () => {
    const result = await runCli(['check', PAGES]);
    expect(result.stdout).toBe('1 page(s), 18 image(s): no findings\n');
    expect(result.code).toBe(0);
  });

  it('a serve content folder: --base-url fills {base_url} as serve does; without it, one finding says so', async () => {
    const pages = path.join(CONTENT, 'pages');
    const filled = await runCli([
      'check',
      pages,
      '--base-url',
      'http://127.0.0.1:8000',
      '--verify-files',
      path.join(CONTENT, 'media'),
    ]);
    expect(filled.stdout).toMatch(/^4 page\(s\), 26 image\(s\), \d+ files probed \(.+\): no findings\n$/);
    expect(filled.code).toBe(0);
    const bare = await runCli(['check', path.join(pages, '101.json'), '--reporter', 'json']);
    expect(bare.code).toBe(1);
    expect(JSON.parse(bare.stdout).pages[0].problems[0]).toEqual({
      severity: 'error',
      path: '$',
      rule: 'base-url-placeholder',
      message: 'the page holds {base_url} placeholders (a serve content folder): give --base-url to fill them',
    });
  });
});

describe('folder walks', () => {
  it('a folder that loops through symlinks ends: each real folder is read once', async () => {
    const dir = await tempDir();
    await mkdir(path.join(dir, 'a', 'b'), { recursive: true });
    await link(VALID, path.join(dir, 'a', 'one.json'));
    await link(VALID, path.join(dir, 'a', 'b', 'two.json'));
    await symlink('..', path.join(dir, 'a', 'b', 'up')); // a/b/up -> a: a loop
    await symlink(dir, path.join(dir, 'a', 'b', 'root')); // back to the top
    await symlink(path.join(dir, 'a', 'b'), path.join(dir, 'b-again')); // a second name for a folder
    await symlink(path.join(dir, 'nowhere'), path.join(dir, 'dangling.json'));
    const result = await runCli(['check', dir, '--reporter', 'json-lines']);
    expect(result.code).toBe(0);
    const sources = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((r) => r.type === 'page')
      .map((r) => path.relative(dir, r.source));
    expect(sources).toEqual([path.join('a', 'b', 'two.json'), path.join('a', 'one.json')]);
  });

  it('a FIFO named like a page is not waited on', async () => {
    const dir = await tempDir();
    await link(VALID, path.join(dir, 'page.json'));
    await mkfifo(path.join(dir, 'fifo.json'));
    const result = await runCli(['check', dir]);
    expect(result.stdout).toBe('1 page(s), 18 image(s): no findings\n');
    expect(result.code).toBe(0);
  });
});

describe('memory does not grow with the number of pages', () => {
  /**
   * The CLI with an old generation of `heapMb` MB, its output counted rather than kept. V8 sizes the young
   * generation from the old one's limit: in 48 MB, so small that each page's short-lived objects were
   * promoted and the old generation collected every few pages (over 100 full collections a check, 63 s of
   * CPU for the four). A 4 MB semi-space (V8's usual is 16) keeps them young. The old generation's limit
   * is what is tested, and it stays: a check that kept each page it read runs out of memory with or
   * without it.
   */
  function checkInSmallHeap(
    args: string[],
    heapMb: number,
  ): Promise<{ code: number | null; bytes: number; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [`--max-old-space-size=${heapMb}`, '--max-semi-space-size=4', BIN, 'check', ...args],
        {
          env: { ...process.env, NO_COLOR: '1', CI: '1' },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let bytes = 0;
      let stderr = '';
      child.stdout!.on('data', (chunk: Buffer) => (bytes += chunk.length));
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk.slice(0, 2000)));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, bytes, stderr }));
    });
  }

  /**
   * Four checks of 600 pages in an old generation kept small on purpose: about 2 s each alone, more beside
   * the suite's other files on two cores; the four run at once, as separate processes. What is tested is
   * the memory, not the time.
   */
  const smallHeapTimeout = 180_000;

  it(
    '600 pages with findings in a 48 MB heap, for text, json-lines, junit and github ' +
      '(holding them all took over 64 MB)',
    async () => {
      const dir = await tempDir();
      // Each page has one finding, so every reporter has something to write for every page.
      const page = JSON.parse(await readFile(VALID, 'utf8'));
      page.presentation_stage.colour = 'red';
      const file = path.join(dir, 'template.json.txt');
      await writeFile(file, JSON.stringify(page, null, 2));
      await mkdir(path.join(dir, 'pages'));
      for (let i = 0; i < 600; i++)
        await link(file, path.join(dir, 'pages', `page-${String(i).padStart(3, '0')}.json`));
      // Four processes, each in its own 48 MB heap: run side by side, their memory is still each one's own.
      const reporters = ['text', 'json-lines', 'junit', 'github'];
      const results = await Promise.all(
        reporters.map((reporter) => checkInSmallHeap([path.join(dir, 'pages'), '--reporter', reporter], 48)),
      );
      for (const [i, reporter] of reporters.entries()) {
        const result = results[i]!;
        expect(result.stderr, reporter).not.toMatch(/heap out of memory/);
        expect(result.code, reporter).toBe(1); // 600 warnings
        expect(result.bytes, reporter).toBeGreaterThan(600 * 60);
      }
    },
    smallHeapTimeout,
  );
});
