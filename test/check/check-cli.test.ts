/**
 * `content-api check` through the real binary: zero false positives on valid pages and edge
 * cases, every seeded defect found at its JSON path, real files checked on disk and over HTTP.
 */
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderOriginals } from '../../src/renditions/render.js';
import { runCli } from '../cli/run-cli.js';
import { photo, writeImage } from '../fixtures/images.js';
import { sampleRenditions } from '../fixtures/sample-renditions.js';
import { tempDir } from '../fixtures/tmp.js';
import { type FixtureServer, startFixtureServer } from '../inspect/fixture-server.js';
import { loadPage, loadVariants, PAGES } from '../page/variants.js';
import { startMediaServer } from './media-server.js';

const VALID = path.join(PAGES, 'presentation-every-block.json');
const SAMPLES = path.resolve(PAGES, '../originals');

const samples = sampleRenditions();

const check = (...args: string[]) => runCli(['check', ...args]);
const findings = (stdout: string) =>
  JSON.parse(stdout)
    .pages.flatMap((p: { problems: Array<{ severity: string; rule: string; path: string }> }) =>
      p.problems.map((f) => `${f.severity} ${f.rule} ${f.path}`),
    )
    .sort();

describe('valid pages: no findings', () => {
  it('the every-block sample, with its files on disk', async () => {
    const media = await samples.copy();
    const result = await check(VALID, '--verify-files', media);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toMatch(
      /^1 page\(s\), 18 image\(s\), 30 files probed \(\d+\.\d KiB read per file\): no findings$/,
    );
  });

  it(
    'edge cases: tiny originals, 1 px panoramas, tall images, no srcset on nested images, ' + 'Wagtail truncation',
    async () => {
      const dir = await tempDir();
      const originals = path.join(dir, 'edge');
      await writeImage(originals, 'tiny.png', photo(200, 150));
      await writeImage(originals, 'one.png', photo(1, 1));
      await writeImage(originals, 'panorama.jpg', photo(10000, 20).jpeg());
      await writeImage(originals, 'tall.jpg', photo(400, 8000).jpeg());
      const media = path.join(dir, 'media');
      const rendered = await renderOriginals([SAMPLES, originals], { outDir: media });
      const images = Object.fromEntries(
        rendered.results
          .filter((r) => r.source.startsWith(originals))
          .map((r) => [path.basename(r.source).split('.')[0], r.image]),
      );
      const page = loadPage('presentation-every-block.json') as any;
      page.presentation_stage.thumbnail = images.tiny;
      page.presentation_stage.feature_large_image = images.panorama;
      page.list_presentation_stage.thumbnail = images.tall;
      page.presentation_stage.body[3].value.image = images.one;
      const work = page.presentation_stage.body[4].value.work;
      work.image = { ...images.panorama, srcset: undefined };
      work.overlay[0].value.image = { ...images.tall, srcset: undefined };
      page.presentation_stage.body[9].value.banner.image = { ...images.tiny, srcset: undefined };
      const file = path.join(dir, 'edge-page.json');
      await writeFile(file, JSON.stringify(page));
      const result = await check(file, '--verify-files', media, '--reporter', 'json');
      expect(findings(result.stdout)).toEqual([]);
      expect(result.code).toBe(0);
      expect(images.panorama!.sizes.xs).toMatchObject({ width: 300, height: 1 });

      // Wagtail truncates where libvips rounds: a 1000x333 original gives xs 300x99 there, 300x100 here. Both pass.
      const truncated = structuredClone(page);
      const size = (w: number, h: number, n: number) => ({ width: w, height: h, url: `/media/t.max-${n}x${n}.jpg` });
      truncated.presentation_stage.thumbnail = {
        width: 1,
        height: 0.333,
        alt_text: null,
        sizes: {
          xs: size(300, 99, 300),
          sm: size(600, 199, 600),
          md: size(1000, 333, 1200),
          lg: size(1000, 333, 2400),
          xl: size(1000, 333, 4800),
        },
        srcset:
          '/media/t.max-300x300.jpg 300w, /media/t.max-600x600.jpg 600w, /media/t.max-1200x1200.jpg 1000w, ' +
          '/media/t.max-2400x2400.jpg 1000w, /media/t.max-4800x4800.jpg 1000w',
      };
      await writeFile(file, JSON.stringify(truncated));
      expect(findings((await check(file, '--reporter', 'json')).stdout)).toEqual([]);
    },
  );
});

describe('seeded defects: each found at its JSON path', () => {
  it('every variant in test/page/variants', async () => {
    const dir = await tempDir();
    const variants = loadVariants().filter((v) => !v.options.formatApi);
    for (const v of variants) await writeFile(path.join(dir, `${v.name}.json`), JSON.stringify(v.page));
    const result = await check(dir, '--reporter', 'json');
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout);
    for (const v of variants) {
      const page = report.pages.find((p: { source: string }) => p.source.endsWith(`${v.name}.json`));
      const found = page.problems
        .map((f: { severity: string; rule: string; path: string }) => `${f.severity} ${f.rule} ${f.path}`)
        .sort();
      expect(found, v.name).toEqual(v.expect.map((f) => `${f.severity} ${f.rule} ${f.path}`).sort());
    }
  });

  it('files: missing, wrong size, wrong format, not an image', async () => {
    const media = await samples.copy();
    await rm(path.join(media, 'ladybird.max-300x300.jpg'));
    await sharp({ create: { width: 10, height: 10, channels: 3, background: '#000' } })
      .jpeg()
      .toFile(path.join(media, 'ladybird.max-600x600.jpg'));
    await sharp({ create: { width: 1200, height: 750, channels: 3, background: '#000' } })
      .png()
      .toFile(path.join(media, 'ladybird.max-1200x1200.jpg'));
    await writeFile(path.join(media, 'ladybird.max-2400x2400.jpg'), 'not an image');
    const result = await check(VALID, '--verify-files', media, '--reporter', 'json');
    expect(result.code).toBe(1);
    const t = '$.presentation_stage.thumbnail.sizes';
    const l = '$.list_presentation_stage.thumbnail.sizes';
    expect(findings(result.stdout)).toEqual(
      [
        `error file-missing ${t}.xs.url`,
        `error file-size ${t}.sm.url`,
        `error file-format ${t}.md.url`,
        `error file-unreadable ${t}.lg.url`,
        `error file-missing ${l}.xs.url`,
        `error file-size ${l}.sm.url`,
        `error file-format ${l}.md.url`,
        `error file-unreadable ${l}.lg.url`,
        `error file-missing $.presentation_stage.body[2].value.image.sizes.xs.url`,
        `error file-size $.presentation_stage.body[2].value.image.sizes.sm.url`,
        `error file-format $.presentation_stage.body[2].value.image.sizes.md.url`,
        `error file-unreadable $.presentation_stage.body[2].value.image.sizes.lg.url`,
        // The black 1200x750 PNG is another picture than the ladybird render recorded (the 10x10 one
        // is too small to tell).
        `error file-picture ${t}.md.url`,
        `error file-picture ${l}.md.url`,
        `error file-picture $.presentation_stage.body[2].value.image.sizes.md.url`,
      ].sort(),
    );
    const report = JSON.parse(result.stdout);
    expect(report.files.probed).toBe(30); // each file once, although three images share them
  });
});

describe('--verify-files over HTTP', () => {
  it.each([true, false])('with Range support %s: no findings, and only headers read', async (ranges) => {
    const media = await samples.copy();
    const server = await startMediaServer(media, { ranges });
    // The same-picture rule reads each rendition whole (next test): off, only headers are read.
    const config = path.join(await tempDir(), 'content-api.config.json');
    await writeFile(config, JSON.stringify({ rules: { 'file-picture': 'off' } }));
    try {
      const result = await check(VALID, '--verify-files', server.base, '--reporter', 'json', '--config', config);
      expect(findings(result.stdout)).toEqual([]);
      expect(result.code).toBe(0);
      const { files } = JSON.parse(result.stdout);
      expect(files.probed).toBe(30);
      expect(files.bytesRead / files.probed).toBeLessThan(64 * 1024);
      expect(server.requests()).toBe(31); // one HEAD to see the server is there, then each file once
      if (ranges) expect(server.bytesSent() / 30).toBeLessThanOrEqual(4096);
    } finally {
      await server.close();
    }
  });

  it('the same-picture rule reads each rendition over HTTP once, whole: no findings', async () => {
    const media = await samples.copy();
    const server = await startMediaServer(media);
    try {
      const result = await check(VALID, '--verify-files', server.base, '--reporter', 'json');
      expect(findings(result.stdout)).toEqual([]);
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout).files.probed).toBe(30);
      // One HEAD, each file's header once, then each file once whole.
      expect(server.requests()).toBe(61);
    } finally {
      await server.close();
    }
  });

  it('a missing file over HTTP is a finding', async () => {
    const media = await samples.copy();
    await rm(path.join(media, 'landscapes/storm.max-600x600.jpg'));
    const server = await startMediaServer(media);
    try {
      const result = await check(VALID, '--verify-files', server.base, '--reporter', 'json');
      expect(result.code).toBe(1);
      expect(findings(result.stdout)).toEqual(
        [
          'error file-missing $.presentation_stage.feature_large_image.sizes.sm.url',
          'error file-missing $.presentation_stage.body[9].value.banner.image.sizes.sm.url',
          'error file-missing $.presentation_stage.body[11].value.news_entries[0].thumbnail.sizes.sm.url',
        ].sort(),
      );
    } finally {
      await server.close();
    }
  });
});

describe('targets, reporters and exit codes', () => {
  let api: FixtureServer;
  beforeAll(async () => {
    api = await startFixtureServer();
  });
  afterAll(() => api.close());

  it('page ids from --base-url, and - for standard input', async () => {
    expect((await check('101', '--base-url', api.base('ok'))).code).toBe(0);
    const defect = await check('101', '--base-url', api.base('defect'));
    expect(defect.code).toBe(1);
    expect(defect.stdout).toMatch(/error +\$\.presentation_stage\.thumbnail\.sizes\.md {2}\[image-aspect\]/);
    const piped = await runCli(['check', '-'], { input: await readFile(VALID, 'utf8') });
    expect(piped.code).toBe(0);
    expect(piped.stdout).toMatch(/no findings/);
  });

  it('junit, github and json reporters; --output writes a file', async () => {
    const dir = await tempDir();
    const variant = loadVariants().find((v) => v.name === 'image-aspect')!;
    const file = path.join(dir, 'page.json');
    await writeFile(file, JSON.stringify(variant.page));
    const junit = await check(file, VALID, '--reporter', 'junit');
    expect(junit.code).toBe(1);
    expect(junit.stdout).toMatch(/^<\?xml version="1\.0" encoding="UTF-8"\?>\n<testsuites name="content-api check">\n/);
    expect(junit.stdout).toContain(`<testsuite name="${file}" tests="1" failures="1" errors="0" skipped="0">`);
    expect(junit.stdout).toContain(
      `<testcase classname="${file}" name="$.presentation_stage.thumbnail.sizes.md [image-aspect]">`,
    );
    expect(junit.stdout).toContain(
      '<failure type="error:image-aspect" message="md is 1200x700, not the aspect ratio of 2560x1600">',
    );
    const github = await check(file, '--reporter', 'github');
    // The page file is on one line (JSON.stringify): the column points at the key "md".
    const oneLine = JSON.stringify(variant.page);
    const column = oneLine.indexOf('"md":{"width":1200,"height":700') + 1; // the variant's defect, found once
    expect(column).toBeGreaterThan(0);
    expect(oneLine.lastIndexOf('"md":{"width":1200,"height":700') + 1).toBe(column);
    expect(github.stdout.trim()).toBe(
      `::error file=${file},line=1,col=${column},title=content-api image-aspect::` +
        '$.presentation_stage.thumbnail.sizes.md: md is 1200x700, not the aspect ratio of 2560x1600',
    );
    // Pretty-printed, the line is that of the key "md" in presentation_stage.thumbnail.sizes.
    const pretty = JSON.stringify(variant.page, null, 2);
    await writeFile(file, pretty);
    const lines = pretty.split('\n');
    const stage = lines.indexOf('  "presentation_stage": {');
    const md = lines.findIndex(
      (line, i) =>
        line === '        "md": {' &&
        lines[i + 1]!.trim() === '"width": 1200,' &&
        lines[i + 2]!.trim() === '"height": 700,',
    );
    expect(stage * md).toBeGreaterThan(0);
    expect((await check(file, '--reporter', 'github')).stdout).toContain(
      `::error file=${file},line=${md + 1},col=9,title=content-api image-aspect::`,
    );
    const out = path.join(dir, 'report.xml');
    const written = await check(file, '--reporter', 'junit', '--output', out);
    expect(written.stdout).toBe('');
    expect(written.stderr).toMatch(/junit report written to .*report\.xml: 1 error\(s\), 0 warning\(s\)/);
    expect(await readFile(out, 'utf8')).toContain('<testsuites');
  });

  it('warnings fail unless --max-warnings allows them; bad targets exit 2', async () => {
    const dir = await tempDir();
    const variant = loadVariants().find((v) => v.name === 'valid-exhibitions-list')!;
    const file = path.join(dir, 'page.json');
    await writeFile(file, JSON.stringify(variant.page));
    expect((await check(file)).code).toBe(1);
    const allowed = await check(file, '--max-warnings', '1');
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toMatch(/warning +\$\.presentation_stage\.body\[14\]\.type/); // still reported
    expect((await check(path.join(dir, 'nope.json'))).code).toBe(2);
    expect((await check('101')).stderr).toMatch(/Expected --base-url/);
    const unwritable = await check(file, '--output', path.join(dir, 'no-such-folder', 'report.xml'));
    expect(unwritable.stderr).toBe(
      `error: --output ${path.join(dir, 'no-such-folder', 'report.xml')}: ` +
        `cannot write (no folder ${path.join(dir, 'no-such-folder')})\n`,
    );
    expect(unwritable.code).toBe(2);
    await mkdir(path.join(dir, 'broken'));
    await writeFile(path.join(dir, 'broken', 'bad.json'), '{"id": ');
    await copyFile(VALID, path.join(dir, 'broken', 'good.json'));
    const broken = await check(path.join(dir, 'broken'), '--reporter', 'json');
    expect(broken.code).toBe(1);
    expect(findings(broken.stdout)).toEqual(['error page-json $']);

    // Nothing to check, or no files where --verify-files points: could not run, not a pass or a finding per file.
    await mkdir(path.join(dir, 'empty'));
    const empty = await check(path.join(dir, 'empty'));
    expect(empty.stderr).toBe(`error: ${path.join(dir, 'empty')}: no .json files in this folder\n`);
    expect(empty.code).toBe(2);
    for (const [where, reason] of [
      [path.join(dir, 'no-media'), 'no such folder'],
      [file, 'is a file, not a folder or an http(s) base URL'],
    ]) {
      const wrong = await check(VALID, '--verify-files', where!);
      expect(wrong.stderr).toBe(`error: --verify-files ${where}: ${reason}\n`);
      expect(wrong.code).toBe(2);
    }
  });
});
