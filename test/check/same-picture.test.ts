/**
 * `check --verify-files`' same-picture rule (`file-picture`), on renditions `render` wrote from the
 * samples: no finding on what render wrote, nor on a re-encode at another quality; a swapped, stale,
 * rotated or wrongly colour-converted rendition is one, naming the file, with the manifest's record
 * and without it (renditions compared with one another).
 */
import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { MANIFEST_RECORDS } from '../../src/renditions/manifest.js';
import { renderOriginals } from '../../src/renditions/render.js';
import { runCli } from '../cli/run-cli.js';
import { startS3 } from '../fixtures/s3.js';
import { tempDir } from '../fixtures/tmp.js';

const SAMPLES = path.resolve(import.meta.dirname, '../../samples/originals');

/** Ladybird (2560x1600) and raindrops (1920x1200): two photographs of the same aspect, rendered. */
async function rendered() {
  const dir = await tempDir();
  const media = path.join(dir, 'media');
  // An edited ladybird (a block painted over a fifth of it), rendered apart: its files are "stale".
  const edited = path.join(dir, 'edited', 'ladybird.jpg');
  await mkdir(path.dirname(edited));
  await sharp(path.join(SAMPLES, 'ladybird.jpg'))
    .composite([
      { input: { create: { width: 900, height: 700, channels: 3, background: '#2050d0' } }, left: 200, top: 300 },
    ])
    .jpeg({ quality: 90 })
    .toFile(edited);
  const report = await renderOriginals([path.join(SAMPLES, 'ladybird.jpg'), path.join(SAMPLES, 'raindrops.webp')], {
    outDir: media,
  });
  expect(report.failures).toEqual([]);
  const old = await renderOriginals([edited], { outDir: path.join(dir, 'old') });
  const page = { id: 1, images: report.results.map((r) => r.image) };
  const file = path.join(dir, 'page.json');
  await writeFile(file, JSON.stringify(page));
  const at = (name: string) => path.join(media, name);
  return { dir, media, file, at, old: path.join(dir, 'old', old.results[0]!.files.lg.path) };
}

async function pictureFindings(file: string, media: string) {
  const result = await runCli(['check', file, '--verify-files', media, '--reporter', 'json']);
  const problems = JSON.parse(result.stdout).pages[0].problems as Array<{
    rule: string;
    path: string;
    message: string;
  }>;
  return problems.filter((p) => p.rule.startsWith('file-'));
}

describe('check --verify-files: the same-picture rule', () => {
  it('no finding on what render wrote, nor on a rendition re-encoded at another quality', async () => {
    const { file, media, at } = await rendered();
    expect(await pictureFindings(file, media)).toEqual([]);
    const md = at('ladybird.max-1200x1200.jpg');
    const again = await sharp(md).jpeg({ quality: 35 }).toBuffer();
    await writeFile(md, again);
    // The same picture; but other bytes than its URL's version names (file-version).
    expect((await pictureFindings(file, media)).map((f) => `${f.rule} ${f.path}`)).toEqual([
      'file-version $.images[0].sizes.md.url',
    ]);
  });

  for (const withManifest of [true, false]) {
    it(`swapped, stale, rotated and wrongly colour-converted renditions are findings (${
      withManifest ? 'against the manifest' : 'no manifest: against one another'
    })`, async () => {
      const { file, media, at, old } = await rendered();
      // Swapped: raindrops' 600x375 pixels under ladybird's sm name (re-encoded, as a JPEG).
      await sharp(at('raindrops.max-600x600.webp'))
        .jpeg()
        .toFile(`${at('ladybird.max-600x600.jpg')}.tmp`);
      await copyFile(`${at('ladybird.max-600x600.jpg')}.tmp`, at('ladybird.max-600x600.jpg'));
      await rm(`${at('ladybird.max-600x600.jpg')}.tmp`);
      // Stale: the edited original's 2400 px rendition in place of ladybird's.
      await copyFile(old, at('ladybird.max-2400x2400.jpg'));
      // Rotated half a turn (same size): raindrops' 1200 px rendition.
      await writeFile(
        at('raindrops.max-1200x1200.webp'),
        await sharp(at('raindrops.max-1200x1200.webp')).rotate(180).webp().toBuffer(),
      );
      // Colours converted wrongly: raindrops' 300 px rendition with red and blue swapped.
      const xs = await sharp(at('raindrops.max-300x300.webp')).raw().toBuffer({ resolveWithObject: true });
      for (let i = 0; i < xs.data.length; i += xs.info.channels)
        [xs.data[i], xs.data[i + 2]] = [xs.data[i + 2]!, xs.data[i]!];
      await writeFile(at('raindrops.max-300x300.webp'), await sharp(xs.data, { raw: xs.info }).webp().toBuffer());
      if (!withManifest) await rm(path.join(media, MANIFEST_RECORDS), { recursive: true });

      const found = await pictureFindings(file, media);
      // Each also has other bytes than its URL's version names (file-version, manifest or not).
      expect(found.map((f) => `${f.rule} ${f.path}`).sort()).toEqual([
        'file-picture $.images[0].sizes.lg.url',
        'file-picture $.images[0].sizes.sm.url',
        'file-picture $.images[1].sizes.md.url',
        'file-picture $.images[1].sizes.xs.url',
        'file-version $.images[0].sizes.lg.url',
        'file-version $.images[0].sizes.sm.url',
        'file-version $.images[1].sizes.md.url',
        'file-version $.images[1].sizes.xs.url',
      ]);
      const said = (key: string, name: string) =>
        found.find((f) => f.rule === 'file-picture' && f.path.endsWith(`.${key}.url`) && f.message.includes(name));
      expect(said('sm', 'ladybird.max-600x600.jpg')!.message).toMatch(/another picture/);
      expect(said('md', 'raindrops.max-1200x1200.webp')!.message).toMatch(/rotated 180/);
      expect(said('xs', 'raindrops.max-300x300.webp')!.message).toMatch(/colou?rs?/i);
      expect(said('lg', 'ladybird.max-2400x2400.jpg')).toBeDefined();
      if (withManifest) {
        for (const finding of found.filter((f) => f.rule === 'file-picture'))
          expect(finding.message).toContain('is not the picture render recorded');
      }
    });
  }

  it("in a bucket: each rendition against the bucket's records", async () => {
    const s3 = await startS3(['pictures']);
    try {
      const dir = await tempDir();
      const outDir = 's3://pictures/site/media/';
      const env = s3.env;
      const run = await runCli(
        ['render', path.join(SAMPLES, 'ladybird.jpg'), path.join(SAMPLES, 'raindrops.webp'), '--out', outDir, '--json'],
        { env },
      );
      expect(run.code, run.stderr).toBe(0);
      const file = path.join(dir, 'page.json');
      const results = JSON.parse(run.stdout).results as Array<{ image: object }>;
      await writeFile(file, JSON.stringify({ id: 1, images: results.map((r) => r.image) }));
      const verify = async () => {
        const result = await runCli(['check', file, '--verify-files', outDir, '--reporter', 'json'], { env });
        return (
          JSON.parse(result.stdout).pages[0].problems as Array<{ rule: string; path: string; message: string }>
        ).filter((p) => p.rule.startsWith('file-'));
      };
      expect(await verify()).toEqual([]);
      // Raindrops' 1200 px rendition mirrored, put back under its own key.
      const key = 'site/media/raindrops.max-1200x1200.webp';
      await s3.put(
        'pictures',
        key,
        await sharp(await s3.get('pictures', key))
          .flop()
          .webp()
          .toBuffer(),
      );
      const found = await verify();
      expect(found.map((f) => `${f.rule} ${f.path}`)).toEqual([
        'file-picture $.images[1].sizes.md.url',
        'file-version $.images[1].sizes.md.url',
      ]);
      expect(found[0]!.message).toMatch(
        /^s3:\/\/pictures\/site\/media\/raindrops\.max-1200x1200\.webp is not the picture render recorded: mirrored/,
      );
    } finally {
      await s3.close();
    }
  });
});
