/**
 * libvips threads per pipeline: the machine's cores shared by the originals being decoded and
 * encoded in this process. sharp's default on glibc Linux is one thread per pipeline (it keeps
 * malloc arenas down), which leaves a core idle whenever fewer originals than cores are under way:
 * a lone original, the last one of a batch. An AVIF or WebP encoder, the slowest steps, then uses
 * every core (a 4800 px AVIF at effort 1: 3.6 s alone on one thread, 2.2 s on two).
 *
 * `sharp.concurrency` is process-wide and read when a pipeline runs, so it is set again each time
 * an original starts or ends; what the process had before is put back once none is under way.
 */
import { availableParallelism } from 'node:os';
import sharp from 'sharp';

let underWay = 0;
let before: number | undefined;

/** Threads for each of `originals` pipelines at once on `cores` cores: at least 1. */
export function threadsPerPipeline(originals: number, cores = availableParallelism()): number {
  return Math.max(1, Math.floor(cores / Math.max(1, originals)));
}

/**
 * Counts one more original under way and shares the cores again; the function returned counts it
 * out (call it once, when its pipelines have finished).
 */
export function startPipeline(): () => void {
  if (underWay === 0) before = sharp.concurrency();
  underWay++;
  sharp.concurrency(threadsPerPipeline(underWay));
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    underWay--;
    sharp.concurrency(underWay === 0 ? before! : threadsPerPipeline(underWay));
  };
}
