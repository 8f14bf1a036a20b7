/**
 * Where `check` writes its report as it goes: standard output, or the file `--output` names,
 * which appears whole (written under a temporary name beside it, renamed into place when the
 * report is done) unless it is a FIFO, a device or a link to standard output (written through).
 */

import { once } from 'node:events';
import { openOutputFile } from '../../output.js';

export interface ReportSink {
  write(text: string): Promise<void>;
  /** Finishes the report: renames the file into place, or closes what was written through. */
  close(): Promise<void>;
  /** Drops a file that will not be finished. */
  abort(): Promise<void>;
}

async function writeTo(stream: NodeJS.WritableStream, text: string): Promise<void> {
  if (text === '') return;
  if (!stream.write(text)) await once(stream, 'drain');
}

export function stdoutSink(): ReportSink {
  return { write: (text) => writeTo(process.stdout, text), close: async () => {}, abort: async () => {} };
}

/** The file `--output` names (see `openOutputFile`): whole when the report is done, or written through. */
export function fileSink(flag: string, file: string): Promise<ReportSink> {
  return openOutputFile(flag, file);
}
