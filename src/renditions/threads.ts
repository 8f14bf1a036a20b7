/**
 * libvips threads per pipeline: the machine's cores shared by the originals this process renders
 * at once. sharp's default on glibc Linux is one thread per pipeline (it keeps malloc arenas
 * down), which leaves a core idle when fewer originals than cores are rendered at once: a lone
 * original's 4800 px AVIF, the slowest step, then runs on one core (3.6 s at effort 1, 2.2 s on
 * two threads).
 *
 * Each batch takes as many slots as originals it renders at once (its concurrency, or fewer
 * originals) for as long as it runs, and `sharp.concurrency` is the cores divided by every
 * batch's slots in the process (the queue worker runs several). A batch's slots do not shrink
 * as it ends: threads that change while pipelines run overcommit the cores (measured: 15-25% more
 * CPU on a 15-original batch when each original's start and end set them). What the process had
 * before is put back once no batch runs.
 */
import { availableParallelism } from 'node:os';
import sharp from 'sharp';

let slots = 0;
let before: number | undefined;

/** Threads for each of `originals` pipelines at once on `cores` cores: at least 1. */
export function threadsPerPipeline(originals: number, cores = availableParallelism()): number {
  return Math.max(1, Math.floor(cores / Math.max(1, originals)));
}

/**
 * Takes `count` slots (originals rendered at once) and shares the cores again; the function
 * returned gives them back (call it once, when the batch's pipelines have finished).
 */
export function shareCores(count: number): () => void {
  if (slots === 0) before = sharp.concurrency();
  slots += count;
  sharp.concurrency(threadsPerPipeline(slots));
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    slots -= count;
    sharp.concurrency(slots === 0 ? before! : threadsPerPipeline(slots));
  };
}
