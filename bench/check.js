/**
 * The check benchmark: 1,000 generated pages of 20 images each, checked without file
 * verification with a config file in use; the HTML report for them (with their files
 * read, so with thumbnails); then file verification of 5,000 rendition files on disk. Each
 * run is the real CLI in its own process, timed from the outside (start-up included).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { renderOriginals } from '../dist/index.js';

const fmt = (n, digits = 2) => n.toFixed(digits);

function runCheck(root, args, options = {}) {
  const started = performance.now();
  let stdout;
  try {
    stdout = execFileSync(
      process.execPath,
      [path.join(root, 'bin/content-api.js'), 'check', ...args, ...(options.reporter ? [] : ['--reporter', 'json'])],
      { encoding: 'utf8', maxBuffer: 1 << 30, cwd: options.cwd },
    );
  } catch (error) {
    stdout = error.stdout; // exit 1 means findings: still a report
  }
  const seconds = (performance.now() - started) / 1000;
  return { seconds, report: options.reporter ? null : JSON.parse(stdout) };
}

/** Pages like the sample, each with `imagesPerPage` images taken from `images` in turn. */
function makePages(dir, count, imagesPerPage, images, template) {
  mkdirSync(dir, { recursive: true });
  let next = 0;
  for (let i = 0; i < count; i++) {
    const page = structuredClone(template);
    page.id = 1000 + i;
    page.meta.detail_url = `http://localhost:8000/api/v2/pages/${page.id}/`;
    const blocks = [];
    for (let j = 0; j < imagesPerPage; j++) {
      const image = images[next++ % images.length];
      blocks.push({
        type: 'single_image',
        value: { image, caption: `<p>Work ${j}</p>`, layout: 'full-grid' },
        id: `00000000-0000-4000-8000-${String(i * 100 + j).padStart(12, '0')}`,
      });
    }
    page.presentation_stage.body = blocks;
    page.presentation_stage.thumbnail = blocks[0].value.image;
    page.presentation_stage.feature_large_image = null;
    page.list_presentation_stage.thumbnail = blocks[1].value.image;
    writeFileSync(path.join(dir, `page-${page.id}.json`), JSON.stringify(page));
  }
}

export async function checkBench(root, scratch) {
  const template = JSON.parse(readFileSync(path.join(root, 'samples/pages/presentation-every-block.json'), 'utf8'));

  // 1,000 originals rendered into 5,000 rendition files.
  const originals = path.join(scratch, 'check-originals');
  mkdirSync(originals, { recursive: true });
  for (let i = 0; i < 1000; i++) {
    const width = 700 + (i % 50);
    // Noise, so that the renditions are photograph-sized files rather than tiny flat ones.
    await sharp({ create: { width, height: 480, channels: 3, noise: { type: 'gaussian', mean: 128, sigma: 40 } } })
      .jpeg()
      .toFile(path.join(originals, `work-${i}.jpg`));
  }
  const media = path.join(scratch, 'check-media');
  const rendered = await renderOriginals([originals], { outDir: media });
  const images = rendered.results.map((r) => r.image);

  const pages = path.join(scratch, 'check-pages');
  makePages(pages, 1000, 20, images, template);
  const verifyPages = path.join(scratch, 'check-verify-pages');
  makePages(verifyPages, 50, 20, images, template);

  // A config file as a team would keep one: severities changed, paths and pages ignored, flag defaults.
  const config = path.join(scratch, 'content-api.config.json');
  writeFileSync(
    config,
    JSON.stringify(
      {
        rules: { 'image-srcset-present': 'warn', 'unknown-key': 'off', 'not-shown-type': 'off' },
        ignore: { paths: ['$.presentation_stage.body[*].value.caption', '$.meta.*'], pages: ['legacy/**'] },
        mediaPrefix: '/media/',
        maxWarnings: 0,
      },
      null,
      2,
    ),
  );

  const load = loadavg()[0];
  const plain = runCheck(root, [pages], { cwd: scratch });
  const verify = runCheck(root, [verifyPages, '--verify-files', media], { cwd: scratch });
  const report = path.join(scratch, 'check-report.html');
  const html = runCheck(root, [pages, '--verify-files', media, '--reporter', 'html', '--output', report], {
    cwd: scratch,
    reporter: 'html',
  });
  const htmlBytes = statSync(report).size;
  const findings = plain.report.errors + plain.report.warnings + verify.report.errors + verify.report.warnings;

  console.log('\n## Check\n');
  console.log(`load average when it started: ${load.toFixed(2)} (the machine is shared)\n`);
  console.log('| run | pages | images | files read | seconds | pages/s | bytes read per file | target |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---|');
  console.log(
    `| 1,000 pages, config file in use, no file verification | ${plain.report.pages.length} | ${plain.report.images} ` +
      `| - | ${fmt(plain.seconds)} | ${fmt(plain.report.pages.length / plain.seconds, 0)} | - | under 5 s |`,
  );
  const perFile = verify.report.files.bytesRead / verify.report.files.probed;
  console.log(
    `| 50 pages, --verify-files on disk | ${verify.report.pages.length} | ${verify.report.images} ` +
      `| ${verify.report.files.probed} | ${fmt(verify.seconds)} ` +
      `| ${fmt(verify.report.pages.length / verify.seconds, 0)} ` +
      `| ${fmt(perFile, 0)} B (${fmt(perFile / 1024, 1)} KiB) | under 64 KiB |`,
  );
  console.log(
    `| 1,000 pages, --verify-files, --reporter html | 1000 | ${plain.report.images} | - | ${fmt(html.seconds)} ` +
      `| ${fmt(1000 / html.seconds, 0)} | - | report ${fmt(htmlBytes / 1e6)} MB, under 10 MB |`,
  );
  console.log(`\nfindings: ${findings} (the generated pages are valid, so 0 is right)`);
}
