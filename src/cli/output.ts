/**
 * The CLI's only way to print: data to stdout, messages to stderr, colour only on a
 * terminal that wants it (`NO_COLOR`, `FORCE_COLOR` are honoured by Node's `hasColors`).
 */
import { access, constants, stat } from 'node:fs/promises';
import path from 'node:path';
import type { WriteStream } from 'node:tty';
import { ContentApiError } from '../errors.js';
import { writeFileAtomic } from '../fs/atomic.js';
import { kindOf } from '../fs/kind.js';
import type { Styles } from '../styles.js';

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

/** A file the user asked for (`--write-page`, `--output`) that cannot be written: exit 2. */
function notWritable(flag: string, file: string, reason: string, cause?: unknown): ContentApiError {
  return new ContentApiError('CONTENT_API_OUTPUT_NOT_WRITABLE', `${flag} ${file}: cannot write (${reason})`, { cause });
}

/**
 * Fails before any work when `file` could not be written: anything but a regular file in its place,
 * or its folder missing or read-only.
 */
export async function assertWritableFile(flag: string, file: string): Promise<void> {
  if (file === '') throw notWritable(flag, file, 'no file named');
  const info = await stat(file).catch(() => null);
  // A file is replaced whole (written beside it, then renamed over it): a device, FIFO or socket
  // in its place (or a link to one, /dev/null, /dev/stdout) would be replaced, never written to.
  if (info && !info.isFile()) throw notWritable(flag, file, `it is ${kindOf(info)}`);
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
