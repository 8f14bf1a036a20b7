/**
 * `check --all-pages` over a whole site (#37): 10,000 generated pages served by the real `serve` on
 * loopback, checked with their files (`--verify-files` over HTTP), each run the real CLI in its own
 * process, its wall time and peak RSS measured from outside; then the same pages with a missing
 * thumbnail seeded in every 100th, where exactly those 100 must be reported.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { makeSite } from './site.js';

const PAGES = 10_000;

/** `content-api serve` over `dir` on a free port; its base URL and a stop function. */
export async function startServe(root, dir, args = []) {
  const child = spawn(
    process.execPath,
    [path.join(root, 'bin/content-api.js'), 'serve', '--content', dir, '--port', '0', '--quiet', ...args],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8');
  while (!/at (http:\S+)\//.test(stderr)) {
    const [chunk] = await Promise.race([once(child.stderr, 'data'), once(child, 'exit').then(() => [null])]);
    if (chunk === null) throw new Error(`serve ${dir} stopped: ${stderr}`);
    stderr += chunk;
  }
  return { base: /at (http:\S+)\//.exec(stderr)[1], stop: () => child.kill('SIGTERM') };
}

/** One `check --all-pages` run: wall seconds, peak RSS in MB, and the ids of the pages with findings. */
function checkSite(root, base, work) {
  const rssFile = path.join(work, 'check-site-peak-rss');
  const args = ['check', '--all-pages', '--base-url', base, '--verify-files', base, '--reporter', 'json'];
  const started = performance.now();
  const run = spawnSync(
    process.execPath,
    ['--import', path.join(root, 'bench/peak-rss.js'), path.join(root, 'bin/content-api.js'), ...args],
    { cwd: work, encoding: 'utf8', maxBuffer: 1 << 30, env: { ...process.env, BENCH_PEAK_RSS_FILE: rssFile } },
  );
  const seconds = (performance.now() - started) / 1000;
  if (run.status !== 0 && run.status !== 1) throw new Error(`check --all-pages: exit ${run.status}: ${run.stderr}`);
  const report = JSON.parse(run.stdout);
  const peakRssMb = existsSync(rssFile) ? Number(readFileSync(rssFile, 'utf8')) / 1024 : Number.NaN;
  rmSync(rssFile, { force: true });
  const flagged = report.pages
    .filter((page) => page.problems.length > 0)
    .map((page) => Number(/\/pages\/(\d+)\/$/.exec(page.source)[1]));
  return { seconds, peakRssMb, pages: report.pages.length, files: report.files.probed, flagged };
}

export async function checkSiteBench(root, scratch) {
  const rows = [];
  for (const defectEvery of [0, 100]) {
    const dir = path.join(scratch, `site-${defectEvery}`);
    const { defective } = makeSite(root, dir, PAGES, { defectEvery });
    const serve = await startServe(root, dir);
    try {
      const run = checkSite(root, serve.base, scratch);
      const exact =
        run.flagged.length === defective.length && run.flagged.every((id, i) => id === defective[i]) ? 'yes' : 'NO';
      rows.push({ defectEvery, ...run, defective: defective.length, exact });
    } finally {
      serve.stop();
    }
  }
  console.log('\n## Check a whole site: --all-pages over loopback\n');
  console.log(
    `${PAGES.toLocaleString('en')} generated pages (and their category page) served by content-api serve; ` +
      'check --all-pages --verify-files <the same server> --reporter json, the CLI in its own process.\n',
  );
  console.log(
    '| pages | seeded defects | pages reported | exactly those | files read | seconds | peak RSS MB | goal |',
  );
  console.log('|---:|---:|---:|---|---:|---:|---:|---|');
  for (const row of rows)
    console.log(
      `| ${row.pages} | ${row.defective} | ${row.flagged.length} | ${row.exact} | ${row.files} ` +
        `| ${row.seconds.toFixed(1)} | ${row.peakRssMb.toFixed(0)} | under 30 s and 300 MB |`,
    );
}
