/**
 * loadPage on hostile input: special files, a page past the size cap (file, stdin, HTTP
 * alike), bytes that are not UTF-8, a page nested 200,000 levels deep. Each is one line, and
 * nothing is read without bound.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { loadPage } from '../../src/client/pages.js';
import { InvalidArgumentError } from '../../src/errors.js';
import { readStreamWithin } from '../../src/page/json-file.js';
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
    execFileSync('mkfifo', [fifo]);
    expect(await refusal(fifo)).toBe(`${fifo}: a FIFO (named pipe), not a file`);
  });

  it('/dev/zero (endless) and /dev/null', async () => {
    expect(await refusal('/dev/zero')).toBe('/dev/zero: a device, not a file');
    expect(await refusal('/dev/null')).toBe('/dev/null: a device, not a file');
  });

  it('a folder, and a symlink loop', async () => {
    const dir = await tempDir();
    await mkdir(path.join(dir, 'pages.json'));
    execFileSync('ln', ['-s', 'loop.json', path.join(dir, 'loop.json')]);
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
