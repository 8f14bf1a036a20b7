/**
 * `npm run bench -- formats`: what `--formats` costs and saves.
 *
 * 1. AVIF effort: a 24 MP original's five AVIF renditions at each effort and chroma, wall time
 *    (median of 3, `-j 1`, in this process) and bytes, beside effort 4 (sharp's default), and the
 *    md rendition's SSIMULACRA2 against the same pixels before encoding; then every 24 MP original
 *    at the default effort and effort 0, beside effort 4's bytes.
 * 2. One decode: on decode-heavy originals (PNG panoramas), the CPU time of one render with
 *    `--formats jpeg,webp,avif` against three single-format renders, and where the time goes per
 *    format (decode, resize, encode: measured with sharp directly, the pipeline's steps).
 * 3. Bytes per format on the corpus, beside eleventy-img's `webp,jpeg` output at its defaults.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { RENDITION_KEYS } from '../dist/api/model.js';
import { renderOriginal, renderOriginals, resolveSettings } from '../dist/index.js';
import { ssimulacra2 } from '../dist/quality/ssimulacra2.js';
import { renditionSizes } from '../dist/renditions/rules.js';

const fmt = (n, digits = 2) => n.toFixed(digits);
const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];
const log = (message) => console.error(`bench: formats: ${message}`);
const WIDTHS = [300, 600, 1200, 2400, 4800];

/** Bytes of a result's files in its primary format and each alternate, each file once. */
const sumBytes = (outDir, files) =>
  [...new Set(RENDITION_KEYS.map((key) => files[key].path))].reduce(
    (sum, file) => sum + statSync(path.join(outDir, file)).size,
    0,
  );

/** CPU seconds (every thread of this process) and wall seconds of `work`. */
async function timed(work) {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const value = await work();
  const used = process.cpuUsage(cpu);
  return { value, wall: (performance.now() - started) / 1000, cpu: (used.user + used.system) / 1e6 };
}

async function avifEfforts(scratch, original) {
  const contenders = [
    ["effort 4, 4:4:4 (sharp's default)", { effort: 4, chroma: '4:4:4' }],
    ['effort 3, 4:4:4', { effort: 3, chroma: '4:4:4' }],
    ['effort 2, 4:4:4', { effort: 2, chroma: '4:4:4' }],
    ['effort 1, 4:4:4', { effort: 1, chroma: '4:4:4' }],
    ['effort 0, 4:4:4', { effort: 0, chroma: '4:4:4' }],
    ['effort 4, 4:2:0', { effort: 4, chroma: '4:2:0' }],
    ['effort 1, 4:2:0', { effort: 1, chroma: '4:2:0' }],
    ['effort 0, 4:2:0', { effort: 0, chroma: '4:2:0' }],
  ];
  // The md rendition's pixels before encoding, as a lossless render gives them.
  const losslessDir = mkdtempSync(path.join(scratch, 'formats-png-'));
  const lossless = await renderOriginal(original, { outDir: losslessDir, formats: ['png'] });
  const reference = await sharp(path.join(losslessDir, lossless.files.md.path))
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const rows = [];
  for (const [label, avif] of contenders) {
    log(`AVIF ${label}`);
    const walls = [];
    let result;
    let outDir;
    for (let run = 0; run < 3; run++) {
      outDir = mkdtempSync(path.join(scratch, 'formats-avif-'));
      const run = await timed(() =>
        renderOriginal(original, { outDir, formats: ['avif'], avif, concurrency: 1, force: true }),
      );
      walls.push(run.wall);
      result = run.value;
    }
    const md = await sharp(path.join(outDir, result.files.md.path)).raw().toBuffer({ resolveWithObject: true });
    rows.push({ label, wall: median(walls), bytes: sumBytes(outDir, result.files), score: ssimulacra2(reference, md) });
  }
  const base = rows[0];
  console.log(`\n### AVIF effort: ${path.basename(original)}, five renditions, quality 50, median of 3\n`);
  console.log('| settings | seconds | vs effort 4 | MB | vs effort 4 | md SSIMULACRA2 |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const row of rows) {
    console.log(
      `| ${row.label} | ${fmt(row.wall)} | ${fmt(row.wall / base.wall)}x | ${fmt(row.bytes / 1e6, 3)} | ` +
        `${fmt(row.bytes / base.bytes)}x | ${fmt(row.score)} |`,
    );
  }
}

/**
 * The goal over every 24 MP original of the corpus, not one: the default effort's wall time (median of 3,
 * `-j 1`, alternating with effort 0's runs) and its bytes against effort 4's (one run: bytes do not vary).
 */
async function avifPerOriginal(scratch, folder) {
  const originals = readdirSync(folder)
    .sort()
    .map((file) => path.join(folder, file));
  const fallback = resolveSettings({}).avif.effort;
  const efforts = [fallback, ...[0, 1].filter((effort) => effort !== fallback)];
  const render = async (original, effort) => {
    const outDir = mkdtempSync(path.join(scratch, 'formats-avif-'));
    const run = await timed(() =>
      renderOriginal(original, { outDir, formats: ['avif'], avif: { effort }, concurrency: 1, force: true }),
    );
    return { wall: run.wall, bytes: sumBytes(outDir, run.value.files) };
  };
  console.log(`\n### AVIF on every 24 MP original: five renditions, quality 50, 4:4:4, median of 3\n`);
  const heads = efforts.map((effort) => `effort ${effort}${effort === fallback ? ' (default)' : ''} s | vs effort 4`);
  console.log(`| original | ${heads.join(' | ')} |`);
  console.log(`|---|${efforts.map(() => '---:|---:').join('|')}|`);
  const totals = { 4: 0, ...Object.fromEntries(efforts.map((effort) => [effort, 0])) };
  for (const original of originals) {
    log(`AVIF per original: ${path.basename(original)}`);
    const base = await render(original, 4);
    totals[4] += base.bytes;
    const runs = Object.fromEntries(efforts.map((effort) => [effort, []]));
    for (let run = 0; run < 3; run++) for (const effort of efforts) runs[effort].push(await render(original, effort));
    const cells = efforts.map((effort) => {
      totals[effort] += runs[effort][0].bytes;
      return `${fmt(median(runs[effort].map((r) => r.wall)))} | ${fmt(runs[effort][0].bytes / base.bytes, 3)}x`;
    });
    console.log(`| ${path.basename(original)} | ${cells.join(' | ')} |`);
  }
  console.log(`| all, bytes | ${efforts.map((effort) => ` | ${fmt(totals[effort] / totals[4], 3)}x`).join(' | ')} |`);
}

/** sharp's options for each format at the render defaults, as the pipeline passes them. */
const defaults = resolveSettings({});
const ENCODER_OPTIONS = {
  jpeg: { quality: defaults.quality.jpeg, chromaSubsampling: defaults.jpeg.chroma },
  webp: { quality: defaults.quality.webp, effort: defaults.webp.effort },
  avif: { quality: defaults.quality.avif, effort: defaults.avif.effort, chromaSubsampling: defaults.avif.chroma },
};

/** Decode, resize and encode seconds of `file` in each format, the pipeline's steps done by hand. */
async function steps(file, formats) {
  const meta = await sharp(file).metadata();
  const sizes = renditionSizes({ width: meta.width, height: meta.height });
  const order = [...RENDITION_KEYS].reverse();
  const decode = await timed(() =>
    sharp(file).resize(sizes.xl.width, sizes.xl.height, { fit: 'fill' }).raw().toBuffer({ resolveWithObject: true }),
  );
  const chain = [decode.value];
  const resize = await timed(async () => {
    for (const key of order.slice(1)) {
      const last = chain.at(-1);
      chain.push(
        await sharp(last.data, { raw: last.info })
          .resize(sizes[key].width, sizes[key].height, { fit: 'fill' })
          .raw()
          .toBuffer({ resolveWithObject: true }),
      );
    }
  });
  const encode = {};
  for (const format of formats) {
    const options = ENCODER_OPTIONS[format];
    encode[format] = await timed(async () => {
      for (const pixels of chain) await sharp(pixels.data, { raw: pixels.info }).toFormat(format, options).toBuffer();
    });
  }
  return { decode: decode.cpu, resize: resize.cpu, encode };
}

async function oneDecode(scratch, panoramas, avif) {
  log('one decode: three single-format renders against one --formats jpeg,webp,avif');
  const formats = ['jpeg', 'webp', 'avif'];
  const single = { cpu: 0, wall: 0 };
  for (const format of formats) {
    const run = await timed(() =>
      renderOriginals(panoramas, {
        outDir: mkdtempSync(path.join(scratch, `formats-${format}-`)),
        formats: [format],
        avif,
        force: true,
      }),
    );
    single.cpu += run.cpu;
    single.wall += run.wall;
  }
  const together = await timed(() =>
    renderOriginals(panoramas, {
      outDir: mkdtempSync(path.join(scratch, 'formats-all-')),
      formats,
      avif,
      force: true,
    }),
  );
  console.log(`\n### One decode: ${panoramas.length} PNG panoramas, jpeg + webp + avif\n`);
  console.log('| run | CPU seconds | wall seconds |');
  console.log('|---|---:|---:|');
  console.log(`| three renders, one format each | ${fmt(single.cpu)} | ${fmt(single.wall)} |`);
  console.log(
    `| one render, --formats jpeg,webp,avif | ${fmt(together.cpu)} (${fmt(together.cpu / single.cpu)}x) | ` +
      `${fmt(together.wall)} (${fmt(together.wall / single.wall)}x) |`,
  );
  console.log('\nWhere the CPU time goes, per panorama (sharp directly, the same steps):\n');
  console.log('| original | decode | resize (4 sizes) | encode jpeg | encode webp | encode avif |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const file of panoramas) {
    const { decode, resize, encode } = await steps(file, formats);
    console.log(
      `| ${path.basename(file)} | ${fmt(decode)} | ${fmt(resize)} | ` +
        `${formats.map((format) => fmt(encode[format].cpu)).join(' | ')} |`,
    );
  }
}

/** PNG panoramas made from the corpus's photographs: decode-heavy (zlib, 30-50 MP). */
async function panoramasOf(corpus) {
  const folder = path.join(path.dirname(corpus.mixed), 'panoramas');
  mkdirSync(folder, { recursive: true });
  const sources = readdirSync(corpus.mp24).sort().slice(0, 2);
  const made = [];
  for (const [index, name] of sources.entries()) {
    const file = path.join(folder, `panorama-${index + 1}.png`);
    if (!existsSync(file)) {
      const half = await sharp(path.join(corpus.mp24, name)).resize(6000, 4000).raw().toBuffer();
      // 12000x4000: the photograph and its mirror image side by side.
      const mirrored = await sharp(half, { raw: { width: 6000, height: 4000, channels: 3 } })
        .flop()
        .raw()
        .toBuffer();
      await sharp({ create: { width: 12000, height: 4000, channels: 3, background: '#000' } })
        .composite([
          { input: half, raw: { width: 6000, height: 4000, channels: 3 }, left: 0, top: 0 },
          { input: mirrored, raw: { width: 6000, height: 4000, channels: 3 }, left: 6000, top: 0 },
        ])
        .png()
        .toFile(file);
    }
    made.push(file);
  }
  return made;
}

/**
 * eleventy-img 6's `webp,jpeg` at its defaults, our five widths, in a process of its own: bytes per
 * format, as its own results give them (it names files by content, so equal originals share files).
 */
async function eleventy(scratch, files) {
  const outDir = mkdtempSync(path.join(scratch, 'formats-eleventy-'));
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), 'eleventy', outDir, ...files], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => (output += chunk));
  const code = await new Promise((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`eleventy-img exited with ${code}`);
  return JSON.parse(output);
}

async function eleventyChild(outDir, files) {
  const { createRequire } = await import('node:module');
  const require = createRequire(import.meta.url);
  const Image = require('@11ty/eleventy-img');
  const bytes = { webp: 0, jpeg: 0 };
  for (const file of files) {
    const { width, height } = await sharp(file).metadata();
    const widths = [
      ...new Set(WIDTHS.map((box) => Math.min(width, Math.round((width * box) / Math.max(width, height))))),
    ];
    const stats = await Image(file, { widths, formats: ['webp', 'jpeg'], outputDir: outDir, useCache: false });
    for (const format of ['webp', 'jpeg']) for (const entry of stats[format]) bytes[format] += entry.size;
  }
  process.stdout.write(JSON.stringify(bytes));
}

async function bytesPerFormat(scratch, corpus, avif) {
  console.log('\n### Bytes per format, five renditions of every original (MB)\n');
  console.log('| corpus | ours jpeg | ours webp | ours avif | eleventy-img jpeg | eleventy-img webp |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const name of ['mixed', 'artwork']) {
    // One original per name: the mixed corpus has the same picture as .jpg, .png and .webp, whose
    // outputs in three formats would be the same files (render refuses them all).
    const stems = new Set();
    const files = readdirSync(corpus[name])
      .sort()
      .filter((file) => !stems.has(path.parse(file).name) && stems.add(path.parse(file).name))
      .map((file) => path.join(corpus[name], file));
    log(`bytes: ${name} (${files.length} originals)`);
    const outDir = mkdtempSync(path.join(scratch, `formats-bytes-${name}-`));
    const report = await renderOriginals(files, { outDir, formats: ['jpeg', 'webp', 'avif'], avif, force: true });
    if (report.failures.length > 0) throw new Error(report.failures.map((f) => f.error).join('\n'));
    const ours = { jpeg: 0, webp: 0, avif: 0 };
    for (const result of report.results) {
      ours.jpeg += result.bytes;
      for (const alternate of result.alternates) ours[alternate.format] += alternate.bytes;
    }
    const theirs = await eleventy(scratch, files);
    const mb = (n) => fmt(n / 1e6);
    console.log(
      `| ${name} | ${mb(ours.jpeg)} | ${mb(ours.webp)} | ${mb(ours.avif)} | ${mb(theirs.jpeg)} | ${mb(theirs.webp)} |`,
    );
  }
}

export async function formatsBench(scratch, corpus) {
  const avif = {}; // the defaults
  const original = path.join(corpus.mp24, readdirSync(corpus.mp24).sort()[0]);
  // The effort tables take most of the part's 20 minutes: BENCH_AVIF_EFFORTS=0 leaves them out.
  if (process.env.BENCH_AVIF_EFFORTS !== '0') {
    await avifEfforts(scratch, original);
    await avifPerOriginal(scratch, corpus.mp24);
  }
  await oneDecode(scratch, await panoramasOf(corpus), avif);
  await bytesPerFormat(scratch, corpus, avif);
}

if (process.argv[2] === 'eleventy') await eleventyChild(process.argv[3], process.argv.slice(4));
