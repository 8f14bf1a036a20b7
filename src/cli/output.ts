/**
 * The CLI's only way to print: data to stdout, messages to stderr, colour only on a
 * terminal that wants it (`NO_COLOR`, `FORCE_COLOR` are honoured by Node's `hasColors`).
 */
import { access, constants, stat } from 'node:fs/promises';
import path from 'node:path';
import type { WriteStream } from 'node:tty';
import { ContentApiError } from '../errors.js';
import { writeFileAtomic } from '../fs/atomic.js';

export interface Styles {
  red(text: string): string;
  yellow(text: string): string;
  green(text: string): string;
  dim(text: string): string;
  bold(text: string): string;
}

export function stylesFor(stream: NodeJS.WriteStream): Styles {
  const enabled = Boolean(stream.isTTY && (stream as WriteStream).hasColors?.()) && !process.env.NO_COLOR;
  const wrap = (open: number, close: number) => (text: string) =>
    enabled ? `\x1b[${open}m${text}\x1b[${close}m` : text;
  return { red: wrap(31, 39), yellow: wrap(33, 39), green: wrap(32, 39), dim: wrap(2, 22), bold: wrap(1, 22) };
}

export const stderrStyles = (): Styles => stylesFor(process.stderr);

/** Prints one line of data on stdout. */
export function printData(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

/** Prints one line of message on stderr. */
export function printMessage(text: string): void {
  process.stderr.write(`${text}\n`);
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
    const text = label.length > room ? `…${label.slice(label.length - room + 1)}` : label;
    process.stderr.write(`\r\x1b[2K${bar}${text}`);
  }

  clear(): void {
    clearTimeout(this.#pending);
    if (this.#enabled) process.stderr.write('\r\x1b[2K');
  }
}

/** A file the user asked for (`--write-page`, `--output`) that cannot be written: exit 2. */
function notWritable(flag: string, file: string, reason: string, cause?: unknown): ContentApiError {
  return new ContentApiError('CONTENT_API_OUTPUT_NOT_WRITABLE', `${flag} ${file}: cannot write (${reason})`, { cause });
}

/** Fails before any work when `file` could not be written: a folder, or its folder missing or read-only. */
export async function assertWritableFile(flag: string, file: string): Promise<void> {
  if ((await stat(file).catch(() => null))?.isDirectory()) throw notWritable(flag, file, 'it is a folder');
  const dir = path.dirname(path.resolve(file));
  await access(dir, constants.W_OK).catch((error: NodeJS.ErrnoException) => {
    throw notWritable(
      flag,
      file,
      error.code === 'ENOENT' ? `no folder ${path.dirname(file)}` : (error.code ?? error.message),
      error,
    );
  });
}

/** Writes a file the user asked for, atomically, with a one-line error naming the flag and file. */
export async function writeOutputFile(flag: string, file: string, data: string): Promise<void> {
  await writeFileAtomic(file, data).catch((error: NodeJS.ErrnoException) => {
    throw notWritable(flag, file, error.code ?? error.message, error);
  });
}
