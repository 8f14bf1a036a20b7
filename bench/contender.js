/**
 * One contender over one folder of originals, in its own process so that its CPU time and
 * peak RSS are its own. Prints one JSON line: { images, files, seconds, cpuSeconds, peakRssMb }.
 *   node bench/contender.js <contender> <inputDir> <outDir> <concurrency> [force|incremental]
 * Contenders: content-api; content-api-before (the library built at the baseline commit, from
 * BENCH_BASELINE_DIR); naive; eleventy-img. For content-api, outDir may be s3://bucket/prefix/.
 */
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import pLimit from 'p-limit';
import sharp from 'sharp';
import { RENDITION_BOXES, RENDITION_KEYS, renditionSizes } from '../dist/api/model.js';
import { AVIF_THREADS, renderOriginals } from '../dist/index.js';

const [name, inputDir, outDir, concurrencyText, force = 'force'] = process.argv.slice(2);
const concurrency = Number(concurrencyText);
const QUALITY = { jpeg: { quality: 80 }, webp: { quality: 80 }, png: {} };
const files = readdirSync(inputDir)
  .filter((f) => !f.startsWith('.') && f !== 'SOURCES.txt')
  .sort()
  .map((f) => path.join(inputDir, f));
if (!outDir.startsWith('s3://')) mkdirSync(outDir, { recursive: true });

const contenders = {
  async 'content-api'() {
    // The pipeline at the others' encoder settings: PNG as sharp writes it by default, unfiltered.
    // (render's default, adaptive filtering, halves a photographic PNG for about 1.8x its encode
    // time: docs/performance.md#quality; on the mixed batch it is a quarter more time in all.)
    const png = { filtering: false };
    // libvips' threads, as render sets them (src/cli/threads.ts).
    sharp.concurrency(AVIF_THREADS);
    const report = await renderOriginals([inputDir], { outDir, concurrency, force: force === 'force', png });
    if (report.failures.length > 0) throw new Error(JSON.stringify(report.failures));
    return report.results.length * 5;
  },

  /** The same, as the library was at the baseline commit (bench/baseline.js). */
  async 'content-api-before'() {
    const before = await import(path.join(process.env.BENCH_BASELINE_DIR, 'dist', 'index.js'));
    // libvips' threads as render sets them now (a baseline that sets its own per batch overrides it).
    sharp.concurrency(AVIF_THREADS);
    const report = await before.renderOriginals([inputDir], { outDir, concurrency, force: force === 'force' });
    if (report.failures.length > 0) throw new Error(JSON.stringify(report.failures));
    return report.results.length * 5;
  },

  /** Five independent sharp pipelines per original, originals at the same concurrency. */
  async naive() {
    const limit = pLimit(concurrency);
    let written = 0;
    await Promise.all(
      files.map((file) =>
        limit(async () => {
          const format = (await sharp(file).metadata()).format;
          const { name: base } = path.parse(file);
          await Promise.all(
            RENDITION_KEYS.map((key) => {
              const box = RENDITION_BOXES[key];
              written++;
              return sharp(file)
                .rotate()
                .resize({ width: box, height: box, fit: 'inside', withoutEnlargement: true })
                .toFormat(format, QUALITY[format])
                .toFile(path.join(outDir, `${base}.max-${box}x${box}.${format}`));
            }),
          );
        }),
      ),
    );
    return written;
  },

  /** @11ty/eleventy-img v6 (bundles sharp 0.33): widths chosen so each output fits its box. */
  async 'eleventy-img'() {
    const Image = createRequire(import.meta.url)('@11ty/eleventy-img');
    Image.concurrency = concurrency;
    let written = 0;
    await Promise.all(
      files.map(async (file) => {
        const meta = await sharp(file).metadata();
        const sizes = renditionSizes({ width: meta.width, height: meta.height });
        const widths = [...new Set(RENDITION_KEYS.map((key) => sizes[key].width))];
        const stats = await Image(file, {
          widths,
          formats: ['auto'],
          outputDir: outDir,
          useCache: false,
          sharpJpegOptions: QUALITY.jpeg,
          sharpWebpOptions: QUALITY.webp,
        });
        written += Object.values(stats).flat().length;
      }),
    );
    return written;
  },
};

const started = performance.now();
const written = await contenders[name]();
const seconds = (performance.now() - started) / 1000;
const usage = process.resourceUsage();
// ru_maxrss survives exec (it would report the parent's peak); VmHWM is this process's own.
const peakRssKb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? usage.maxRSS);
console.log(
  JSON.stringify({
    images: files.length,
    files: written,
    seconds,
    cpuSeconds: (usage.userCPUTime + usage.systemCPUTime) / 1e6,
    peakRssMb: peakRssKb / 1024,
  }),
);
