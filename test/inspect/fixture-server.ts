/**
 * A real HTTP server on loopback that serves the sample pages and misbehaves on purpose.
 * The first path segment picks the behaviour: `http://127.0.0.1:<port>/<mode>` is the base
 * URL to give the client, e.g. `/flaky/api/v2/pages/101/` answers 503 once, then the page.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadPage, loadVariants } from '../page/variants.js';

export interface FixtureServer {
  origin: string;
  base(mode: string): string;
  hits(mode: string): number;
  close(): Promise<void>;
}

const SAMPLE_BASE = 'http://localhost:8000';

export async function startFixtureServer(): Promise<FixtureServer> {
  const hits = new Map<string, number>();
  const valid = JSON.stringify(loadPage('presentation-every-block.json'));
  const defect = JSON.stringify(loadVariants().find((v) => v.name === 'image-aspect')!.page);
  let origin = '';

  /** The page as the API would serve it from `base`, with format=api applied when asked. */
  const pageFor = (text: string, mode: string, formatApi: boolean) => {
    let body = text.replaceAll(SAMPLE_BASE, `${origin}/${mode}`);
    if (formatApi) body = body.replace(/"(http:\/\/[^"]+\/api\/(?:quarterly|gallery)\/[^"]+\/)"/g, '"$1?format=api"');
    return body;
  };
  const json = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      ...headers,
    });
    res.end(body);
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', origin);
    const [, mode = '', ...rest] = url.pathname.split('/');
    const count = (hits.get(mode) ?? 0) + 1;
    hits.set(mode, count);
    if (`/${rest.join('/')}` !== '/api/v2/pages/101/') return json(res, 404, JSON.stringify({ message: 'Not found.' }));
    const formatApi = url.searchParams.get('format') === 'api';
    const page = pageFor(valid, mode, formatApi && mode === 'ok');
    switch (mode) {
      case 'ok':
      case 'no-format-api':
        return json(res, 200, page);
      case 'defect':
        return json(res, 200, pageFor(defect, mode, false));
      case 'slow':
        return void setTimeout(() => json(res, 200, page), 2_000).unref();
      case 'flaky':
        return count === 1 ? json(res, 503, JSON.stringify({ message: 'try later' })) : json(res, 200, page);
      case 'error500':
        return count === 1 ? json(res, 500, JSON.stringify({ message: 'Internal error' })) : json(res, 200, page);
      case 'ratelimit':
        return count === 1
          ? json(res, 429, JSON.stringify({ message: 'slow down' }), { 'retry-after': '1' })
          : json(res, 200, page);
      case 'missing':
        return json(res, 404, JSON.stringify({ message: 'Not found.' }));
      case 'html':
        res.writeHead(200, { 'content-type': 'text/html' });
        return void res.end('<!doctype html><html><body>Welcome</body></html>');
      case 'html500':
        res.writeHead(500, { 'content-type': 'text/html' });
        return void res.end('<!doctype html><html><body><h1>Server Error (500)</h1></body></html>');
      case 'truncated':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(page) });
        res.write(page.slice(0, 1000));
        return void setTimeout(() => res.socket?.destroy(), 20);
      case 'badjson':
        return json(res, 200, '{"id": 101, "title": ');
      case 'wrongtype':
        res.writeHead(200, { 'content-type': 'text/plain' });
        return void res.end(page);
      case 'huge':
        return json(res, 200, JSON.stringify({ padding: 'x'.repeat(2 * 1024 * 1024) }));
      case 'reset':
        return void req.socket.destroy();
      default:
        return json(res, 404, JSON.stringify({ message: 'Not found.' }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    base: (mode) => `${origin}/${mode}`,
    hits: (mode) => hits.get(mode) ?? 0,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
