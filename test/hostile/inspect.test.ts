/**
 * inspect against hostile and faulty servers, through the built CLI: each failure is one
 * line on stderr naming the URL and the real reason, with nothing the server sent printed
 * raw, in bounded time, exit 2.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run-cli.js';
import { httpServer, type TestServer } from '../client/misbehaving-server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const UNPRINTABLE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

async function inspectFails(extra: string[] = []) {
  const started = Date.now();
  const result = await runCli(['inspect', '101', '--base-url', server!.url(), '--retries', '0', ...extra]);
  expect(Date.now() - started).toBeLessThan(15_000);
  expect(result.code, result.stderr).toBe(2);
  const lines = result.stderr.split('\n').filter(Boolean);
  expect(lines).toHaveLength(1);
  expect(result.stderr).not.toMatch(UNPRINTABLE);
  return lines[0]!;
}

describe('inspect: hostile servers give one line and exit 2', () => {
  it('a page trickling one byte at a time is cut at --deadline', async () => {
    server = await httpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => res.write(' '), 100);
      res.on('close', () => clearInterval(timer));
    });
    expect(await inspectFails(['--deadline', '1000'])).toMatch(
      new RegExp(
        /^error: http:\/\/127\.0\.0\.1:\d+\/api\/v2\/pages\/101\/: /.source +
          /timed out: no complete response within the 1000 ms deadline, \d+ bytes received$/.source,
      ),
    );
  });

  it('a Content-Length that lies: the real reason, not "after retries"', async () => {
    server = await httpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 10_000 });
      res.write('{"id": 101');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    expect(await inspectFails()).toMatch(
      new RegExp(
        /\/pages\/101\/: HTTP 200 body broken after 10 of the 10000 bytes its Content-Length promised: /.source +
          /connection reset$/.source,
      ),
    );
  });

  it('an error message with escape sequences and line breaks is printed escaped', async () => {
    server = await httpServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: '\u001b[2J\u001b]0;pwned\u0007\nerror: forged second line\u202e' }));
    });
    expect(await inspectFails()).toMatch(
      /: HTTP 404 Not Found \(\\u001b\[2J\\u001b\]0;pwned\\u0007 error: forged second line\\u202e\)$/,
    );
  });

  it('a page nested 200,000 levels deep, invalid UTF-8, and one past --max-bytes', async () => {
    let body: string | Buffer = '';
    server = await httpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
    body = `{"id": 101, "x": ${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
    expect(await inspectFails()).toMatch(
      /: invalid JSON \(nested deeper than 256 levels \(the limit\) at offset 272\)$/,
    );
    body = Buffer.from([
      0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x31, 0x30, 0x31, 0x2c, 0x22, 0x74, 0x22, 0x3a, 0x22, 0xc3, 0x22, 0x7d,
    ]);
    expect(await inspectFails()).toMatch(/: not UTF-8: byte 0xc3 at offset 15 is not valid UTF-8$/);
    body = JSON.stringify({ id: 101, padding: 'x'.repeat(5000) });
    expect(await inspectFails(['--max-bytes', '1000'])).toMatch(/: response larger than 1000 bytes$/);
  });
});

describe('inspect: a hostile page is shown, escaped, in linear time', () => {
  it(
    'escape sequences in fields, an object whose toString is not a function, a block type "constructor", ' +
      '400 KB of unclosed <',
    async () => {
      const { readFile, writeFile } = await import('node:fs/promises');
      const path = await import('node:path');
      const { tempDir } = await import('../fixtures/tmp.js');
      const page = JSON.parse(await readFile('samples/pages/presentation-every-block.json', 'utf8'));
      page.title = '\u001b[2J\u001b]0;pwned\u0007title';
      page.meta.slug = JSON.parse('{"toString": null}');
      page.presentation_stage.body.push(
        { type: 'constructor', id: 'x', value: {} },
        { type: 'text', id: 'y', value: { text: '<'.repeat(400_000) } },
      );
      const file = path.join(await tempDir(), 'hostile.json');
      await writeFile(file, JSON.stringify(page));
      const started = Date.now();
      const result = await runCli(['inspect', file]);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(result.code).toBe(1); // problems found; no crash
      expect(result.stderr).toBe('');
      expect(result.stdout).not.toMatch(UNPRINTABLE);
      expect(result.stdout).toContain('\\u001b[2J\\u001b]0;pwned\\u0007title');
      expect(result.stdout).toContain('{"toString":null}');
      expect(result.stdout).toMatch(/constructor\s+x\s+\(not in the spec\)/);
    },
  );
});
