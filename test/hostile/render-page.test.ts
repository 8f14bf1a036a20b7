/**
 * render --page on hostile pages, through the built CLI: each is refused in one line
 * naming the page and the reason, exit 2, and no page is written. Pages that would be
 * silently changed beyond their sizes and srcset (a duplicate key, a byte that is not
 * UTF-8) are refused, not rewritten.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../cli/run-cli.js';
import { httpServer } from '../client/misbehaving-server.js';
import { mkfifo } from '../fixtures/launcher.js';
import { tempDir } from '../fixtures/tmp.js';
import { PAGES } from '../page/variants.js';

const SAMPLE = path.join(PAGES, 'presentation-every-block.json');
const ORIGINALS = path.resolve(PAGES, '../originals');

async function refused(page: string, extra: string[] = [], input?: string) {
  const dir = await tempDir();
  const written = path.join(dir, 'page.json');
  const started = Date.now();
  const result = await runCli(
    [
      'render',
      '--page',
      page,
      '--originals',
      ORIGINALS,
      '--out',
      path.join(dir, 'media'),
      '--write-page',
      written,
      ...extra,
    ],
    { input },
  );
  expect(Date.now() - started).toBeLessThan(20_000);
  expect(result.code, result.stderr).toBe(2);
  expect(result.stderr.split('\n').filter(Boolean)).toHaveLength(1);
  expect(existsSync(written)).toBe(false);
  expect(existsSync(path.join(dir, 'media'))).toBe(false);
  return result.stderr.trim();
}

describe('render --page refuses pages it could not rewrite faithfully', () => {
  it('a duplicate key (JSON.parse keeps the last, the editor would change the first)', async () => {
    const text = await readFile(SAMPLE, 'utf8');
    // The thumbnail's md size twice: the first, stale one is what the text edit would find.
    const page = text.replace(
      /("thumbnail": \{\s*"width"[\s\S]*?"sizes": \{)/,
      '$1\n        "md": {"width": 1, "height": 1, "url": "/media/stale.jpg"},',
    );
    expect(page).not.toBe(text);
    const file = path.join(await tempDir(), 'dup.json');
    await writeFile(file, page);
    const message = await refused(file);
    expect(message.startsWith(`error: ${file}: $.`)).toBe(true);
    expect(message).toMatch(
      new RegExp(
        /: \$\.presentation_stage\.\S*thumbnail\.sizes\.md: the key 'md' appears twice in one object; /.source +
          /parsers disagree on which counts, so the page cannot be rewritten faithfully: remove the duplicates$/.source,
      ),
    );
  });

  it('a byte that is not UTF-8 (it would become U+FFFD in the written page)', async () => {
    const text = await readFile(SAMPLE);
    const at = text.indexOf('"title"') + 10;
    const file = path.join(await tempDir(), 'latin1.json');
    await writeFile(file, Buffer.concat([text.subarray(0, at), Buffer.from([0xe9]), text.subarray(at)]));
    expect(await refused(file)).toBe(
      `error: ${file}: not JSON (not UTF-8: byte 0xe9 at offset ${at} is not valid UTF-8)`,
    );
  });

  it('a page nested 200,000 levels deep: the depth limit named, no stack trace', async () => {
    const file = path.join(await tempDir(), 'deep.json');
    await writeFile(file, `{"id": 1, "x": ${'['.repeat(200_000)}${']'.repeat(200_000)}}`);
    expect(await refused(file)).toBe(
      `error: ${file}: not JSON (nested deeper than 256 levels (the limit) at offset 270)`,
    );
  });
});

describe('render --page reads nothing without bound', () => {
  it('a FIFO and /dev/zero given as the page', async () => {
    const fifo = path.join(await tempDir(), 'page.json');
    await mkfifo(fifo);
    expect(await refused(fifo)).toBe(`error: ${fifo}: a FIFO (named pipe), not a file`);
    expect(await refused('/dev/zero')).toBe('error: /dev/zero: a device, not a file');
  });

  it('one cap, --max-bytes, for a file and for standard input', async () => {
    const text = await readFile(SAMPLE, 'utf8');
    const cap = String(text.length - 1);
    expect(await refused(SAMPLE, ['--max-bytes', cap])).toBe(
      `error: ${SAMPLE}: larger than ${cap} bytes, the cap on a page (--max-bytes)`,
    );
    expect(await refused('-', ['--max-bytes', cap], text)).toBe(
      `error: standard input: larger than ${cap} bytes, the cap on a page (--max-bytes)`,
    );
  });
});

describe('render --page downloads from a hostile server', () => {
  it('renditions that trickle fail each alone at --deadline, the rest of the report intact, exit 1', async () => {
    const server = await httpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'image/jpeg' });
      const timer = setInterval(() => res.write(Buffer.alloc(1)), 100);
      res.on('close', () => clearInterval(timer));
    });
    try {
      const dir = await tempDir();
      const args = [
        'render',
        '--page',
        SAMPLE,
        '--base-url',
        server.url(),
        '--out',
        path.join(dir, 'media'),
        '--deadline',
        '700',
        '--retries',
        '0',
        '--json',
      ];
      const started = Date.now();
      const result = await runCli(args);
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(result.code, result.stderr).toBe(1);
      const report = JSON.parse(result.stdout) as { failures: Array<{ error: string }> };
      expect(report.failures.length).toBeGreaterThan(0);
      for (const failure of report.failures)
        expect(failure.error).toMatch(
          /: timed out: no complete response within the 700 ms deadline, \d+ bytes received$/,
        );
    } finally {
      await server.close();
    }
  });
});
