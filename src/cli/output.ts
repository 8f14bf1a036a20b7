/**
 * The CLI's only way to print: data to stdout, messages to stderr, colour only on a
 * terminal that wants it (`NO_COLOR`, `FORCE_COLOR` are honoured by Node's `hasColors`).
 */
import { once } from 'node:events';
import { access, constants, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { WriteStream } from 'node:tty';
import { ContentApiError } from '../errors.js';
import { type OutputWriter, openOutput, planOutput } from '../fs/atomic.js';
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

/** A place a written file must stay out of: an input (a file, or a folder and all below it) or a folder read. */
export interface ReadPlace {
  /** The path as given (a local one: not a page id, a URL or `-`). */
  path: string;
  /** How a refusal names it: `among the inputs (photos)`, `in the output folder media`. */
  what: string;
}

/** `file` resolved through links, as far as it exists: its folder's real path, then its name. */
async function realTarget(file: string): Promise<string> {
  const absolute = path.resolve(file);
  const real = await realpath(absolute).catch(() => null);
  if (real) return real;
  const folder = await realpath(path.dirname(absolute)).catch(() => path.dirname(absolute));
  return path.join(folder, path.basename(absolute));
}

/**
 * Fails before any work when `file`, links resolved, is one of `places` or inside one: a report, a
 * page or a baseline is never written over what the command reads (an original, a page it checks)
 * nor into a folder it writes or checks (the output folder, the `--verify-files` folder).
 */
export async function assertApart(flag: string, file: string, places: ReadPlace[]): Promise<void> {
  const target = await realTarget(file);
  for (const place of places) {
    // A place not made yet (the output folder of a first run) is where it will be.
    const real = await realTarget(place.path);
    if (target === real || target.startsWith(`${real}${path.sep}`))
      throw new ContentApiError(
        'CONTENT_API_INVALID_ARGUMENT',
        `${flag} ${file}: it is ${place.what}; write it elsewhere`,
      );
  }
}

/**
 * `file` as a place another output must stay out of, when it is (or will be) a regular file: two
 * documents written there would leave the last alone. A device (`/dev/null`) or a FIFO takes both.
 */
export async function outputPlace(file: string | undefined, what: string): Promise<ReadPlace[]> {
  if (file === undefined || file === '' || file === '-') return [];
  const plan = await planOutput(file).catch(() => undefined);
  return plan?.how === 'replace' ? [{ path: file, what }] : [];
}

/**
 * Fails before any work when more than one of a command's outputs is its standard output
 * (`/dev/stdout`, `/proc/self/fd/1`, a link to either): two documents in one stream, which no
 * reader takes apart. Each output is named as a refusal says it, with its file, or `true` where it
 * prints to standard output itself (`--json`); undefined where it is not asked for.
 */
export async function assertOneOnStdout(
  outputs: Array<[name: string, file: string | true | undefined]>,
): Promise<void> {
  const onStdout: string[] = [];
  for (const [name, file] of outputs) {
    if (file === undefined) continue;
    const plan = file === true ? undefined : await planOutput(file).catch(() => undefined);
    if (file === true || (plan?.how === 'standard' && plan.fd === 1))
      onStdout.push(file === true ? name : `${name} ${file}`);
  }
  if (onStdout.length < 2) return;
  const [all, others] = onStdout.length === 2 ? ['both', 'one of them'] : ['all', 'all but one'];
  throw new ContentApiError(
    'CONTENT_API_INVALID_ARGUMENT',
    `${onStdout.slice(0, -1).join(', ')} and ${onStdout.at(-1)} ${all} write to standard output: ` +
      `write ${others} elsewhere`,
  );
}

/** A file the user asked for (`--write-page`, `--output`) that cannot be written: exit 2. */
function notWritable(flag: string, file: string, reason: string, cause?: unknown): ContentApiError {
  return new ContentApiError('CONTENT_API_OUTPUT_NOT_WRITABLE', `${flag} ${file}: cannot write (${reason})`, { cause });
}

/**
 * Fails before any work when `file` could not be written: what `planOutput` refuses (a link to
 * another file or to nothing, a folder, a socket), a FIFO or a device not open to writing, or
 * its folder missing or read-only. `/dev/stdout`, a FIFO and `/dev/null` are written through.
 */
export async function assertWritableFile(flag: string, file: string): Promise<void> {
  if (file === '') throw notWritable(flag, file, 'no file named');
  const plan = await planOutput(file);
  if (plan.how === 'refuse') throw notWritable(flag, file, plan.reason);
  if (plan.how === 'standard') return;
  const place = plan.how === 'through' ? file : path.dirname(path.resolve(file));
  await access(place, constants.W_OK).catch((error: NodeJS.ErrnoException) => {
    throw notWritable(
      flag,
      file,
      error.code === 'ENOENT' ? `no folder ${path.dirname(file)}` : (error.code ?? error.message),
      error,
    );
  });
}

/** Standard output or error as an output file: written after what was printed there, never closed. */
function streamOutput(stream: NodeJS.WriteStream): OutputWriter {
  return {
    async write(data) {
      if (data.length > 0 && !stream.write(data)) await once(stream, 'drain');
    },
    close: async () => {},
    abort: async () => {},
  };
}

/**
 * Opens a file the user asked for (`--report`, `--write-page`, `--output`), as `planOutput`
 * says: whole, written through, or this process's standard output or error, when `file` is
 * that (`/dev/stdout`); every failure one line naming the flag and file.
 */
export async function openOutputFile(flag: string, file: string): Promise<OutputWriter> {
  const fail = (error: NodeJS.ErrnoException) => notWritable(flag, file, error.code ?? error.message, error);
  const plan = await planOutput(file).catch((error) => Promise.reject(fail(error)));
  // A FIFO nobody reads yet holds the command: said once, on standard error, after a second.
  const waiting = () => printMessage(`${flag} ${file}: waiting for a reader of this FIFO`);
  const writer =
    plan.how === 'standard'
      ? streamOutput(plan.fd === 1 ? process.stdout : process.stderr)
      : await openOutput(file, plan, waiting).catch((error) => Promise.reject(fail(error)));
  return {
    write: (data) => writer.write(data).catch((error) => Promise.reject(fail(error))),
    close: () => writer.close().catch((error) => Promise.reject(fail(error))),
    abort: () => writer.abort(),
  };
}

/** Writes a file the user asked for (see `openOutputFile`); on failure no temporary file is left. */
export async function writeOutputFile(flag: string, file: string, data: string): Promise<void> {
  const writer = await openOutputFile(flag, file);
  try {
    await writer.write(data);
  } catch (error) {
    await writer.abort();
    throw error;
  }
  await writer.close();
}
