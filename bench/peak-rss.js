/**
 * Preloaded (`node --import ./bench/peak-rss.js ...`) into a CLI run the archive bench measures:
 * at exit, writes the process's peak resident memory in KB (VmHWM, its own; not ru_maxrss,
 * which survives exec) to the file BENCH_PEAK_RSS_FILE names.
 */
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.env.BENCH_PEAK_RSS_FILE;
if (file) {
  process.on('exit', () => {
    const status = readFileSync('/proc/self/status', 'utf8');
    const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? process.resourceUsage().maxRSS);
    writeFileSync(file, String(kb));
  });
}
