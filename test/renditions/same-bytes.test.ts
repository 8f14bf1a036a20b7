/**
 * The same original with the same settings gives the same bytes, however it is rendered: alone or
 * in a batch, at -j 1 or -j 2, on one core or two, in shards and through the queue's worker. Every
 * file is compared byte for byte with a batch rendered by the CLI at -j 2, and every manifest entry
 * (but for the originals' stamps) with its record. JPEG, PNG (truecolour with alpha, and an exact
 * palette), WebP and AVIF, from originals of each kind; AVIF is the one whose bytes followed
 * libvips' threads (src/cli/threads.ts), and the renditions over 128x128 px are where they would.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderOriginal, renderOriginals } from '../../src/renditions/render.js';
import { AVIF_THREADS } from '../../src/renditions/settings.js';
import { shardOf } from '../../src/renditions/shard.js';
import { runCli, startCli } from '../cli/run-cli.js';
import { photo, writeImage } from '../fixtures/images.js';
import { readEntries } from '../fixtures/manifest.js';
import { redisForFile, WITHOUT_QUEUE_ENV } from '../fixtures/redis.js';

const redis = redisForFile();
const FORMATS = ['keep', 'webp', 'avif'] as const;
const formats = ['--formats', FORMATS.join(',')];

/** Four flat colours: a PNG rendition of it is written with an exact palette. */
function flatColours(width: number, height: number) {
  const data = Buffer.alloc(width * height * 3);
  const colours = [
    [200, 40, 40],
    [40, 160, 60],
    [30, 60, 200],
    [240, 220, 80],
  ];
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++)
      data.set(colours[(x * 2 < width ? 0 : 1) + (y * 2 < height ? 0 : 2)]!, (y * width + x) * 3);
  return sharp(data, { raw: { width, height, channels: 3 } });
}

interface Snapshot {
  files: Map<string, Buffer>;
  /** The manifest's entries without the originals' stamps (recorded only once a file is old enough). */
  entries: Record<string, unknown>;
}

async function snapshot(out: string): Promise<Snapshot> {
  const names = ((await readdir(out, { recursive: true })) as string[]).filter((name) =>
    /\.(jpg|png|webp|avif)$/.test(name),
  );
  const files = new Map(
    await Promise.all(names.sort().map(async (name) => [name, await readFile(path.join(out, name))] as const)),
  );
  const entries = Object.fromEntries(
    Object.entries(await readEntries(out)).map(([key, { stamp: _, ...entry }]) => [key, entry]),
  );
  return { files, entries };
}

/** The files whose bytes differ from `reference`'s, or that only one of the two has. */
function differing(reference: Snapshot, other: Snapshot): string[] {
  const names = new Set([...reference.files.keys(), ...other.files.keys()]);
  return [...names].filter((name) => !reference.files.get(name)?.equals(other.files.get(name) ?? Buffer.alloc(0)));
}

describe('the same bytes everywhere', () => {
  let dir: string;
  let input: string;
  let originals: string[];
  let reference: Snapshot;
  const initial = sharp.concurrency();
  const out = (name: string) => path.join(dir, 'out', name);

  beforeAll(async () => {
    // In this process the tests are the application, and set libvips' threads as the CLI does.
    sharp.concurrency(AVIF_THREADS);
    // Shared by the tests (tempDir's folders go after each test).
    dir = await mkdtemp(path.join(tmpdir(), 'content-api-bytes-'));
    input = path.join(dir, 'in');
    originals = await Promise.all([
      writeImage(input, 'meadow.jpg', photo(640, 400).jpeg()),
      writeImage(input, 'alpha.png', photo(480, 320, 4).png()),
      writeImage(input, 'lily.png', flatColours(400, 300).png()),
      writeImage(input, 'poster.webp', photo(560, 360).webp()),
      writeImage(input, 'clip.avif', photo(520, 340).avif()),
    ]);
    const batch = await runCli(['render', input, '--out', out('reference'), '-j', '2', ...formats]);
    expect(batch.code, batch.stderr).toBe(0);
    reference = await snapshot(out('reference'));
    // Five files of each original in keep's format, WebP and AVIF (one format fewer for the WebP and the AVIF).
    expect(reference.files.size).toBe((3 + 3 + 3 + 2 + 2) * 5);
    expect(new Set([...reference.files.keys()].map((name) => path.extname(name)))).toEqual(
      new Set(['.jpg', '.png', '.webp', '.avif']),
    );
  }, 120_000);

  afterAll(async () => {
    sharp.concurrency(initial);
    await rm(dir, { recursive: true, force: true });
  });

  const same = async (name: string) => {
    const run = await snapshot(out(name));
    expect(differing(reference, run), name).toEqual([]);
    expect(run.entries, name).toEqual(reference.entries);
  };

  it('the CLI at -j 1, at -j 2 on one core, and with one original alone', async () => {
    // The one-core run is a process of its own (taskset): it runs while the others run here, one after another.
    const oneCore = runCli(['render', input, '--out', out('one-core'), '-j', '2', ...formats], {
      wrapper: ['taskset', '-c', '0'],
    });
    const one = await runCli(['render', input, '--out', out('j1'), '-j', '1', ...formats]);
    expect(one.code, one.stderr).toBe(0);
    for (const original of originals) {
      const alone = await runCli(['render', original, '--out', out('cli-alone'), ...formats]);
      expect(alone.code, alone.stderr).toBe(0);
    }
    const core = await oneCore;
    expect(core.code, core.stderr).toBe(0);
    await same('j1');
    await same('one-core');
    await same('cli-alone');
  }, 120_000);

  it('the library: each original alone, all in one batch, and in two shards, one of a single original', async () => {
    const options = { formats: [...FORMATS] };
    for (const original of originals) await renderOriginal(original, { ...options, outDir: out('alone') });
    await renderOriginals([input], { ...options, outDir: out('batch'), concurrency: 2 });
    // Shard 0 of 2 holds meadow.jpg alone.
    expect(['meadow', 'alpha', 'lily', 'poster', 'clip'].map((stem) => shardOf(stem, 2))).toEqual([0, 1, 1, 1, 1]);
    for (const index of [0, 1])
      await renderOriginals([input], { ...options, outDir: out('shards'), shard: { index, count: 2 } });
    await same('alone');
    await same('batch');
    await same('shards');
  }, 120_000);

  it('through the queue: a worker taking two jobs at once', async () => {
    const queue = ['--queue', redis.url, '--queue-name', 'same-bytes'];
    const worker = startCli(['worker', ...queue, '--concurrency', '2'], { env: WITHOUT_QUEUE_ENV });
    try {
      const queued = await runCli(['render', input, '--out', out('queue'), ...queue, ...formats], {
        env: WITHOUT_QUEUE_ENV,
      });
      expect(queued.code, queued.stderr).toBe(0);
    } finally {
      worker.child.kill('SIGTERM');
      await worker.done;
    }
    await same('queue');
  }, 120_000);
});
