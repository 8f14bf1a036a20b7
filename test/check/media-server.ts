/**
 * A static file server on loopback for rendition files, with Range support (or without, to
 * show the client copes), counting the bytes it sends.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

export interface MediaServer {
  base: string;
  bytesSent(): number;
  requests(): number;
  close(): Promise<void>;
}

export async function startMediaServer(root: string, options: { ranges?: boolean } = {}): Promise<MediaServer> {
  let sent = 0;
  let requests = 0;
  const server = createServer(async (req, res) => {
    requests++;
    const pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const file = path.join(root, pathname.replace(/^\/media\//, ''));
    const info = await stat(file).catch(() => null);
    if (!info?.isFile() || !file.startsWith(root)) {
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end('{"message":"Not found."}');
    }
    const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    if (range && options.ranges !== false) {
      const start = Number(range[1]);
      const end = Math.min(Number(range[2]), info.size - 1);
      res.writeHead(206, { 'content-range': `bytes ${start}-${end}/${info.size}`, 'content-length': end - start + 1 });
      sent += end - start + 1;
      return createReadStream(file, { start, end }).pipe(res);
    }
    res.writeHead(200, { 'content-length': info.size });
    const stream = createReadStream(file);
    stream.on('data', (chunk) => (sent += chunk.length));
    stream.pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bytesSent: () => sent,
    requests: () => requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
