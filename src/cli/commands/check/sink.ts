/**
 * Where `check` writes its report as it goes: standard output, or a file that appears whole
 * (written under a temporary name beside it, renamed into place when the report is done).
 */

import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { ContentApiError } from '../../../errors.js';
import { tempPathFor } from '../../../fs/atomic.js';

export interface ReportSink {
  write(text: string): Promise<void>;
  /** Finishes the report: flushes stdout, or renames the file into place. */
  close(): Promise<void>;
  /** Drops a file that will not be finished. */
  abort(): Promise<void>;
}

async function writeTo(stream: NodeJS.WritableStream | WriteStream, text: string): Promise<void> {
  if (text === '') return;
  if (!stream.write(text)) await once(stream, 'drain');
}

export function stdoutSink(): ReportSink {
  return { write: (text) => writeTo(process.stdout, text), close: async () => {}, abort: async () => {} };
}

export function fileSink(flag: string, file: string): ReportSink {
  const temp = tempPathFor(file);
  const stream = createWriteStream(temp, { flags: 'wx' });
  let failure: NodeJS.ErrnoException | null = null;
  stream.on('error', (error) => (failure = error));
  const fail = (error: NodeJS.ErrnoException) =>
    new ContentApiError(
      'CONTENT_API_OUTPUT_NOT_WRITABLE',
      `${flag} ${file}: cannot write (${error.code ?? error.message})`,
      { cause: error },
    );
  return {
    async write(text) {
      if (failure) throw fail(failure);
      await writeTo(stream, text);
    },
    async close() {
      stream.end();
      await once(stream, 'close');
      if (failure) {
        await rm(temp, { force: true });
        throw fail(failure);
      }
      await rename(temp, file).catch(async (error: NodeJS.ErrnoException) => {
        await rm(temp, { force: true });
        throw fail(error);
      });
    },
    async abort() {
      stream.destroy();
      await rm(temp, { force: true });
    },
  };
}
