/**
 * The records folders' indexes (src/renditions/records-index.ts): a render leaves one in each records
 * folder, a line a record with the record's stat; a rerun that keeps no results finds an original up
 * to date from its line while its record's stat is the one indexed, and otherwise reads the record,
 * as without an index. An index missing, stale or not one costs reads, never a wrong answer; a dry
 * run and `check` write none.
 */
import { mkdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { INDEX_FILE, RecordsIndex } from '../../src/renditions/records-index.js';
import { type RenderOptions, renderOriginals } from '../../src/renditions/render.js';
import { photo, writeImage } from '../fixtures/images.js';
import { mkfifo } from '../fixtures/launcher.js';
import { readEntries, recordFile } from '../fixtures/manifest.js';
import { tempDir } from '../fixtures/tmp.js';

const indexOf = (out: string, folder = '') => path.join(out, '.content-api-manifest', folder, INDEX_FILE);

/** The lines of an index after its header, as parsed: `[name, size, mtimeMs, ctimeMs, ino, summary]`. */
type Line = [string, number, number, number, number, unknown[]];
async function indexLines(out: string, folder = ''): Promise<Line[]> {
  const [header, ...lines] = (await readFile(indexOf(out, folder), 'utf8')).trimEnd().split('\n');
  expect(header).toBe('{"version":1}');
  return lines.map((line) => JSON.parse(line) as Line);
}

/** Originals in two folders, rendered once; every file looks settled (its stamp recorded). */
async function rendered() {
  const dir = await tempDir();
  const input = path.join(dir, 'originals');
  await writeImage(input, 'a.jpg', photo(640, 480).jpeg());
  await writeImage(input, 'b.png', photo(500, 400).png());
  await writeImage(input, 'room/c.jpg', photo(480, 640).jpeg());
  const out = path.join(dir, 'media');
  const run = (options: Partial<RenderOptions> = {}) =>
    renderOriginals([input], { outDir: out, collectResults: false, ...options });
  const first = await run();
  expect(first.counts).toMatchObject({ rendered: 3, skipped: 0 });
  return { dir, input, out, run };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 10_000 }); // every file looks settled
});
afterEach(() => {
  vi.useRealTimers();
});

describe('records folder index', () => {
  it('a render leaves each records folder an index: a line a record, with the record file’s stat', async () => {
    const { out } = await rendered();
    const top = await indexLines(out);
    expect(top.map((line) => line[0]).sort()).toEqual(['a.jpg.json', 'b.png.json']);
    for (const [name, size, mtimeMs, ctimeMs, ino, summary] of top) {
      const info = await stat(path.join(out, '.content-api-manifest', name));
      expect([size, mtimeMs, ctimeMs, ino]).toEqual([info.size, info.mtimeMs, info.ctimeMs, info.ino]);
      expect(summary[0]).toBe(`../originals/${name.replace(/\.json$/, '')}`);
    }
    expect((await indexLines(out, 'room')).map((line) => line[0])).toEqual(['c.jpg.json']);
  });

  it(
    'a rerun finds every original up to date from the index and writes nothing: ' +
      'the same counts as from the records',
    async () => {
      const { out, run } = await rendered();
      const before = await stat(indexOf(out));
      expect((await run()).counts).toMatchObject({ rendered: 0, skipped: 3, kept: 0 });
      const after = await stat(indexOf(out));
      expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
      // Without indexes, the same answer from the records, and the indexes written again.
      await rm(indexOf(out));
      await rm(indexOf(out, 'room'));
      expect((await run()).counts).toMatchObject({ rendered: 0, skipped: 3, kept: 0 });
      expect(await indexLines(out)).toHaveLength(2);
      expect(await indexLines(out, 'room')).toHaveLength(1);
    },
  );

  it('while a record’s stat is the one indexed, its line stands for it: the record is not read', async () => {
    const { out, run } = await rendered();
    // The line says another settings key, the record's stat kept: the rerun believes the line, finds the
    // original's files out of date by it, and reads the record, which says they are not.
    const lines = await indexLines(out);
    for (const line of lines) line[5][2] = 'v0 made up';
    await writeFile(indexOf(out), `${['{"version":1}', ...lines.map((line) => JSON.stringify(line))].join('\n')}\n`);
    expect((await run()).counts).toMatchObject({ rendered: 0, skipped: 3 });
    // The record read, its line learned again: the index is written again with the record's settings.
    const settings = Object.fromEntries((await indexLines(out)).map((line) => [line[0], line[5][2]]));
    const entries = await readEntries(out);
    expect(settings).toEqual({ 'a.jpg.json': entries['a.jpg']!.settings, 'b.png.json': entries['b.png']!.settings });
    expect(settings['a.jpg.json']).not.toBe('v0 made up');

    // A rendition cut short, its line made to say so (the record's stat kept): skipped, on the line's word.
    const entry = (await readEntries(out))['a.jpg']!;
    const xs = path.join(out, entry.renditions.xs.path);
    await truncate(xs, 10);
    const edited = await indexLines(out);
    const a = edited.find((line) => line[0] === 'a.jpg.json')!;
    a[5][15 + 1] = 10; // xs's size
    await writeFile(indexOf(out), `${['{"version":1}', ...edited.map((line) => JSON.stringify(line))].join('\n')}\n`);
    expect((await run()).counts).toMatchObject({ rendered: 0, skipped: 3 });
    // Without the index, the record decides: the rendition is made again.
    await rm(indexOf(out));
    expect((await run()).counts).toMatchObject({ rendered: 1, skipped: 2 });
    expect((await stat(xs)).size).toBe(entry.renditions.xs.bytes);
  });

  it('a record rewritten after it was indexed is read, not taken from its line', async () => {
    const { out, run } = await rendered();
    const file = recordFile(out, 'a.jpg');
    const record = JSON.parse(await readFile(file, 'utf8'));
    record.entry.settings = 'v0 made up';
    await writeFile(file, JSON.stringify(record)); // in place: its times change
    expect((await run()).counts).toMatchObject({ rendered: 1, skipped: 2 });
    expect((await readEntries(out))['a.jpg']!.settings).toBe('v1 jpeg q80 max');
  });

  it('a rendition cut short or removed is rendered again, as without an index', async () => {
    const { out, run } = await rendered();
    const entries = await readEntries(out);
    await truncate(path.join(out, entries['a.jpg']!.renditions.md.path), 100);
    await rm(path.join(out, entries['room/c.jpg']!.renditions.xl.path));
    expect((await run()).counts).toMatchObject({ rendered: 2, skipped: 1 });
    expect((await run()).counts).toMatchObject({ rendered: 0, skipped: 3 });
  });

  it('settings changed, an original replaced, formats added: the index decides nothing it should not', async () => {
    const { input, run } = await rendered();
    expect((await run({ quality: { jpeg: 70 } })).counts).toMatchObject({ rendered: 2, skipped: 1 });
    await writeImage(input, 'b.png', photo(500, 400, 4).png());
    expect((await run({ quality: { jpeg: 70 } })).counts).toMatchObject({ rendered: 1, skipped: 2 });
    // Formats added, then taken away: the files of the first kept, counted as such from the index too.
    expect((await run({ quality: { jpeg: 70 }, formats: ['keep', 'webp'] })).counts).toMatchObject({ rendered: 3 });
    const kept = await run({ quality: { jpeg: 70 } });
    expect(kept.counts).toMatchObject({ rendered: 0, skipped: 3, kept: 15 });
    expect((await run({ quality: { jpeg: 70 } })).counts).toMatchObject({ rendered: 0, skipped: 3, kept: 15 });
  });

  it(
    'an index that is not one costs reads, never an answer: every original still up to date, ' +
      'and the index written again',
    async () => {
      const { out, run } = await rendered();
      const whole = await readFile(indexOf(out), 'utf8');
      const broken = [
        'not json\n',
        whole.slice(0, whole.length / 2),
        whole.replace('{"version":1}', '{"version":2}'),
        whole.replace(/"a\.jpg\.json",\d+/, '"a.jpg.json","x"'),
        `{"version":1}\n${'['.repeat(100_000)}\n`,
        Buffer.from([0xff, 0xfe, 0x00]).toString('latin1'),
      ];
      for (const text of broken) {
        await writeFile(indexOf(out), text);
        expect((await run()).counts, text.slice(0, 40)).toMatchObject({ rendered: 0, skipped: 3, kept: 0 });
        expect((await indexLines(out)).map((line) => line[0]).sort()).toEqual(['a.jpg.json', 'b.png.json']);
      }
      // Not a file: a FIFO is not opened to wait for a writer; the index is written in its place.
      await rm(indexOf(out));
      await mkfifo(indexOf(out));
      expect((await run()).counts).toMatchObject({ rendered: 0, skipped: 3 });
      expect((await stat(indexOf(out))).isFile()).toBe(true);
    },
  );

  it('a dry run writes no index; results kept (--json) are made from the records', async () => {
    const { out, run } = await rendered();
    await rm(indexOf(out));
    expect((await run({ dryRun: true, collectResults: true })).counts).toMatchObject({ skipped: 3 });
    await expect(stat(indexOf(out))).rejects.toThrow(/ENOENT/);
    const withResults = await run({ collectResults: true });
    expect(withResults.results.map((result) => result.status)).toEqual(['skipped', 'skipped', 'skipped']);
    expect(withResults.results[0]!.placeholder?.preview).toMatch(/^data:image\//);
  });
});

describe('RecordsIndex', () => {
  const summary = z.object({ said: z.string() });
  /** A records root with a folder `f/` of `count` record files. */
  async function folderOf(count: number) {
    const root = await tempDir();
    await mkdir(path.join(root, 'f'));
    const names = [...Array(count).keys()].map((i) => `r${i}.json`);
    for (const name of names) await writeFile(path.join(root, 'f', name), `{"n":"${name}"}`);
    return { root, names };
  }
  const statOf = (root: string, name: string) => stat(path.join(root, 'f', name));
  const writer = (root: string) => async (folder: string, bytes: Buffer) => {
    await writeFile(path.join(root, folder, INDEX_FILE), bytes);
  };

  it('a line learned is read back while its record’s stat holds, and dropped once it does not', async () => {
    const { root, names } = await folderOf(2);
    const index = new RecordsIndex(summary, root);
    for (const name of names) index.learn('f/', name, await statOf(root, name), { said: name });
    await index.flush(() => false, writer(root));
    await expect(stat(path.join(root, 'f', INDEX_FILE))).rejects.toThrow(/ENOENT/); // not through with it yet
    await index.flush((folder) => folder === 'f/', writer(root));
    const again = new RecordsIndex(summary, root);
    expect(names.map((name) => again.summary('f/', name))).toEqual([{ said: 'r0.json' }, { said: 'r1.json' }]);
    await writeFile(path.join(root, 'f', 'r1.json'), '{"n":"changed, and longer"}');
    expect(again.summary('f/', 'r1.json')).toBeUndefined();
    // Written again with a line learned, the stale line is left out.
    again.learn('f/', 'r0.json', await statOf(root, 'r0.json'), { said: 'again' });
    await again.flush(() => true, writer(root));
    const third = new RecordsIndex(summary, root);
    expect([third.summary('f/', 'r0.json'), third.summary('f/', 'r1.json')]).toEqual([{ said: 'again' }, undefined]);
  });

  it('a folder past its cap of lines gets no index, and an index past it is not read', async () => {
    const { root, names } = await folderOf(4);
    const capped = new RecordsIndex(summary, root, 3);
    for (const name of names) capped.learn('f/', name, await statOf(root, name), { said: name });
    await capped.flush(() => true, writer(root));
    await expect(stat(path.join(root, 'f', INDEX_FILE))).rejects.toThrow(/ENOENT/);
    const uncapped = new RecordsIndex(summary, root);
    for (const name of names) uncapped.learn('f/', name, await statOf(root, name), { said: name });
    await uncapped.flush(() => true, writer(root));
    expect(new RecordsIndex(summary, root).summary('f/', 'r0.json')).toEqual({ said: 'r0.json' });
    expect(new RecordsIndex(summary, root, 3).summary('f/', 'r0.json')).toBeUndefined();
  });
});
