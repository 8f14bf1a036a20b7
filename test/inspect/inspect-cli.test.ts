/**
 * `content-api inspect` against a real server on loopback that serves fixture pages and
 * misbehaves on purpose.
 */
import { copyFile, cp, readFile, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run-cli.js';
import { httpServer } from '../client/misbehaving-server.js';
import { tempDir } from '../fixtures/tmp.js';
import { PAGES } from '../page/variants.js';
import { type FixtureServer, startFixtureServer } from './fixture-server.js';

let server: FixtureServer;
beforeAll(async () => {
  server = await startFixtureServer();
});
afterAll(() => server.close());

const inspect = (mode: string, ...flags: string[]) =>
  runCli(['inspect', '101', '--base-url', server.base(mode), ...flags]);

describe('inspect a valid page', () => {
  it('prints the report and exits 0', async () => {
    const result = await inspect('ok');
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const out = result.stdout;
    expect(out).toContain('Page 101: Spring Fair 2026');
    expect(out).toMatch(/type\s+site\.PresentationPage/);
    expect(out).toMatch(/published\s+yes, 2026-02-20T08:00:00\.000000/);
    expect(out).toMatch(/parent\s+100 Art Fairs \(site\.CollectingCategoryPage\)/);
    expect(out).toMatch(/header\s+Art Fair Presentation/);
    expect(out).toContain('Blocks (14)');
    expect(out).toMatch(/ 4 {2}single_work\s+ad5e6f70-8192-4da3-becf-3a4b5c6d7e85 {2}Red Marigold, A\. Painter/);
    expect(out).toContain('Images (18)');
    expect(out).toMatch(/300x188 +600x375 +1200x750 +2400x1500 +2560x1600 +ok +ok +\$\.presentation_stage\.thumbnail/);
    expect(out).toMatch(
      new RegExp(
        /article +Painting Light +http:\/\/127\.0\.0\.1:\d+/.source +
          /\/ok\/api\/quarterly\/articles\/2026\/02\/10\/painting-light\//.source,
      ),
    );
    expect(out).toContain('No problems found');
  });

  it('--json prints the same as one document', async () => {
    const result = await inspect('ok', '--json');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({
      page: { id: 101, published: true, slug: 'spring-fair-2026' },
      errors: 0,
      warnings: 0,
      problems: [],
    });
    expect(report.blocks).toHaveLength(14);
    expect(report.images).toHaveLength(18);
    expect(report.links.map((l: { kind: string }) => l.kind).sort()).toEqual([
      'article',
      'news category',
      'news entry',
      'presentation',
    ]);
  });

  it('--format-api requests ?format=api and checks its URL rule', async () => {
    expect((await inspect('ok', '--format-api')).code).toBe(0);
    const wrong = await inspect('no-format-api', '--format-api', '--json');
    expect(wrong.code).toBe(1);
    expect(JSON.parse(wrong.stdout).problems.map((p: { rule: string }) => p.rule)).toEqual([
      'format-api-url',
      'format-api-url',
      'format-api-url',
    ]);
  });

  it('takes the base URL from CONTENT_API_BASE_URL', async () => {
    process.env.CONTENT_API_BASE_URL = server.base('ok');
    try {
      expect((await runCli(['inspect', '101'])).code).toBe(0);
    } finally {
      delete process.env.CONTENT_API_BASE_URL;
    }
  });
});

describe('inspect --verify-files', () => {
  it('reads the files the page names: a truncated or swapped file is a finding, exit 1', async () => {
    const dir = await tempDir();
    await cp(path.resolve('samples/content'), path.join(dir, 'content'), { recursive: true });
    const page = path.join(dir, 'content', 'pages', '101.json');
    const media = path.join(dir, 'content', 'media');
    const run = () => runCli(['inspect', page, '--base-url', 'http://127.0.0.1:8000', '--verify-files', media]);
    const intact = await run();
    expect([intact.code, intact.stdout]).toEqual([0, expect.stringContaining('No problems found')]);
    // Cut short by an interrupted upload; another picture under a rendition's name.
    const cut = path.join(media, 'ladybird.max-1200x1200.jpg');
    await truncate(cut, 2000);
    await copyFile(path.join(media, 'ladybird.max-300x300.jpg'), path.join(media, 'dandelion.max-300x300.jpg'));
    const spoiled = await run();
    expect(spoiled.code).toBe(1);
    expect(spoiled.stdout).toMatch(new RegExp(`\\[file-unreadable\\] ${cut.replaceAll('.', '\\.')} does not decode`));
    expect(spoiled.stdout).toMatch(/\[file-picture\] \S*dandelion\.max-300x300\.jpg shows another picture than /);
    // Without the flag, no file is read: the page alone is valid.
    const pageOnly = await runCli(['inspect', page, '--base-url', 'http://127.0.0.1:8000']);
    expect(pageOnly.code).toBe(0);
  });
});

describe('content-api schema', () => {
  it('prints the JSON Schema of the Page on stdout', async () => {
    const result = await runCli(['schema']);
    expect(result.code).toBe(0);
    const schema = JSON.parse(result.stdout);
    expect(schema.title).toMatch(/Content API Page/);
    expect(schema.properties.presentation_stage.properties.body.type).toBe('array');
  });
});

describe('inspect a page with a defect', () => {
  it('exits 1 and names the JSON path and rule', async () => {
    const result = await inspect('defect');
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /error +\$\.presentation_stage\.thumbnail\.sizes\.md {2}\[image-aspect\] md is 1200x700/,
    );
    expect(result.stdout).toContain('Problems: 1 error(s), 0 warning(s)');
  });
});

describe('HTTP failures: exit 2 with one line naming the URL', () => {
  const cases: Array<[string, string[], RegExp, number]> = [
    ['missing', [], /\/missing\/api\/v2\/pages\/101\/: HTTP 404 Not Found \(Not found\.\)/, 1],
    ['html', [], /\/html\/api\/v2\/pages\/101\/: got an HTML page \(text\/html\), not JSON/, 1],
    ['html500', [], /\/html500\/api\/v2\/pages\/101\/: HTTP 500 \(an HTML error page\)/, 1],
    ['badjson', [], /\/badjson\/api\/v2\/pages\/101\/: invalid JSON/, 1],
    ['wrongtype', [], /\/wrongtype\/api\/v2\/pages\/101\/: content type is text\/plain, not application\/json/, 1],
    ['huge', ['--max-bytes', '100000'], /\/huge\/api\/v2\/pages\/101\/: response larger than 100000 bytes/, 1],
    ['slow', ['--timeout', '300', '--retries', '0'], /\/slow\/api\/v2\/pages\/101\/: timed out/, 1],
    ['reset', ['--retries', '2'], /\/reset\/api\/v2\/pages\/101\/: (connection reset|other side closed)/, 3],
    ['truncated', ['--retries', '0'], /\/truncated\/api\/v2\/pages\/101\/: /, 1],
  ];
  it.each(cases)('%s', async (mode, flags, message, hits) => {
    const result = await inspect(mode, ...flags);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(message);
    expect(server.hits(mode)).toBe(hits);
  });

  it('retries a 503 and succeeds', async () => {
    const result = await inspect('flaky');
    expect(result.code).toBe(0);
    expect(server.hits('flaky')).toBe(2);
  });

  it('does not retry a 500 (only connection errors, 502, 503, 504 and 429 are)', async () => {
    const result = await inspect('error500');
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toMatch(/\/error500\/api\/v2\/pages\/101\/: HTTP 500 \(Internal error\)$/);
    expect(server.hits('error500')).toBe(1);
  });

  it('honours Retry-After on a 429', async () => {
    const started = Date.now();
    const result = await inspect('ratelimit');
    expect(result.code).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(server.hits('ratelimit')).toBe(2);
  });

  it('an unreachable server', async () => {
    const closed = await startFixtureServer();
    const base = closed.base('ok');
    await closed.close();
    const result = await runCli(['inspect', '101', '--base-url', base, '--retries', '1']);
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toMatch(
      /^error: http:\/\/127\.0\.0\.1:\d+\/ok\/api\/v2\/pages\/101\/: connection refused \(ECONNREFUSED\)$/,
    );
  });

  it('bad flags and a missing base URL', async () => {
    expect((await runCli(['inspect', 'abc', '--base-url', server.origin])).code).toBe(2);
    const none = await runCli(['inspect', '101']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/Expected --base-url or CONTENT_API_BASE_URL/);
    expect((await runCli(['inspect', '101', '--base-url', 'ftp://x'])).stderr).toMatch(
      /Expected an http\(s\) base URL/,
    );
  });
});

describe('inspect takes the targets check takes', () => {
  const file = path.join(PAGES, 'presentation-every-block.json');

  it('a page file, standard input, and a page endpoint URL', async () => {
    const fromFile = await runCli(['inspect', file]);
    expect(fromFile.code).toBe(0);
    expect(fromFile.stdout).toContain('Page 101: Spring Fair 2026');
    expect(fromFile.stdout).toContain(`  ${file}\n`);
    expect(fromFile.stdout).toContain('No problems found');
    const piped = await runCli(['inspect', '-', '--json'], { input: await readFile(file, 'utf8') });
    expect(piped.code).toBe(0);
    expect(JSON.parse(piped.stdout)).toMatchObject({ url: 'stdin', page: { id: 101 }, errors: 0 });
    const endpoint = await runCli(['inspect', `${server.base('defect')}/api/v2/pages/101/`]);
    expect(endpoint.code).toBe(1);
    expect(endpoint.stdout).toMatch(/error +\$\.presentation_stage\.thumbnail\.sizes\.md {2}\[image-aspect\]/);
  });

  it('a serve content-folder page, with --base-url filling {base_url}', async () => {
    const page = path.resolve(PAGES, '../content/pages/101.json');
    const filled = await runCli(['inspect', page, '--base-url', 'http://127.0.0.1:8000', '--json']);
    expect(filled.code).toBe(0);
    expect(JSON.parse(filled.stdout).page.detailUrl).toBe('http://127.0.0.1:8000/api/v2/pages/101/');
  });

  it('a file that is not JSON, or is not there: exit 2, one line', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'bad.json'), '{"id": ');
    const bad = await runCli(['inspect', path.join(dir, 'bad.json')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(
      new RegExp(`^error: ${path.join(dir, 'bad.json').replace(/[.]/g, '\\.')}: not JSON \\(.+\\)\\n$`),
    );
    expect(await runCli(['inspect', path.join(dir, 'none.json')])).toMatchObject({
      code: 2,
      stderr: `error: ${path.join(dir, 'none.json')}: no such file or page id\n`,
    });
  });
});

describe('JSON that is not a page (#22)', () => {
  it('one line naming the file and the keys it lacks, exit 1 as for an invalid page; never "Page undefined"', async () => {
    const dir = await tempDir();
    const cases: Array<[string, string, string]> = [
      ['package.json', JSON.stringify({ name: 'x', version: '1.0.0' }), 'no id, meta or title at $'],
      ['article.json', JSON.stringify({ id: 7, title: 'Painting Light', slug: 'painting-light' }), 'no meta at $'],
      ['list.json', '[{"id": 101}]', 'an array at $, not an object'],
    ];
    for (const [name, text, reason] of cases) {
      const file = path.join(dir, name);
      await writeFile(file, text);
      for (const flags of [[], ['--json']]) {
        const result = await runCli(['inspect', file, ...flags]);
        expect(result).toMatchObject({ code: 1, stdout: '' });
        expect(result.stderr).toBe(`error: ${file}: not a page: ${reason} (a page has id, meta and title)\n`);
      }
    }
  });

  it('the same for a page id whose API answers JSON that is not a page', async () => {
    const api = await httpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ detail: 'ok' }));
    });
    try {
      const result = await runCli(['inspect', '101', '--base-url', api.url()]);
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toBe(
        `error: ${api.url('/api/v2/pages/101/')}: not a page: no id, meta or title at $ (a page has id, meta and title)\n`,
      );
    } finally {
      await api.close();
    }
  });
});
