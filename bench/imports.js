/**
 * What importing each entry of the package costs (#36): the milliseconds from `import()` to its
 * module being ready, in a fresh `node` each time, the median of `runs`, now and at the commit
 * before the entries (e471797: one root entry; `dist/page/validate.js` stood for the model), in
 * alternating runs. Goal: `content-api/model` under 150 ms; the root entry without bullmq or ioredis.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildBaseline } from './baseline.js';

/** The commit before the entries. */
const BEFORE = 'e471797';

/** Milliseconds to import `file` in a fresh process. */
function importMs(file) {
  const script = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)});
    console.log(performance.now() - t);`;
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim());
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

export async function importsBench(root, { runs = 7 } = {}) {
  const before = buildBaseline(root, BEFORE);
  const rows = [
    ['content-api/model', path.join(before, 'dist/page/validate.js'), path.join(root, 'dist/api/model.js')],
    ['content-api (root)', path.join(before, 'dist/index.js'), path.join(root, 'dist/index.js')],
    ['content-api/quality', null, path.join(root, 'dist/api/quality.js')],
    ['content-api/queue', null, path.join(root, 'dist/api/queue.js')],
  ];
  console.log(`\nimports: median of ${runs} fresh processes, ms (before: ${BEFORE}, one entry)`);
  console.log(`${'entry'.padEnd(22)}${'before'.padStart(10)}${'now'.padStart(10)}`);
  for (const [name, old, now] of rows) {
    const times = { old: [], now: [] };
    for (let run = 0; run < runs; run++) {
      if (old) times.old.push(importMs(old));
      times.now.push(importMs(now));
    }
    const was = old ? median(times.old).toFixed(0) : '-';
    console.log(`${name.padEnd(22)}${was.padStart(10)}${median(times.now).toFixed(0).padStart(10)}`);
  }
  console.log('goal: content-api/model under 150 ms');
}
