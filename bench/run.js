/**
 * `npm run bench`: the render benchmark (bench/render.js), the storage benchmark
 * (bench/storage.js: streamed originals before and after, a bucket vs a folder), the check and
 * serve benchmarks, the queue benchmark (bench/queue.js: a queue's overhead per job, throughput
 * with worker processes, recovery after a worker is killed), figures printed side by side.
 * `npm run bench -- render`, `-- storage`, `-- check`, `-- serve` or `-- queue` runs one of them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { checkBench } from './check.js';
import { queueBench } from './queue.js';
import { renderBench } from './render.js';
import { serveBench } from './serve.js';
import { storageBench } from './storage.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** `npm run bench` runs everything; `npm run bench -- render`, `-- storage`, `-- check` or `-- serve` one part. */
const only = process.argv[2];
const concurrency = availableParallelism();
const runs = Number(process.env.BENCH_RUNS ?? 2);
const scratch = mkdtempSync(path.join(tmpdir(), 'content-api-bench-'));
console.log(
  `machine: ${cpus().length} cores (${cpus()[0]?.model.trim()}), node ${process.version}, ` +
    `sharp ${sharp.versions.sharp}, libvips ${sharp.versions.vips}; concurrency ${concurrency}; best of ${runs} run(s)`,
);

if (!only || only === 'render') await renderBench(root, scratch, { concurrency, runs });
if (!only || only === 'storage') await storageBench(root, scratch, { concurrency, runs });
if (!only || only === 'queue') await queueBench(root, scratch, { concurrency, runs });

if (!only || only === 'check') {
  console.error('bench: check');
  await checkBench(root, scratch);
}
if (!only || only === 'serve') {
  console.error('bench: serve (then a 60 s soak)');
  await serveBench();
}
rmSync(scratch, { recursive: true, force: true });
