/**
 * Long work seen from a terminal: a progress line while a batch runs, and Ctrl-C that lets the
 * work under way finish (a second one stops at once).
 */
import { escapeText } from '../errors.js';
import type { RenderPageOptions } from '../page-render/render-page.js';
import { printMessage } from './output.js';

export type Hooks = Pick<RenderPageOptions, 'onProgress' | 'onDownload' | 'signal'>;

/** When the command started, on `performance.now()`'s clock: set by runCommandLine. */
let commandStart = 0;

/** Starts the command's clock: the binary's at its process's start (0), so its loading counts. */
export function startCommandClock(at: number): void {
  commandStart = at;
}

/**
 * Seconds since the command started: the time it took as its user waited for it, loading and
 * connecting included (`queue results` once said 0.1 s after a wait of 3 s for a busy Redis).
 */
export const commandSeconds = (): number => (performance.now() - commandStart) / 1000;

/** Runs a batch with a progress line on a terminal; the first Ctrl-C lets the originals under way finish. */
export async function withProgress<T>(run: (hooks: Hooks) => Promise<T>): Promise<{ report: T; seconds: number }> {
  const progress = new ProgressLine();
  const controller = new AbortController();
  const onSignal = () => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort();
    progress.clear();
    printMessage('interrupted: finishing the originals under way (press Ctrl-C again to stop now)');
  };
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
  const started = performance.now();
  try {
    const report = await run({
      signal: controller.signal,
      // What is under way, not what finished last: a long encode shows as the file being encoded.
      // Between one original's end and the next one's start nothing is, and nothing is named.
      onProgress: ({ done, total, active, source }) => {
        const more = active.length > 1 ? ` (+${active.length - 1} more)` : '';
        progress.update(done, total, active.length > 0 ? `${active[0]}${more}` : done < total ? '' : source);
      },
      onDownload: (event) => progress.update(event.done, event.total, `download ${event.url}`),
    });
    return { report, seconds: (performance.now() - started) / 1000 };
  } finally {
    progress.clear();
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
  }
}

/**
 * A one-line progress bar on stderr, drawn only when a person is watching (stderr is a
 * TTY and `CI` is not set); otherwise every call does nothing.
 */
export class ProgressLine {
  readonly #enabled = Boolean(process.stderr.isTTY) && !process.env.CI;
  #lastDraw = 0;
  /** The latest state not drawn yet (updates come faster than the eye), drawn when the interval is up. */
  #pending: NodeJS.Timeout | undefined;

  update(done: number, total: number, label: string): void {
    if (!this.#enabled) return;
    clearTimeout(this.#pending);
    const wait = this.#lastDraw + 80 - Date.now();
    if (done < total && wait > 0) {
      this.#pending = setTimeout(() => this.update(done, total, label), wait).unref();
      return;
    }
    this.#lastDraw = Date.now();
    const columns = process.stderr.columns || 80;
    const width = 24;
    const filled = total === 0 ? width : Math.round((done / total) * width);
    const bar = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total} `;
    const room = Math.max(0, columns - bar.length - 1);
    // A file name or URL from elsewhere: escaped, so it cannot move the cursor or retitle the terminal.
    const shown = escapeText(label);
    const text = shown.length > room ? `…${shown.slice(shown.length - room + 1)}` : shown;
    process.stderr.write(`\r\x1b[2K${bar}${text}`);
  }

  clear(): void {
    clearTimeout(this.#pending);
    if (this.#enabled) process.stderr.write('\r\x1b[2K');
  }
}
