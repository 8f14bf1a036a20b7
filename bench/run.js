/**
 * `npm run bench`: the render benchmark (bench/render.js), the storage benchmark
 * (bench/storage.js: streamed originals before and after, a bucket vs a folder), the check and
 * serve benchmarks, the queue benchmark (bench/queue.js: a queue's overhead per job, throughput
 * with worker processes, recovery after a worker is killed), the encoder settings
 * (bench/encoders.js: bytes, time and SSIMULACRA2 of each), the metric's speed (bench/metric.js),
 * `--quality auto` against fixed, uniform and eleventy-img's quality (bench/auto-quality.js: bytes, time,
 * SSIMULACRA2 and Butteraugli of each, the CLI's time with and without it), `--formats` (bench/formats.js:
 * AVIF effort, one decode for three formats, bytes per format beside eleventy-img), figures printed side by
 * side; the archive as it grows (bench/archive.js: 1,000 to 100,000 originals). `npm run bench -- render`,
 * `-- storage`, `-- check`, `-- serve`, `-- queue`, `-- metric`, `-- encoders`, `-- quality`, `-- formats`,
 * `-- imports` (what importing each entry costs, bench/imports.js), `-- startup` (what a start of the CLI
 * costs, bench/startup.js) or `-- archive` runs one of them.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { setRuntimeFlags } from '../dist/cli/runtime.js';
import { AVIF_THREADS } from '../dist/index.js';
import { archiveBench } from './archive.js';
import { autoQualityBench } from './auto-quality.js';
import { checkBench } from './check.js';
import { checkSiteBench } from './check-site.js';
import { buildCorpus } from './corpus.js';
import { encodersBench } from './encoders.js';
import { formatsBench } from './formats.js';
import { importsBench } from './imports.js';
import { metricBench } from './metric.js';
import { queueBench } from './queue.js';
import { renderBench } from './render.js';
import { serveBench } from './serve.js';
import { startupBench } from './startup.js';
import { storageBench } from './storage.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** `npm run bench` runs everything; `npm run bench -- <part>` one part (see above). */
const only = process.argv[2];
const concurrency = availableParallelism();
const runs = Number(process.env.BENCH_RUNS ?? 2);
const scratch = mkdtempSync(path.join(tmpdir(), 'content-api-bench-'));
// Removed however the run ends: a part that throws leaves no folder behind either.
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));
// The parts that render in this process do it as render does: on libvips' threads as it sets them
// (src/cli/threads.ts), with V8's flags as it sets them (src/cli/runtime.ts), before any WebAssembly.
sharp.concurrency(AVIF_THREADS);
setRuntimeFlags();
console.log(
  `machine: ${cpus().length} cores (${cpus()[0]?.model.trim()}), node ${process.version}, ` +
    `sharp ${sharp.versions.sharp}, libvips ${sharp.versions.vips}; concurrency ${concurrency}; best of ${runs} run(s)`,
);

if (!only || only === 'render') await renderBench(root, scratch, { concurrency, runs });
if (!only || only === 'storage') await storageBench(root, scratch, { concurrency, runs });
if (!only || only === 'queue') await queueBench(root, scratch, { concurrency, runs });
if (!only || only === 'metric') await metricBench(root, { runs });
if (!only || only === 'imports') await importsBench(root);
if (!only || only === 'startup') await startupBench(root);
if (!only || only === 'encoders') {
  const corpus = await buildCorpus(path.join(root, '.bench'));
  const first = (folder, count) =>
    readdirSync(folder)
      .sort()
      .slice(0, count)
      .map((name) => path.join(folder, name));
  // Two 24 MP camera-like JPEGs, a photograph of a painting as published, a 5120x2880 PNG.
  const originals = [...first(corpus.mp24, 2), ...first(corpus.artwork, 1), path.join(corpus.mixed, 'kleiber.png')];
  await encodersBench(scratch, originals, { concurrency });
}
if (!only || only === 'quality') {
  console.error('bench: quality (--quality auto against fixed, uniform and eleventy-img; 10-15 minutes)');
  await autoQualityBench(root, scratch, await buildCorpus(path.join(root, '.bench')));
}

if (!only || only === 'formats') {
  console.error('bench: formats (AVIF effort, one decode for three formats, bytes per format; about 20 minutes)');
  await formatsBench(scratch, await buildCorpus(path.join(root, '.bench')));
}

if (!only || only === 'check') {
  console.error('bench: check');
  await checkBench(root, scratch);
  console.error('bench: check --all-pages (10,000 pages over loopback, twice)');
  await checkSiteBench(root, scratch);
}
if (!only || only === 'archive') {
  console.error('bench: archive (1,000 to 100,000 small originals; about an hour)');
  await archiveBench(root, scratch, { concurrency, runs });
}
if (!only || only === 'serve') {
  console.error('bench: serve (then a 60 s soak)');
  await serveBench(root, scratch);
}
