/**
 * libvips threads shared by the originals under way (src/renditions/threads.ts): a lone original
 * gets every core, two at once share them, and the process's own setting comes back afterwards.
 */
import { availableParallelism } from 'node:os';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { startPipeline, threadsPerPipeline } from '../../src/renditions/threads.js';

describe('threads per pipeline', () => {
  const initial = sharp.concurrency();
  afterEach(() => {
    sharp.concurrency(initial);
  });

  it('shares the cores among the originals under way, one thread at least', () => {
    expect(threadsPerPipeline(1, 2)).toBe(2);
    expect(threadsPerPipeline(2, 2)).toBe(1);
    expect(threadsPerPipeline(3, 8)).toBe(2);
    expect(threadsPerPipeline(5, 2)).toBe(1);
    expect(threadsPerPipeline(0, 4)).toBe(4);
  });

  it("sets sharp's concurrency as originals start and end, and puts the process's own back", () => {
    sharp.concurrency(1);
    const cores = availableParallelism();
    const first = startPipeline();
    expect(sharp.concurrency()).toBe(cores);
    const second = startPipeline();
    expect(sharp.concurrency()).toBe(Math.max(1, Math.floor(cores / 2)));
    second();
    second(); // a second call counts nothing
    expect(sharp.concurrency()).toBe(cores);
    first();
    expect(sharp.concurrency()).toBe(1);
  });
});
