/**
 * --verify-files beyond the renditions: every media URL a page names (meta.thumb with its
 * size, any other string under the media prefix), and a place that cannot be reached at all
 * is "could not run", while a single missing file stays a finding.
 */

import { copyFile, cp, mkdir, readFile, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { runCli } from '../cli/run-cli.js';
import { startS3 } from '../fixtures/s3.js';
import { sampleRenditions } from '../fixtures/sample-renditions.js';
import { tempDir } from '../fixtures/tmp.js';
import { loadPage, PAGES } from '../page/variants.js';
import { startMediaServer } from './media-server.js';

const SMALL_JPEG = { create: { width: 8, height: 8, channels: 3 as const, background: '#369' } };

const NEWS = '$.presentation_stage.body[11].value.news_entries[0]';

const samples = sampleRenditions();

async function mediaAndPage(edit: (page: any) => void) {
  const dir = await tempDir();
  const media = await samples.copy(dir);
  const page = loadPage('presentation-every-block.json') as any;
  edit(page);
  const file = path.join(dir, 'page.json');
  await writeFile(file, JSON.stringify(page));
  return { dir, media, file };
}

const findings = (stdout: string) =>
  (JSON.parse(stdout).pages[0].problems as Array<{ rule: string; path: string; message: string }>)
    .map((f) => `${f.rule} ${f.path}`)
    .sort();

describe('every media URL a page names', () => {
  it(
    'meta.thumb: the file it names exists, with the size it states; ' +
      'other strings under /media/ exist and are images',
    async () => {
      const { media, file } = await mediaAndPage((page) => {
        const entry = page.presentation_stage.body[11].value.news_entries[0];
        // after render --format webp: no such file
        entry.meta.thumb = { url: '/media/landscapes/storm.max-1200x1200.webp', width: 1200, height: 800 };
        entry.category.meta.thumb.height = 801; // the file is 1200x800
        page.legacy_url = '/media/notes.txt'; // a media URL that is not an image
        page.presentation_stage.thumbnail_caption = '/media/gone.jpg'; // one that is not there
        page.presentation_stage.subtitle = '/not-media/gone.jpg'; // outside the media prefix: not a media URL
      });
      await writeFile(path.join(media, 'notes.txt'), 'plain text, not an image');
      const result = await runCli(['check', file, '--verify-files', media, '--reporter', 'json']);
      expect(result.code).toBe(1);
      expect(findings(result.stdout)).toEqual(
        [
          `file-missing $.presentation_stage.thumbnail_caption`,
          `file-missing ${NEWS}.meta.thumb.url`,
          `file-size ${NEWS}.category.meta.thumb.url`,
          `file-unreadable $.legacy_url`,
        ].sort(),
      );
      const messages = JSON.parse(result.stdout).pages[0].problems.map((f: { message: string }) => f.message);
      expect(messages).toContain(
        `${path.join(media, 'landscapes/storm.max-1200x1200.jpg')} is 1200x800, the JSON says 1200x801`,
      );
    },
  );

  it('the same over HTTP, and a wrong format behind a media URL', async () => {
    const { media, file } = await mediaAndPage((page) => {
      page.presentation_stage.body[11].value.news_entries[0].meta.thumb.url = '/media/fake.jpg';
    });
    await sharp({ create: { width: 1200, height: 800, channels: 3, background: '#345' } })
      .png()
      .toFile(path.join(media, 'fake.jpg'));
    const server = await startMediaServer(media);
    try {
      const result = await runCli(['check', file, '--verify-files', server.base, '--reporter', 'json']);
      expect(findings(result.stdout)).toEqual([`file-format ${NEWS}.meta.thumb.url`]);
      expect(result.code).toBe(1);
    } finally {
      await server.close();
    }
  });
});

describe('a --verify-files place that cannot be reached', () => {
  it('a server with nothing listening: exit 2, one line, no findings', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const result = await runCli([
      'check',
      path.join(PAGES, 'presentation-every-block.json'),
      '--verify-files',
      `http://127.0.0.1:${port}`,
    ]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      new RegExp(
        `^error: --verify-files http://127\\.0\\.0\\.1:${port}: cannot reach the server \\(.*ECONNREFUSED.*\\)\\n$`,
      ),
    );
  });

  it('a server that goes away during the run: exit 2, not a finding per file', async () => {
    const { file } = await mediaAndPage(() => {});
    let requests = 0;
    const { createServer: createHttp } = await import('node:http');
    // A front that answers the first request (the reachability check), then closes for good.
    const front = createHttp((_req, res) => {
      requests++;
      res.end();
      front.close();
      front.closeAllConnections();
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    try {
      const result = await runCli([
        'check',
        file,
        '--verify-files',
        `http://127.0.0.1:${(front.address() as { port: number }).port}`,
        '--reporter',
        'json',
      ]);
      expect(requests).toBe(1);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(
        /^error: --verify-files http:\/\/127\.0\.0\.1:\d+: cannot reach the server \(.+\)\n$/,
      );
    } finally {
      front.close();
    }
  });

  it('one missing file on a reachable server stays a finding', async () => {
    const { media, file } = await mediaAndPage(() => {});
    await rm(path.join(media, 'marigold.max-300x300.png'));
    const server = await startMediaServer(media);
    try {
      const result = await runCli(['check', file, '--verify-files', server.base, '--reporter', 'json']);
      expect(result.code).toBe(1);
      expect(findings(result.stdout).every((f) => f.startsWith('file-missing '))).toBe(true);
      expect(findings(result.stdout).length).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
  });
});

describe('a --verify-files place that holds no files at all (#22)', () => {
  const page = path.join(PAGES, 'presentation-every-block.json');

  it('an empty folder: exit 2, one line naming it, no findings', async () => {
    const empty = path.join(await tempDir(), 'media');
    await mkdir(path.join(empty, 'landscapes'), { recursive: true }); // folders, but no file in any
    const result = await runCli(['check', page, '--verify-files', empty, '--reporter', 'json']);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `error: --verify-files ${empty}: holds no files, so no file a page names can be there\n`,
    );
    expect(result.code).toBe(2);
  });

  it('a bucket prefix with nothing under it (a typo): exit 2, one line naming it', async () => {
    const s3 = await startS3(['gallery']);
    try {
      await s3.put('gallery', 'media/landscapes/storm.max-300x300.jpg', await sharp(SMALL_JPEG).jpeg().toBuffer());
      const result = await runCli(['check', page, '--verify-files', 's3://gallery/typo/'], { env: s3.env });
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(
        'error: --verify-files s3://gallery/typo/: holds no files, so no file a page names can be there\n',
      );
      expect(result.code).toBe(2);
    } finally {
      await s3.close();
    }
  });

  it('a folder with some files, but not those the page names: findings, as before (exit 1)', async () => {
    const media = path.join(await tempDir(), 'media');
    await mkdir(media);
    await writeFile(path.join(media, 'unrelated.jpg'), await sharp(SMALL_JPEG).jpeg().toBuffer());
    const result = await runCli(['check', page, '--verify-files', media, '--reporter', 'json']);
    expect(result.code).toBe(1);
    expect(findings(result.stdout).every((f) => f.startsWith('file-missing '))).toBe(true);
    expect(findings(result.stdout).length).toBeGreaterThan(1);
  });
});

describe('a --verify-files folder given relative', () => {
  it('names its files as given, relative, not absolute', async () => {
    const dir = await tempDir();
    await cp(path.resolve('samples/content'), path.join(dir, 'content'), { recursive: true });
    await truncate(path.join(dir, 'content', 'media', 'ladybird.max-1200x1200.jpg'), 2000);
    const result = await runCli(['check', 'content/pages/101.json', '--verify-files', 'content/media'], { cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('[file-unreadable] content/media/ladybird.max-1200x1200.jpg does not decode');
    expect(result.stdout).not.toContain(dir);
  });
});

describe('a symlink in a --verify-files folder that points outside it', () => {
  it('is a file-outside finding naming the file and its target, and is never read (nor embedded in the report)', async () => {
    const { dir, media, file } = await mediaAndPage(() => {});
    const rendition = path.join(media, 'landscapes/storm.max-300x300.jpg');
    const elsewhere = path.join(dir, 'elsewhere');
    await mkdir(elsewhere);
    const secret = path.join(elsewhere, 'secret.jpg');
    await copyFile(rendition, secret);
    await rm(rendition);
    await symlink(secret, rendition);
    const json = await runCli(['check', file, '--verify-files', media, '--reporter', 'json']);
    expect(json.code).toBe(1);
    const problems = JSON.parse(json.stdout).pages[0].problems as Array<{ rule: string; message: string }>;
    const outside = problems.filter((problem) => problem.rule === 'file-outside');
    expect(outside.length).toBeGreaterThan(0);
    expect(outside.every((p) => p.message === `${rendition} is a symlink to ${secret}, outside ${media}`)).toBe(true);
    expect(problems.filter((problem) => problem.rule !== 'file-outside')).toEqual([]);
    const report = path.join(dir, 'report.html');
    const html = await runCli(['check', file, '--verify-files', media, '--reporter', 'html', '-o', report]);
    expect(html.code).toBe(1);
    expect(await readFile(report, 'utf8')).toContain('cannot read the file');
  });
});
