/**
 * `content-api serve`: the read-only Content API over a content folder, until SIGINT or
 * SIGTERM (in-flight requests finish first).
 */
import { InvalidArgumentError } from '../../../errors.js';
import { type Content, InvalidContentError, loadContent } from '../../../server/content.js';
import { createContentServer } from '../../../server/server.js';
import { printMessage } from '../../output.js';

export interface ServeCommandOptions {
  content: string;
  host: string;
  port: number;
  baseUrl?: string | undefined;
  quiet: boolean;
  /** The most items a listing request may ask for (0: no maximum). */
  limitMax?: number | undefined;
}

export async function runServe(options: ServeCommandOptions): Promise<number> {
  let content: Content;
  try {
    content = await loadContent(options.content);
  } catch (error) {
    if (!(error instanceof InvalidContentError)) throw error;
    printMessage(`error: ${error.message}`);
    for (const problem of error.problems) printMessage(`  ${problem}`);
    return 2;
  }
  for (const warning of content.warnings) printMessage(`warning: ${warning}`);
  const server = createContentServer(content, {
    baseUrl: options.baseUrl,
    log: options.quiet ? undefined : printMessage,
    limitMax: options.limitMax,
  });
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(listenError(`http://${host}:${options.port}/`, error)),
    );
    server.listen(options.port, options.host, resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  printMessage(
    `serving ${options.content} (${content.pages.size} pages, ${content.resources.size} linked resources) ` +
      `at http://${host}:${port}/`,
  );
  let stopping = false;
  // A connection kept alive goes idle as its response ends: once stopping, it is closed then, not
  // left to hold the server until its keep-alive timeout.
  server.on('request', (_request, response) =>
    response.on('finish', () => stopping && setImmediate(() => server.closeIdleConnections())),
  );
  await new Promise<void>((resolve) => {
    const stop = () => {
      stopping = true;
      server.close(() => resolve());
      server.closeIdleConnections();
      setTimeout(() => server.closeAllConnections(), 10_000).unref();
    };
    process.once('SIGINT', stop).once('SIGTERM', stop);
  });
  return 0;
}

const LISTEN_ERRORS: Record<string, string> = {
  EADDRINUSE: 'the port is in use; choose another --port',
  EADDRNOTAVAIL: 'no such address on this machine; see --host',
  ENOTFOUND: 'unknown host; see --host',
  EACCES: 'permission denied (ports below 1024 need privileges); choose another --port',
};

function listenError(address: string, error: NodeJS.ErrnoException): InvalidArgumentError {
  const reason = (error.code && LISTEN_ERRORS[error.code]) ?? error.message;
  return new InvalidArgumentError(`cannot listen on ${address}: ${error.code ? `${error.code}, ` : ''}${reason}`);
}
