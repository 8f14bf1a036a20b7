/**
 * The serve benchmark: autocannon against the page endpoint of content-api's server and of a
 * bare node:http server returning the same bytes (each in its own process), side by side; the
 * listing (20 items a request) beside a page's detail over a generated site of 1,000 pages; then a
 * 60-second soak of content-api at full load, RSS printed before and after.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { makeSite } from './site.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const fmt = (n, digits = 0) => n.toFixed(digits);

async function startTarget(kind, content) {
  const args = [path.join(here, 'serve-target.js'), kind, ...(content ? [content] : [])];
  const child = spawn(process.execPath, ['--expose-gc', ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = [];
  child.stdout.setEncoding('utf8').on('data', (chunk) => lines.push(...chunk.trim().split('\n')));
  while (lines.length === 0) await once(child.stdout, 'data');
  const port = Number(lines.shift());
  const rss = async () => {
    child.stdin.write('rss\n');
    while (lines.length === 0) await once(child.stdout, 'data');
    return Number(lines.shift());
  };
  return { port, rss, stop: () => child.kill('SIGTERM') };
}

const load = (port, duration, target = '/api/v2/pages/101/') =>
  autocannon({ url: `http://127.0.0.1:${port}${target}`, connections: 50, pipelining: 1, duration });

/** The requests a front end makes of the listing, each beside a page's detail on the same server. */
const LISTING_REQUESTS = [
  ['detail of one page', '/api/v2/pages/1500/'],
  ['listing, 20 items (defaults)', '/api/v2/pages/'],
  [
    'listing, 20 items: type, order=-title, offset=500',
    '/api/v2/pages/?type=site.PresentationPage&order=-title&offset=500',
  ],
  [
    'listing, 20 items: child_of, fields=title,seo_title',
    '/api/v2/pages/?child_of=200&fields=title,seo_title&offset=20',
  ],
  ['listing, 20 items: search=installation', '/api/v2/pages/?search=installation'],
  ['find by html_path (302)', '/api/v2/pages/find/?html_path=/collecting/installations/installation-500/'],
];

/**
 * Each request twice over: the same URL again and again (answered from the prepared responses, as a
 * front end's repeated requests are), then a new URL each time (`_=<n>`, a parameter Wagtail knows
 * and ignores), so that every answer is made anew.
 */
async function distinctLoad(port, duration, target) {
  let n = 0;
  const join = target.includes('?') ? '&' : '?';
  return autocannon({
    url: `http://127.0.0.1:${port}${target}`,
    connections: 50,
    pipelining: 1,
    duration,
    requests: [{ setupRequest: (request) => ({ ...request, path: `${target}${join}_=${n++}` }) }],
  });
}

/** The listing and find against a page's detail, over a generated site of 1,000 pages. */
async function listingBench(root, scratch, seconds) {
  const dir = path.join(scratch, 'serve-site');
  makeSite(root, dir, 1000);
  // Each way on a server of its own, so that one way's answers kept in memory do not weigh on the other.
  const measured = {};
  for (const fresh of [false, true]) {
    const target = await startTarget('content-api', dir);
    for (const [what, url] of LISTING_REQUESTS) {
      await load(target.port, 2, url); // warm-up
      const result = await (fresh ? distinctLoad : load)(target.port, seconds, url);
      const errors = result.errors + result.non2xx - (url.includes('/find/') ? result['3xx'] : 0);
      measured[what] = {
        ...measured[what],
        [fresh ? 'fresh' : 'same']: { rps: result.requests.average, p99: result.latency.p99, errors },
      };
    }
    target.stop();
  }
  const rows = LISTING_REQUESTS.map(([what]) => ({ what, ...measured[what] }));
  console.log('\n## Serve: the listing and find beside the detail, a site of 1,000 pages, 50 connections\n');
  console.log('Same URL: each request the one before (answered from memory, as repeated requests are).');
  console.log('New URL: each request another (`_=<n>`, which Wagtail ignores), so every answer is made anew.\n');
  console.log('| request | same URL req/s | p99 ms | vs detail | new URL req/s | p99 ms | vs detail | errors | goal |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---|');
  const [detail] = rows;
  for (const { what, same, fresh } of rows) {
    const goal = what.startsWith('listing') ? 'at least 0.5x' : '';
    console.log(
      `| ${what} | ${fmt(same.rps)} | ${same.p99} | ${fmt(same.rps / detail.same.rps, 2)}x ` +
        `| ${fmt(fresh.rps)} | ${fresh.p99} | ${fmt(fresh.rps / detail.fresh.rps, 2)}x ` +
        `| ${same.errors + fresh.errors} | ${goal} |`,
    );
  }
}

export async function serveBench(root, scratch, { soakSeconds = 60, seconds = 10 } = {}) {
  const rows = [];
  for (const kind of ['content-api', 'bare']) {
    const target = await startTarget(kind);
    await load(target.port, 2); // warm-up
    const result = await load(target.port, seconds);
    rows.push({ kind, rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.non2xx });
    target.stop();
  }
  console.log('\n## Serve: GET /api/v2/pages/101/, 50 connections, autocannon\n');
  console.log('| server | requests/s | p99 latency ms | errors | vs bare |');
  console.log('|---|---:|---:|---:|---:|');
  for (const row of rows)
    console.log(`| ${row.kind} | ${fmt(row.rps)} | ${row.p99} | ${row.errors} | ${fmt(row.rps / rows[1].rps, 2)}x |`);

  await listingBench(root, scratch, seconds);

  const target = await startTarget('content-api');
  await load(target.port, 15); // warm-up: let the heap and socket pools reach their working size
  const before = await target.rss();
  const soak = await load(target.port, soakSeconds);
  const after = await target.rss();
  target.stop();
  console.log(
    `\nsoak: ${soakSeconds} s at full load, ${soak.requests.total} requests, ${soak.errors + soak.non2xx} errors; ` +
      `RSS after warm-up ${before} MB, after the soak ${after} MB (both after a full GC)`,
  );
}
