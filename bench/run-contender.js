/** Runs bench/contender.js in a process of its own and returns its one JSON line. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import path from 'node:path';

export function runContender(root, scratch, contender, input, { concurrency, outDir, mode = 'force', env = {} }) {
  const script = path.join(root, 'bench', 'contender.js');
  const out = outDir ?? mkdtempSync(path.join(scratch, `${contender}-`));
  const output = execFileSync(process.execPath, [script, contender, input, out, String(concurrency), mode], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(output.trim().split('\n').at(-1));
}

/** The best of `runs` runs (least wall time). */
export function bestOf(runs, measure) {
  let best;
  for (let i = 0; i < runs; i++) {
    const result = measure();
    if (!best || result.seconds < best.seconds) best = result;
  }
  return best;
}
