/**
 * The read-only Content API over the sample content folder: a real server on port 0, real
 * HTTP over loopback.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { cp, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { Agent, get, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadContent } from '../../src/server/content.js';
import { createContentServer } from '../../src/server/server.js';
import { runCli, startCli } from '../cli/run-cli.js';
import { tempDir } from '../fixtures/tmp.js';
import { versionOfFile } from '../fixtures/versions.js';
import { PAGES } from '../page/variants.js';

const CONTENT = path.resolve(PAGES, '../content');
let server: Server;
let base: string;

beforeAll(async () => {
  server = createContentServer(await loadContent(CONTENT));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('the page endpoint', () => {
  it('GET: 200, the headers of spec 4.1, absolute URLs from the request host', async () => {
    const res = await fetch(`${base}/api/v2/pages/101/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('vary')).toBe('Accept');
    const page = (await res.json()) as any;
    expect(page.meta.detail_url).toBe(`${base}/api/v2/pages/101/`);
    expect(JSON.stringify(page)).not.toContain('{base_url}');
  });

  it('format=api: nested resource URLs get ?format=api, meta.detail_url does not', async () => {
    const page = (await (await fetch(`${base}/api/v2/pages/101/?format=api`)).json()) as any;
    expect(page.meta.detail_url).toBe(`${base}/api/v2/pages/101/`);
    const text = JSON.stringify(page);
    expect(text.match(/\?format=api/g)).toHaveLength(3);
    expect(page.presentation_stage.body[10].value.articles[0].url).toBe(
      `${base}/api/quarterly/articles/2026/02/10/painting-light/?format=api`,
    );
  });

  it('HEAD has no body, OPTIONS answers the allowed methods, ETag gives 304', async () => {
    const head = await fetch(`${base}/api/v2/pages/101/`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const options = await fetch(`${base}/api/v2/pages/101/`, { method: 'OPTIONS' });
    expect([options.status, options.headers.get('allow')]).toEqual([200, 'GET, HEAD, OPTIONS']);
    const etag = head.headers.get('etag')!;
    expect((await fetch(`${base}/api/v2/pages/101/`, { headers: { 'if-none-match': etag } })).status).toBe(304);
  });

  it('If-None-Match as RFC 9110 13.1.2 has it, on /api/ and /media/ alike: a list, a weak tag, * (#22)', async () => {
    for (const url of [
      `${base}/api/v2/pages/101/`,
      `${base}/api/gallery/newscategories/fairs/`,
      `${base}/media/ladybird.max-300x300.jpg`,
    ]) {
      const tag = (await fetch(url, { method: 'HEAD' })).headers.get('etag')!;
      expect(tag).toMatch(/^"[^"]+"$/);
      const status = async (header: string) => (await fetch(url, { headers: { 'if-none-match': header } })).status;
      for (const header of [tag, `"other", ${tag}`, `W/"x",W/${tag}`, `W/${tag}`, '*'])
        expect([url, header, await status(header)]).toEqual([url, header, 304]);
      for (const header of ['"other"', '"other", W/"x"', `${tag.slice(0, -2)}"`])
        expect([url, header, await status(header)]).toEqual([url, header, 200]);
    }
  });

  it('errors as Wagtail API v2 gives them', async () => {
    const missing = await fetch(`${base}/api/v2/pages/999/`);
    expect([missing.status, await missing.json()]).toEqual([404, { message: 'No Page matches the given query.' }]);
    expect((await fetch(`${base}/api/v2/pages/abc/`)).status).toBe(404);
    const post = await fetch(`${base}/api/v2/pages/101/`, { method: 'POST' });
    expect([post.status, post.headers.get('allow'), await post.json()]).toEqual([
      405,
      'GET, HEAD, OPTIONS',
      { message: 'Method "POST" not allowed.' },
    ]);
    // A page's detail takes the listing's parameters and leaves the others alone (#37); a linked resource
    // is no Wagtail page and takes none but format.
    const fields = await fetch(`${base}/api/v2/pages/101/?fields=_,id,title&unknown=1`);
    expect([fields.status, await fields.json()]).toEqual([200, { id: 101, title: 'Spring Fair 2026' }]);
    // OPTIONS names the methods and runs no filter, as Django REST framework answers it.
    const options = await fetch(`${base}/api/v2/pages/101/?order=nope`, { method: 'OPTIONS' });
    expect([options.status, options.headers.get('allow')]).toEqual([200, 'GET, HEAD, OPTIONS']);
    const unknown = await fetch(`${base}/api/gallery/newscategories/fairs/?fields=title`);
    expect([unknown.status, ((await unknown.json()) as { message: string }).message]).toEqual([
      400,
      'query parameter is not an operation or a recognised field: fields',
    ]);
    expect((await fetch(`${base}/api/v2/pages/101`, { redirect: 'manual' })).status).toBe(301);
    expect((await fetch(`${base}/api/v2/pages/101/?x=${'a'.repeat(3000)}`)).status).toBe(414);
  });

  it('serves the linked resources at their path shapes', async () => {
    for (const p of [
      '/api/quarterly/articles/2026/02/10/painting-light/',
      '/api/gallery/exhibitions/2026/light-and-grass/',
      '/api/gallery/newsentries/2026/03/02/spring-fair/',
      '/api/gallery/newscategories/fairs/',
    ]) {
      const res = await fetch(`${base}${p}`);
      expect(res.status, p).toBe(200);
      expect(JSON.stringify(await res.json())).not.toContain('{base_url}');
    }
  });
});

describe('a content folder without pages', () => {
  it('is served, with a warning that says so (every page answers 404)', async () => {
    const dir = await tempDir();
    const content = await loadContent(dir);
    expect(content.warnings).toEqual([
      `${dir}: no pages (pages/<id>.json), so every /api/v2/pages/<id>/ answers 404; is this the content folder?`,
    ]);
    expect((await loadContent(CONTENT)).warnings.filter((warning) => warning.includes('no pages'))).toEqual([]);
  });
});

describe('media', () => {
  const file = '/media/ladybird.max-300x300.jpg';

  it('Content-Type, ETag, Last-Modified, Cache-Control; 304 on conditional requests', async () => {
    const res = await fetch(`${base}${file}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    // No version in the URL: the file under it may change, so every cache asks again.
    expect(res.headers.get('cache-control')).toBe('public, no-cache');
    const etag = res.headers.get('etag')!;
    const revalidated = await fetch(`${base}${file}`, { headers: { 'if-none-match': etag } });
    expect(revalidated.status).toBe(304);
    expect(revalidated.headers.get('cache-control')).toBe('public, no-cache');
    expect(
      (await fetch(`${base}${file}`, { headers: { 'if-modified-since': res.headers.get('last-modified')! } })).status,
    ).toBe(304);
  });

  it("Cache-Control: immutable for a year when the URL's ?v= is the file's version, revalidate otherwise", async () => {
    const version = await versionOfFile(path.join(CONTENT, file));
    const versioned = await fetch(`${base}${file}?v=${version}`);
    expect(versioned.status).toBe(200);
    expect(versioned.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(Buffer.from(await versioned.arrayBuffer())).toEqual(await readFile(path.join(CONTENT, file)));
    const etag = versioned.headers.get('etag')!;
    const again = await fetch(`${base}${file}?v=${version}`, { headers: { 'if-none-match': etag } });
    expect([again.status, again.headers.get('cache-control')]).toEqual([304, 'public, max-age=31536000, immutable']);
    // Another version (a page ahead of or behind its files): these bytes are not that version's.
    const other = version === '00000000' ? '11111111' : '00000000';
    for (const query of [`?v=${other}`, '?v=', '?v=not-hex']) {
      const res = await fetch(`${base}${file}${query}`);
      expect([query, res.status, res.headers.get('cache-control')]).toEqual([query, 200, 'public, no-cache']);
    }
  });

  it('a file changed in place: its old version revalidates, its new one is immutable', async () => {
    const dir = await tempDir();
    await cp(CONTENT, path.join(dir, 'content'), { recursive: true });
    const target = path.join(dir, 'content', file);
    const other = createContentServer(await loadContent(path.join(dir, 'content')));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const at = `http://127.0.0.1:${(other.address() as AddressInfo).port}${file}`;
    try {
      const before = await versionOfFile(target);
      expect((await fetch(`${at}?v=${before}`)).headers.get('cache-control')).toBe(
        'public, max-age=31536000, immutable',
      );
      await writeFile(target, await readFile(path.join(CONTENT, '/media/dandelion.max-300x300.jpg')));
      const after = await versionOfFile(target);
      expect(after).not.toBe(before);
      expect((await fetch(`${at}?v=${before}`)).headers.get('cache-control')).toBe('public, no-cache');
      expect((await fetch(`${at}?v=${after}`)).headers.get('cache-control')).toBe(
        'public, max-age=31536000, immutable',
      );
    } finally {
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });

  it('ranges: 206 with Content-Range, 416 when unsatisfiable', async () => {
    const whole = Buffer.from(await (await fetch(`${base}${file}`)).arrayBuffer());
    const part = await fetch(`${base}${file}`, { headers: { range: 'bytes=0-99' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 0-99/${whole.length}`);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(whole.subarray(0, 100));
    const tail = await fetch(`${base}${file}`, { headers: { range: 'bytes=-10' } });
    expect(Buffer.from(await tail.arrayBuffer())).toEqual(whole.subarray(whole.length - 10));
    expect((await fetch(`${base}${file}`, { headers: { range: `bytes=${whole.length}-` } })).status).toBe(416);
  });

  it.each([
    '/media/../pages/101.json',
    '/media/%2e%2e/pages/101.json',
    '/media/..%2Fpages%2F101.json',
    '/media/a%00.jpg',
    '/media/.content-api-manifest.json',
    '/media/.content-api-manifest/dandelion.jpg.json',
    '/media/landscapes/',
    '/media/landscapes',
  ])('no escape, no listing: %s', async (p) => {
    const { request } = await import('undici');
    const res = await request(`${base}${p}`);
    await res.body.dump();
    expect(res.statusCode).toBe(404);
  });

  it('malformed URLs: a broken percent-escape is a 404, a garbage request line a 400', async () => {
    const { request } = await import('undici');
    const broken = await request(`${base}/media/%E0%A4%A.jpg`);
    await broken.body.dump();
    expect(broken.statusCode).toBe(404);
    const net = await import('node:net');
    const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
    socket.write('GET /api/v2/pages/101/ HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header Line\r\n\r\n');
    const [reply] = (await once(socket.setEncoding('utf8'), 'data')) as [string];
    socket.destroy();
    expect(reply).toMatch(/^HTTP\/1\.1 400 /);
  });

  it('a symlink out of the media folder is a 404', async () => {
    const dir = await tempDir();
    await cp(CONTENT, path.join(dir, 'content'), { recursive: true });
    await writeFile(path.join(dir, 'secret.jpg'), 'secret');
    await symlink(path.join(dir, 'secret.jpg'), path.join(dir, 'content/media/out.jpg'));
    const other = createContentServer(await loadContent(path.join(dir, 'content')));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(other.address() as AddressInfo).port}/media/out.jpg`);
      expect(res.status).toBe(404);
    } finally {
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });
});

describe('serve, inspect and check together', () => {
  it('the sample pages report nothing wrong, files included', async () => {
    for (const id of ['100', '101', '200', '201'])
      expect((await runCli(['inspect', id, '--base-url', base])).code, id).toBe(0);
    const checked = await runCli(['check', '100', '101', '200', '201', '--base-url', base, '--verify-files', base]);
    expect(checked.code).toBe(0);
    expect(checked.stdout).toMatch(/4 page\(s\), 26 image\(s\), 35 files probed .*: no findings/);
  });

  /**
   * `serve` in a process of its own over the sample content with a `large.png` of `mib` MiB: a body
   * larger than loopback's socket buffers (up to 32 MiB here), still being sent until it is read.
   */
  async function serveLargeFile(mib: number) {
    const dir = await tempDir();
    await cp(CONTENT, path.join(dir, 'content'), { recursive: true });
    await writeFile(path.join(dir, 'content/media/large.png'), randomBytes(mib * 1024 * 1024));
    const { child, done } = startCli(['serve', '--content', path.join(dir, 'content'), '--port', '0', '--quiet']);
    let stderr = '';
    const port = await new Promise<number>((resolve) => {
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const match = /at http:\/\/127\.0\.0\.1:(\d+)\//.exec(stderr);
        if (match) resolve(Number(match[1]));
      });
    });
    return { dir, child, done, port };
  }

  it('SIGTERM lets a response under way finish, then exits 0', async () => {
    const { dir, child, done, port } = await serveLargeFile(96);
    const file = 'large.png'; // served by its extension; the bytes are not looked at
    const expected = (await stat(path.join(dir, 'content/media', file))).size;
    // A connection of its own that closes with the response (no keep-alive agent): a connection left open after it
    // would hold the server until its keep-alive timeout (5 s), which is not what this test is about.
    const response = await new Promise<IncomingMessage>((resolve) =>
      get(`http://127.0.0.1:${port}/media/${file}`, { agent: false }, resolve),
    );
    response.pause(); // a slow reader: the server cannot finish before we read
    child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(child.exitCode).toBeNull(); // still sending
    let received = 0;
    response.on('data', (chunk: Buffer) => (received += chunk.length));
    response.resume();
    await once(response, 'end');
    expect(received).toBe(expected);
    expect((await done).code).toBe(0);
  });

  it('SIGTERM closes a kept-alive connection as its response ends, not at its keep-alive timeout (5 s)', async () => {
    const { child, done, port } = await serveLargeFile(64); // still being sent when the signal comes
    const agent = new Agent({ keepAlive: true });
    try {
      const response = await new Promise<IncomingMessage>((resolve) =>
        get(`http://127.0.0.1:${port}/media/large.png`, { agent }, resolve),
      );
      expect(response.headers.connection).toBe('keep-alive');
      response.pause(); // under way when the signal comes
      child.kill('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(child.exitCode).toBeNull();
      response.resume();
      await once(response, 'end');
      const ended = Date.now();
      expect((await done).code).toBe(0);
      expect(Date.now() - ended).toBeLessThan(2_500);
    } finally {
      agent.destroy();
    }
  });

  it('invalid content is refused at start-up with every problem listed, exit 2', async () => {
    const dir = await tempDir();
    await cp(CONTENT, path.join(dir, 'content'), { recursive: true });
    const page = path.join(dir, 'content/pages/101.json');
    const json = JSON.parse(await (await import('node:fs/promises')).readFile(page, 'utf8'));
    json.date = 'yesterday';
    json.presentation_stage.thumbnail.sizes.md.height = 1;
    await writeFile(page, JSON.stringify(json));
    await writeFile(path.join(dir, 'content/pages/oops.json'), 'nope\n');
    const result = await runCli(['serve', '--content', path.join(dir, 'content'), '--port', '0']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/pages\/101\.json: \$\.date: expected a date as YYYY-MM-DD \[schema\]/);
    expect(result.stderr).toMatch(/pages\/101\.json: \$\.presentation_stage\.thumbnail\.sizes\.md: .*\[image-aspect\]/);
    expect(result.stderr).toMatch(/pages\/oops\.json: not JSON \(.*\)\n/); // the parser's message, on one line
  });

  it('a --base-url that is not an absolute http(s) URL is refused, exit 2', async () => {
    const result = await runCli(['serve', '--content', CONTENT, '--port', '0', '--base-url', 'staging']);
    expect(result.stderr).toMatch(
      new RegExp(
        /^error: option '--base-url <url>' argument 'staging' is invalid\. /.source +
          /Expected an absolute http\(s\) URL such as https:\/\/gallery\.example\.org for --base-url /.source +
          /but got 'staging'\./.source,
      ),
    );
    expect(result.code).toBe(2);
  });

  it('a port in use: one line naming the address and the reason, exit 2', async () => {
    const port = (server.address() as AddressInfo).port;
    const result = await runCli(['serve', '--content', CONTENT, '--port', String(port), '--quiet']);
    expect(result.stderr).toBe(
      `error: cannot listen on http://127.0.0.1:${port}/: EADDRINUSE, the port is in use; choose another --port\n`,
    );
    expect(result.code).toBe(2);
  });
});
