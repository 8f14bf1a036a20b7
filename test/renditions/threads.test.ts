/**
 * libvips' threads (`sharp.concurrency`) are the application's: the CLI sets them once, to
 * AVIF_THREADS (src/cli/threads.ts); the library renders on whatever the host set, never changes
 * them, and names them in an AVIF's settings key when they are not AVIF_THREADS, since the AV1
 * encoder's bytes follow them (src/renditions/settings-key.ts).
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { setRenderThreads } from '../../src/cli/threads.js';
import { renderOriginal, renderOriginals } from '../../src/renditions/render.js';
import { AVIF_THREADS } from '../../src/renditions/settings.js';
import { photo, writeImage } from '../fixtures/images.js';
import { readEntries } from '../fixtures/manifest.js';
import { tempDir } from '../fixtures/tmp.js';

describe('libvips threads', () => {
  const initial = sharp.concurrency();
  afterEach(() => {
    sharp.concurrency(initial);
  });

  it('the CLI sets one thread per pipeline, whatever the process had', () => {
    expect(AVIF_THREADS).toBe(1);
    for (const before of [1, 3, 16]) {
      sharp.concurrency(before);
      setRenderThreads();
      expect(sharp.concurrency()).toBe(AVIF_THREADS);
    }
  });

  it('a lone original and two at once render on the threads the host set, and leave them as they were', async () => {
    sharp.concurrency(3);
    const dir = await tempDir();
    const originals = await Promise.all(
      ['a', 'b', 'c'].map((name) => writeImage(dir, `${name}.jpg`, photo(400, 300).jpeg())),
    );
    const seen = async (inputs: string[]) => {
      const threads = new Set<number>();
      await renderOriginals(inputs, {
        outDir: await tempDir(),
        concurrency: 2,
        formats: ['keep', 'avif'],
        onProgress: () => threads.add(sharp.concurrency()),
      });
      return [...threads];
    };
    expect(await seen(originals.slice(0, 1))).toEqual([3]);
    expect(sharp.concurrency()).toBe(3);
    expect(await seen(originals)).toEqual([3]);
    expect(sharp.concurrency()).toBe(3);
  });

  it("an AVIF's key names other threads than one: at one thread its files are redone, the JPEGs are not", async () => {
    const dir = await tempDir();
    const original = await writeImage(dir, 'in/photo.jpg', photo(640, 400).jpeg());
    const outDir = path.join(dir, 'media');
    const options = { outDir, formats: ['keep' as const, 'avif' as const] };
    const settings = async () => {
      const entries = await readEntries(outDir);
      return [entries['photo.jpg']!.settings, entries['photo.avif']!.settings];
    };
    const files = ['photo.max-300x300.jpg', 'photo.max-300x300.avif'].map((name) => path.join(outDir, name));
    const read = () => Promise.all(files.map((file) => readFile(file)));
    const jpegTime = async () => (await stat(files[0]!)).mtimeMs;

    sharp.concurrency(2);
    await renderOriginal(original, options);
    expect(await settings()).toEqual(['v1 jpeg q80 max', 'v3 avif q50 max avif.threads=2']);
    const [jpeg, avif] = await read();
    const written = await jpegTime();

    sharp.concurrency(1);
    expect((await renderOriginal(original, options)).status).toBe('rendered');
    expect(await settings()).toEqual(['v1 jpeg q80 max', 'v3 avif q50 max']);
    const [jpegNow, avifNow] = await read();
    // Why the key names them: two threads cut the 300x188 rendition into two tiles, one does not.
    expect(avifNow!.equals(avif!)).toBe(false);
    expect(jpegNow!.equals(jpeg!)).toBe(true);
    expect(await jpegTime()).toBe(written);
    // And at one thread again, all is up to date.
    expect((await renderOriginal(original, options)).status).toBe('skipped');
  });
});
