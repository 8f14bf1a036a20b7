/**
 * loadPage on hostile input: special files, a page past the size cap (file, stdin, HTTP
 * alike), bytes that are not UTF-8, a page nested 200,000 levels deep. Each is one line, and
 * nothing is read without bound.
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { loadPage, pageUrl } from '../../src/client/pages.js';
import { InvalidArgumentError } from '../../src/errors.js';
import { readStreamWithin } from '../../src/fs/read-within.js';
import { runCli } from '../cli/run-cli.js';
import { mkfifo } from '../fixtures/launcher.js';
import { tempDir } from '../fixtures/tmp.js';
import { httpServer, type TestServer } from './misbehaving-server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function refusal(target: string, options = {}): Promise<string> {
  const error = await loadPage(target, options).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidArgumentError);
  return (error as Error).message;
}

describe('special files given as pages are refused before a byte is read', () => {
  it('a FIFO with no writer (opening it would wait forever)', async () => {
    const dir = await tempDir();
    const fifo = path.join(dir, 'page.json');
    await mkfifo(fifo);
    expect(await refusal(fifo)).toBe(`${fifo}: a FIFO (named pipe), not a file`);
  });

  it('/dev/zero (endless) and /dev/null', async () => {
    expect(await refusal('/dev/zero')).toBe('/dev/zero: a device, not a file');
    expect(await refusal('/dev/null')).toBe('/dev/null: a device, not a file');
  });

  it('a folder, and a symlink loop', async () => {
    const dir = await tempDir();
    await mkdir(path.join(dir, 'pages.json'));
    await symlink('loop.json', path.join(dir, 'loop.json'));
    expect(await refusal(path.join(dir, 'pages.json'))).toBe(`${path.join(dir, 'pages.json')}: a folder, not a file`);
    expect(await refusal(path.join(dir, 'loop.json'))).toBe(`${path.join(dir, 'loop.json')}: cannot read (ELOOP)`);
  });
});

describe('one size cap for every way a page arrives', () => {
  it('a file past --max-bytes is refused without reading it', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'big.json');
    await writeFile(file, JSON.stringify({ padding: 'x'.repeat(2000) }));
    expect(await refusal(file, { maxBytes: 1000 })).toBe(
      `${file}: larger than 1000 bytes, the cap on a page (--max-bytes)`,
    );
    expect((await loadPage(file, { maxBytes: 3000 })).json).toEqual({ padding: 'x'.repeat(2000) });
  });

  it('standard input past the cap', async () => {
    const stdin = (max: number) =>
      readStreamWithin(Readable.from([Buffer.alloc(600, 0x20), Buffer.alloc(600, 0x20)]), max).then((r) => {
        if (!r.ok) throw new InvalidArgumentError(`standard input: ${r.reason}`);
        return r.bytes;
      });
    expect(await refusal('-', { maxBytes: 1000, stdin })).toBe(
      'standard input: larger than 1000 bytes, the cap on a page (--max-bytes)',
    );
  });

  it('a page over HTTP past the cap', async () => {
    server = await httpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ padding: 'x'.repeat(2000) }));
    });
    const error = await loadPage('101', { baseUrl: server.url(), maxBytes: 1000, retries: 0 }).catch((e: Error) => e);
    expect((error as Error).message).toMatch(/\/api\/v2\/pages\/101\/: response larger than 1000 bytes$/);
  });
});

describe("text that is not a page's JSON is returned with a one-line parseError", () => {
  it('an invalid UTF-8 byte is never replaced by U+FFFD', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'latin1.json');
    await writeFile(file, Buffer.concat([Buffer.from('{"title": "Caf'), Buffer.from([0xe9]), Buffer.from('"}')]));
    const page = await loadPage(file);
    expect(page.json).toBeUndefined();
    expect(page.parseError).toBe('not UTF-8: byte 0xe9 at offset 14 is not valid UTF-8');
  });

  it('a page nested 200,000 levels deep: the depth limit named, no stack overflow', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'deep.json');
    await writeFile(file, `{"a": ${'['.repeat(200_000)}${']'.repeat(200_000)}}`);
    const page = await loadPage(file);
    expect(page.parseError).toBe('nested deeper than 256 levels (the limit) at offset 261');
  });

  it('a control character in a JSON error is escaped', async () => {
    const page = await loadPage('-', { stdin: async () => Buffer.from('{"a": "\u001b[2J\n') });
    expect(page.parseError).toMatch(/^[^\u0000-\u001f]+$/);
  });
});

describe('a UTF-8 byte-order mark before the JSON is accepted, as many JSON readers do (#22)', () => {
  const page = { id: 101, title: 'Café' };
  const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(page))]);

  it('a page file, standard input and an HTTP response', async () => {
    const file = path.join(await tempDir(), 'bom.json');
    await writeFile(file, withBom);
    expect(await loadPage(file)).toMatchObject({ json: page, text: JSON.stringify(page) });
    expect((await loadPage('-', { stdin: async () => withBom })).json).toEqual(page);
    server = await httpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(withBom);
    });
    expect((await loadPage('101', { baseUrl: server.url(), retries: 0 })).json).toEqual(page);
  });

  it('one anywhere else is not JSON, and is named escaped, never printed raw', async () => {
    const parsed = await loadPage('-', { stdin: async () => Buffer.from('{"id": \ufeff101}') });
    expect(parsed.parseError).toMatch(/\\ufeff/);
    expect(parsed.parseError).not.toContain('\ufeff');
  });
});

describe('a page id past 2^53 is requested by its digits, never through a JS number (#22)', () => {
  const id = '123456789012345678901234567890';

  it('check, inspect and render --page ask for /api/v2/pages/<the digits>/', async () => {
    const requested: string[] = [];
    server = await httpServer((req, res) => {
      requested.push(req.url ?? '');
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: 'Not found.' }));
    });
    const base = ['--base-url', server.url(), '--retries', '0'];
    const out = path.join(await tempDir(), 'media');
    for (const args of [
      ['check', id, ...base],
      ['inspect', id, ...base],
      ['render', '--page', id, '--no-download', '--out', out, ...base],
    ]) {
      const result = await runCli(args);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(`/api/v2/pages/${id}/: HTTP 404 Not Found`);
    }
    expect(requested).toEqual(Array(3).fill(`/api/v2/pages/${id}/`));
  });

  it('pageUrl takes the id as digits; a number past 2^53 is refused in one line naming it', () => {
    expect(pageUrl('http://127.0.0.1:8000', id)).toBe(`http://127.0.0.1:8000/api/v2/pages/${id}/`);
    expect(pageUrl('http://127.0.0.1:8000', 101)).toBe('http://127.0.0.1:8000/api/v2/pages/101/');
    expect(() => pageUrl('http://127.0.0.1:8000', 2 ** 60)).toThrow(
      new InvalidArgumentError(
        'page id 1152921504606847000: not an integer within 2^53 (past it, a JS number is not exact); ' +
          'give the id as a string of digits',
      ),
    );
    expect(() => pageUrl('http://127.0.0.1:8000', '12a')).toThrow(
      new InvalidArgumentError("page id '12a': expected the digits of an integer"),
    );
  });
});
