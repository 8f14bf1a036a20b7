/**
 * libvips' threads per pipeline (`sharp.concurrency`), the process's: set once, before the first
 * render, by the commands that encode (`render`, `worker`); the library never sets them.
 *
 * Always AVIF_THREADS (1), whatever `--concurrency` and the cores: libvips gives its thread count to
 * the AV1 encoder (libheif's "threads", aom's `g_threads`), and aom, with the auto-tiles libvips
 * asks for, cuts a picture into up to that many tiles, so other threads write other AVIF bytes.
 * One thread is one tile: the smallest AVIFs, the same on any machine, at any `--concurrency`,
 * alone or in a batch, in shards and through the queue (docs/guides/shards.md). It is also sharp's
 * own default on glibc Linux, for fewer malloc arenas. The cores are used by rendering
 * `--concurrency` originals at once, each with its sizes and formats encoded side by side.
 */
import { sharp } from '../packages/sharp.js';
import { AVIF_THREADS } from '../renditions/settings.js';

/** Sets sharp's threads for this process, once, before it renders. */
export function setRenderThreads(): void {
  sharp.concurrency(AVIF_THREADS);
}
