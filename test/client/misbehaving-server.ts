/**
 * Real servers on loopback that break HTTP the ways hostile or faulty servers do: a body
 * that trickles, a Content-Length that lies, a connection reset mid-body, escape sequences
 * in the status line, headers and body. `raw` answers with bytes written straight to the
 * socket, for what `node:http` refuses to send.
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer as createNetServer, type Server } from 'node:net';

export interface TestServer {
  url(path?: string): string;
  hits: number;
  close(): Promise<void>;
}

async function listen(server: Server, hits: { count: number }): Promise<TestServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (path = '/') => `${origin}${path}`,
    get hits() {
      return hits.count;
    },
    close: () =>
      new Promise<void>((resolve) => {
        (server as Server & { closeAllConnections?: () => void }).closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

/** A `node:http` server whose handler misbehaves as it likes. */
export function httpServer(
  handler: (req: IncomingMessage, res: ServerResponse, hit: number) => void,
): Promise<TestServer> {
  const hits = { count: 0 };
  const server = createHttpServer((req, res) => handler(req, res, ++hits.count));
  return listen(server, hits);
}

/** A TCP server that writes `response(hit)` to each connection as is, then ends it. */
export function rawServer(response: (hit: number) => string | Buffer): Promise<TestServer> {
  const hits = { count: 0 };
  const server = createNetServer((socket) => {
    socket.once('data', () => socket.end(response(++hits.count)));
    socket.on('error', () => {});
  });
  return listen(server, hits);
}
