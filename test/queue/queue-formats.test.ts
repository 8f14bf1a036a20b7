/**
 * Formats through the queue (issue #21): alternates travel with the job and come back in `queue
 * results`, and a batch's JPEGs are published first, its AVIFs after, by enqueueing it twice
 * (docs/guides/formats.md): the second batch encodes only the formats the first did not write.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, startCli } from '../cli/run-cli.js';
import { photo, writeImage } from '../fixtures/images.js';
import { redisForFile, WITHOUT_QUEUE_ENV } from '../fixtures/redis.js';
import { tempDir } from '../fixtures/tmp.js';
import { versioned } from '../fixtures/versions.js';

const redis = redisForFile();

const clean = WITHOUT_QUEUE_ENV;

interface Result {
  source: string;
  status: string;
  files: string[];
  image: { sizes: Record<string, { url: string; width: number }>; srcset: string };
  alternates: Array<{ format: string; files: string[]; bytes: number; srcset: string }>;
}

/** The srcset of `files` (xs..xl, in the output folder `out`), each URL with its file's version, at `widths`. */
const versionedSrcset = async (out: string, files: string[], widths: number[]) =>
  (
    await Promise.all(
      files.map(async (file, i) => `${await versioned(`/media/${path.relative(out, file)}`, file)} ${widths[i]}w`),
    )
  ).join(', ');

describe('formats through the queue', () => {
  it('JPEGs first, then AVIF and WebP: the second batch leaves the JPEGs as they are', async () => {
    const dir = await tempDir();
    for (const name of ['a', 'b', 'c']) await writeImage(dir, `in/${name}.jpg`, photo(900, 600).jpeg());
    const input = path.join(dir, 'in');
    const out = path.join(dir, 'media');
    const queue = ['--queue', redis.url, '--queue-name', 'formats'];
    const first = await runCli(['render', input, '--out', out, ...queue, '--detach'], { env: clean });
    expect(first.code, first.stderr).toBe(0);
    const second = await runCli(['render', input, '--out', out, ...queue, '--formats', 'keep,avif,webp', '--detach'], {
      env: clean,
    });
    expect(second.code, second.stderr).toBe(0);
    // One worker, taking the jobs in the order they were enqueued.
    const worker = startCli(['worker', ...queue, '--concurrency', '1'], { env: clean });
    try {
      const jpegs = await runCli(['queue', 'results', first.stdout.trim(), ...queue, '--json'], { env: clean });
      expect(jpegs.code, jpegs.stderr).toBe(0);
      const firstResults = JSON.parse(jpegs.stdout).results as Result[];
      expect(firstResults.map((r) => [r.status, r.alternates.length])).toEqual([
        ['rendered', 0],
        ['rendered', 0],
        ['rendered', 0],
      ]);
      const times = async (files: string[]) => Promise.all(files.map(async (file) => (await stat(file)).mtimeMs));
      const before = await Promise.all(firstResults.map((r) => times(r.files)));

      const all = await runCli(['queue', 'results', second.stdout.trim(), ...queue, '--json'], { env: clean });
      expect(all.code, all.stderr).toBe(0);
      const results = JSON.parse(all.stdout).results as Result[];
      expect(results.map((r) => r.alternates.map((a) => a.format))).toEqual([
        ['avif', 'webp'],
        ['avif', 'webp'],
        ['avif', 'webp'],
      ]);
      for (const [index, result] of results.entries()) {
        // The JPEGs were up to date: not written again, and their URLs are the first batch's.
        expect(await times(result.files)).toEqual(before[index]);
        expect(result.image).toEqual(firstResults[index]!.image);
        // Each URL, the alternates' too, carries its file's version, as a local run's.
        const widths = Object.values(result.image.sizes).map((size) => size.width);
        expect(result.image.srcset).toBe(await versionedSrcset(out, result.files, widths));
        for (const alternate of result.alternates)
          expect(alternate.srcset).toBe(await versionedSrcset(out, alternate.files, widths));
        for (const alternate of result.alternates) {
          expect(alternate.bytes).toBeGreaterThan(0);
          for (const file of alternate.files) expect((await stat(file)).size).toBeGreaterThan(0);
        }
      }
    } finally {
      worker.child.kill('SIGTERM');
      await worker.done;
    }
  }, 120_000);
});
