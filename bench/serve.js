/**
 * The serve benchmark: autocannon against the page endpoint of content-api's server and of a
 * bare node:http server returning the same bytes (each in its own process), side by side;
 * then a 60-second soak of content-api at full load, RSS printed before and after.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const here = path.dirname(fileURLToPath(import.meta.url));
const fmt = (n, digits = 0) => n.toFixed(digits);

async function startTarget(kind) {
  const child = spawn(process.execPath, ['--expose-gc', path.join(here, 'serve-target.js'), kind], {
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

const load = (port, duration) =>
  autocannon({ url: `http://127.0.0.1:${port}/api/v2/pages/101/`, connections: 50, pipelining: 1, duration });

export async function serveBench({ soakSeconds = 60, seconds = 10 } = {}) {
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
