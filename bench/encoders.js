/**
 * `npm run bench -- encoders`: what each encoder setting costs and saves, on originals from the
 * corpus: the five renditions' total bytes, the render's wall time (in this process, every core),
 * and each rendition's SSIMULACRA2 score against the same pixels before encoding (a lossless PNG
 * render of the same original), minimum and median. The defaults of the encoder settings are
 * chosen from these figures (docs/performance.md).
 */
import { mkdtempSync, statSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { RENDITION_KEYS } from '../dist/api/model.js';
import { renderOriginals } from '../dist/index.js';
import { ssimulacra2 } from '../dist/quality/ssimulacra2.js';

const fmt = (n, digits = 2) => n.toFixed(digits);
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** Contenders by format: a label and the settings it renders with (beside `format`). */
const CONTENDERS = {
  jpeg: [
    ['defaults (q80, 4:2:0)', {}],
    ['--jpeg-mozjpeg', { jpeg: { mozjpeg: true } }],
    ['--jpeg-mozjpeg --jpeg-quality 75', { jpeg: { mozjpeg: true }, quality: { jpeg: 75 } }],
    ['--jpeg-quality 75', { quality: { jpeg: 75 } }],
    ['--jpeg-chroma 4:4:4', { jpeg: { chroma: '4:4:4' } }],
  ],
  webp: [
    ['defaults (q80, effort 4)', {}],
    ['--webp-effort 2', { webp: { effort: 2 } }],
    ['--webp-effort 6', { webp: { effort: 6 } }],
  ],
  avif: [
    ['defaults (q50, effort 1, 4:4:4)', {}],
    ['--avif-effort 2', { avif: { effort: 2 } }],
    ['--avif-effort 4', { avif: { effort: 4 } }],
    ['--avif-chroma 4:2:0', { avif: { chroma: '4:2:0' } }],
  ],
  png: [
    ['--no-png-filtering (sharp defaults)', { png: { filtering: false } }],
    ['defaults (filtering, level 6)', {}],
    ['--png-compression 9', { png: { compression: 9 } }],
    ['--png-palette lossy', { png: { palette: 'lossy' } }],
  ],
};

const pixels = (file) => sharp(file).toColourspace('srgb').removeAlpha().raw().toBuffer({ resolveWithObject: true });

/** Renders `originals` in `format` with `settings` into a new folder: seconds, results and the folder. */
async function render(scratch, originals, format, settings, concurrency) {
  const outDir = mkdtempSync(path.join(scratch, `encoders-${format}-`));
  const started = performance.now();
  const report = await renderOriginals(originals, { outDir, formats: [format], concurrency, force: true, ...settings });
  if (report.failures.length > 0) throw new Error(report.failures.map((f) => f.error).join('\n'));
  return { seconds: (performance.now() - started) / 1000, results: report.results, outDir };
}

/** Every rendition's score against the lossless render's pixels of the same original and key. */
async function scores(run, reference) {
  const all = [];
  for (const result of run.results) {
    const lossless = reference.results.find((r) => r.source === result.source);
    for (const key of RENDITION_KEYS) {
      const a = await pixels(path.join(reference.outDir, lossless.files[key].path));
      const b = await pixels(path.join(run.outDir, result.files[key].path));
      all.push(ssimulacra2(a, b));
    }
  }
  return all;
}

const bytesOf = (run) =>
  run.results.reduce(
    (sum, result) =>
      sum + RENDITION_KEYS.reduce((s, key) => s + statSync(path.join(run.outDir, result.files[key].path)).size, 0),
    0,
  );

/** The table of each format's contenders on `originals`. */
export async function encodersBench(scratch, originals, { concurrency, formats = Object.keys(CONTENDERS) }) {
  console.error('bench: encoders: the lossless reference renders');
  const reference = await render(scratch, originals, 'png', { png: { palette: 'off', compression: 1 } }, concurrency);
  console.log(
    `\n## Encoder settings: ${originals.length} originals, ${originals.map((o) => path.basename(o)).join(', ')}\n`,
  );
  console.log(
    'Bytes are the five renditions of every original; seconds the render, every core; SSIMULACRA2 of each ' +
      'rendition against the same pixels before encoding (100: identical; 90: very high quality; 70: medium).\n',
  );
  console.log('| format | settings | MB | vs first | seconds | SSIMULACRA2 min | median |');
  console.log('|---|---|---:|---:|---:|---:|---:|');
  for (const format of formats) {
    let first;
    for (const [label, settings] of CONTENDERS[format]) {
      console.error(`bench: encoders: ${format} ${label}`);
      const run = await render(scratch, originals, format, settings, concurrency);
      const bytes = bytesOf(run);
      first ??= bytes;
      const all = await scores(run, reference);
      console.log(
        `| ${format} | ${label} | ${fmt(bytes / 1e6)} | ${fmt(bytes / first)}x | ${fmt(run.seconds)} | ` +
          `${fmt(Math.min(...all))} | ${fmt(median(all))} |`,
      );
    }
  }
}
