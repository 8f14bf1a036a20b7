/**
 * A server for the serve benchmark, in its own process: `content-api` (the real server over
 * samples/content, or the content folder given second) or `bare` (node:http returning page 101's
 * bytes from memory, the ceiling for Node). Prints its port, then answers `rss` on stdin with its
 * RSS in MB.
 */
import { createServer } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createContentServer, loadContent } from '../dist/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const kind = process.argv[2];
const content = await loadContent(process.argv[3] ?? path.join(root, 'samples/content'));
let server;
if (kind === 'bare') {
  const body = Buffer.from(content.pages.get('101').text.replaceAll('{base_url}', 'http://127.0.0.1'));
  const headers = {
    allow: 'GET, HEAD, OPTIONS',
    'content-type': 'application/json',
    vary: 'Accept',
    'content-length': body.length,
  };
  server = createServer((_req, res) => {
    res.writeHead(200, headers);
    res.end(body);
  });
} else {
  server = createContentServer(content, { baseUrl: 'http://127.0.0.1' });
}
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
// RSS after a full collection, so garbage not yet collected does not count as growth.
process.stdin.setEncoding('utf8').on('data', () => {
  globalThis.gc?.();
  console.log((process.memoryUsage().rss / 1048576).toFixed(1));
});
