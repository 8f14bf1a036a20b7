/**
 * libvips threads shared by the originals rendered at once (src/renditions/threads.ts): a lone
 * original gets every core, a batch of two at once shares them, and the process's own setting
 * comes back afterwards.
 */
import { availableParallelism } from 'node:os';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { renderOriginals } from '../../src/renditions/render.js';
import { shareCores, threadsPerPipeline } from '../../src/renditions/threads.js';
import { photo, writeImage } from '../fixtures/images.js';
import { tempDir } from '../fixtures/tmp.js';

describe('threads per pipeline', () => {
  const initial = sharp.concurrency();
  const cores = availableParallelism();
  afterEach(() => {
    sharp.concurrency(initial);
  });

  it('shares the cores among the originals rendered at once, one thread at least', () => {
    expect(threadsPerPipeline(1, 2)).toBe(2);
    expect(threadsPerPipeline(2, 2)).toBe(1);
    expect(threadsPerPipeline(3, 8)).toBe(2);
    expect(threadsPerPipeline(5, 2)).toBe(1);
    expect(threadsPerPipeline(0, 4)).toBe(4);
  });

  it("sets sharp's concurrency as batches start and end, and puts the process's own back", () => {
    sharp.concurrency(1);
    const first = shareCores(1);
    expect(sharp.concurrency()).toBe(cores);
    const second = shareCores(1);
    expect(sharp.concurrency()).toBe(threadsPerPipeline(2, cores));
    second();
    second(); // a second call gives nothing back
    expect(sharp.concurrency()).toBe(cores);
    first();
    expect(sharp.concurrency()).toBe(1);
  });

  it('a lone original renders with every core; two at once share them; the setting comes back', async () => {
    sharp.concurrency(1);
    const dir = await tempDir();
    const originals = await Promise.all(
      ['a', 'b', 'c'].map((name) => writeImage(dir, `${name}.jpg`, photo(400, 300).jpeg())),
    );
    const seen = async (inputs: string[]) => {
      let threads = 0;
      await renderOriginals(inputs, {
        outDir: await tempDir(),
        concurrency: 2,
        onProgress: (event) => {
          if (event.status === 'started') threads = sharp.concurrency();
        },
      });
      return threads;
    };
    expect(await seen(originals.slice(0, 1))).toBe(cores);
    expect(sharp.concurrency()).toBe(1);
    expect(await seen(originals)).toBe(threadsPerPipeline(2, cores));
    expect(sharp.concurrency()).toBe(1);
  });
});
