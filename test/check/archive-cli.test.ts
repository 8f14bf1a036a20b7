/**
 * `content-api check --verify-files <folder | s3://bucket/prefix/>` without page targets, through
 * the real binary: exit 0 on a clean archive, 1 with findings (through every reporter, the JSON
 * one's shape in full), 2 with one line when there is no archive to check: no manifest, or one
 * that cannot be used (a FIFO, a link to /dev/zero, cut short, over the size cap), no place at
 * all, or a server (which lists no manifest). Real renders of small originals; a real s3rver.
 */
import { readFile, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import AjvDraft04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORTER_NAMES } from '../../src/check/reporters/index.js';
import { MANIFEST_FILE, MANIFEST_RECORDS } from '../../src/renditions/manifest.js';
import { renderOriginals } from '../../src/renditions/render.js';
import { runCli, runWithin } from '../cli/run-cli.js';
import { photo, writeImage } from '../fixtures/images.js';
import { mkfifo } from '../fixtures/launcher.js';
import { applyEnv, startS3, type TestS3 } from '../fixtures/s3.js';
import { tempDir } from '../fixtures/tmp.js';

const require = createRequire(import.meta.url);
const SARIF_SCHEMA = require.resolve('@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json');

let s3: TestS3;
let prefixes = 0;

beforeAll(async () => {
  s3 = await startS3(['archive-cli']);
  applyEnv(s3.env);
});

afterAll(async () => {
  await s3.close();
});

const check = (...args: string[]) => runCli(['check', ...args], { env: s3.env });

/** One small original rendered as JPEG and WebP into `location`. */
async function rendered(location: string): Promise<void> {
  const originals = await tempDir();
  await writeImage(originals, 'meadow.jpg', photo(700, 438).jpeg());
  const report = await renderOriginals([originals], { outDir: location, formats: ['keep', 'webp'] });
  expect(report.failures).toEqual([]);
}

async function renderedFolder(): Promise<string> {
  const media = path.join(await tempDir(), 'media');
  await rendered(media);
  return media;
}

describe('check --verify-files <folder> without pages', () => {
  it('a clean archive: exit 0, the records and files counted', async () => {
    const media = await renderedFolder();
    const result = await check('--verify-files', media);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(
      /^2 manifest record\(s\), 10 files probed \(\d+\.\d KiB read per file\): no findings\n$/,
    );
    expect(result.code).toBe(0);
  });

  it('a missing file: exit 1, and the JSON report names the record, the rendition and the file', async () => {
    const media = await renderedFolder();
    await rm(path.join(media, 'meadow.max-300x300.webp'));
    const result = await check('--verify-files', media, '--reporter', 'json');
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout);
    const sizes = (ext: string) => ({
      xs: {
        width: 300,
        height: 188,
        url: `/media/meadow.max-300x300.${ext}`,
        src: path.join(media, `meadow.max-300x300.${ext}`),
      },
      sm: {
        width: 600,
        height: 375,
        url: `/media/meadow.max-600x600.${ext}`,
        src: path.join(media, `meadow.max-600x600.${ext}`),
      },
      md: {
        width: 700,
        height: 438,
        url: `/media/meadow.max-1200x1200.${ext}`,
        src: path.join(media, `meadow.max-1200x1200.${ext}`),
      },
      lg: {
        width: 700,
        height: 438,
        url: `/media/meadow.max-2400x2400.${ext}`,
        src: path.join(media, `meadow.max-2400x2400.${ext}`),
      },
      xl: {
        width: 700,
        height: 438,
        url: `/media/meadow.max-4800x4800.${ext}`,
        src: path.join(media, `meadow.max-4800x4800.${ext}`),
      },
    });
    expect(report).toEqual({
      pages: [
        {
          source: path.join(media, 'meadow.jpg'),
          record: 'meadow.jpg',
          problems: [],
          baselined: [],
          images: [{ path: '$.renditions', sizes: sizes('jpg') }],
        },
        {
          source: path.join(media, 'meadow.webp'),
          record: 'meadow.webp',
          problems: [
            {
              severity: 'error',
              path: '$.renditions.xs.path',
              rule: 'file-missing',
              message: `${path.join(media, 'meadow.max-300x300.webp')} does not exist`,
            },
          ],
          baselined: [],
          images: [{ path: '$.renditions', sizes: sizes('webp') }],
        },
      ],
      records: 2,
      images: 2,
      files: { probed: 10, bytesRead: expect.any(Number) },
      errors: 1,
      warnings: 0,
      ignored: 0,
      baselined: 0,
      fixed: [],
    });
  });

  it('every reporter reports a finding of the archive (exit 1)', async () => {
    const media = await renderedFolder();
    await rm(path.join(media, 'meadow.max-600x600.jpg'));
    for (const reporter of REPORTER_NAMES) {
      const result = await check('--verify-files', media, '--reporter', reporter);
      expect([result.code, result.stderr], reporter).toEqual([1, '']);
      expect(result.stdout, reporter).toContain('meadow.max-600x600.jpg');
      expect(result.stdout, reporter).toContain('file-missing');
    }
  });

  it('a baseline and the config file apply to records as to pages', async () => {
    const media = await renderedFolder();
    await rm(path.join(media, 'meadow.max-600x600.jpg'));
    const dir = path.dirname(media);
    const baseline = path.join(dir, 'archive-baseline.json');
    expect((await check('--verify-files', media, '--update-baseline', baseline)).code).toBe(0);
    expect(JSON.parse(await readFile(baseline, 'utf8')).findings).toEqual([
      { page: 'media/meadow.jpg', rule: 'file-missing', path: '$.renditions.sm.path' },
    ]);
    const accepted = await check('--verify-files', media, '--baseline', baseline);
    expect(accepted.stdout).toMatch(/: no findings \(1 in the baseline\)\n$/);
    expect(accepted.code).toBe(0);
    const config = path.join(dir, 'content-api.config.json');
    await writeFile(config, JSON.stringify({ rules: { 'file-missing': 'warn' }, verifyFiles: 'media' }));
    const warned = await runCli(['check', '--max-warnings', '1'], { cwd: dir });
    expect(warned.stdout).toMatch(/2 manifest record\(s\), 10 files probed .*: 0 error\(s\), 1 warning\(s\)\n$/);
    expect(warned.code).toBe(0);
  });
});

describe('check --verify-files s3://bucket/prefix/ without pages', () => {
  it('clean: exit 0; a wrong-size file: exit 1, in SARIF with the record as an s3:// URI', async () => {
    const prefix = `run-${++prefixes}/media/`;
    const location = `s3://archive-cli/${prefix}`;
    await rendered(location);
    const clean = await check('--verify-files', location);
    expect(clean.stdout).toMatch(/^2 manifest record\(s\), 10 files probed .*: no findings\n$/);
    expect(clean.code).toBe(0);

    const sharp = (await import('sharp')).default;
    const key = `${prefix}meadow.max-1200x1200.webp`;
    await s3.put(
      'archive-cli',
      key,
      await sharp(await s3.get('archive-cli', key))
        .resize(600)
        .webp()
        .toBuffer(),
    );
    const result = await check('--verify-files', location, '--reporter', 'sarif');
    expect(result.code).toBe(1);
    const log = JSON.parse(result.stdout);
    const ajv = new AjvDraft04.default({ allErrors: true, strict: false, unicodeRegExp: false });
    addFormats.default(ajv);
    const validate = ajv.compile(JSON.parse(await readFile(SARIF_SCHEMA, 'utf8')));
    expect(validate(log), JSON.stringify(validate.errors, null, 2)).toBe(true);
    expect(log.runs[0].results).toEqual([
      expect.objectContaining({
        ruleId: 'file-size',
        message: { text: `$.renditions.md.path: s3://archive-cli/${key} is 600x375, the manifest records 700x438` },
        locations: [
          {
            physicalLocation: { artifactLocation: { uri: `${location}meadow.webp` } },
            logicalLocations: [{ fullyQualifiedName: '$.renditions.md.path', kind: 'member' }],
          },
        ],
      }),
    ]);
  });

  it('a prefix whose files have no manifest records: exit 2, one line', async () => {
    const prefix = `run-${++prefixes}/media/`;
    await s3.put('archive-cli', `${prefix}loose.jpg`, await photo(64, 48).jpeg().toBuffer());
    const result = await check('--verify-files', `s3://archive-cli/${prefix}`);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `error: --verify-files s3://archive-cli/${prefix}: holds no manifest (render writes one beside the renditions), ` +
        'so there is no archive to check; give page targets to check the files pages name\n',
    );
    expect(result.code).toBe(2);
  });
});

describe('no archive to check: exit 2, one line, no report', () => {
  const oneLine = (result: { code: number | null; stdout: string; stderr: string }, pattern: RegExp) => {
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n')).toHaveLength(2);
    expect(result.stderr).toMatch(pattern);
    expect(result.code).toBe(2);
  };

  it('a folder with files but no manifest', async () => {
    const media = path.join(await tempDir(), 'media');
    await writeImage(media, 'loose.jpg', photo(64, 48).jpeg());
    oneLine(
      await check('--verify-files', media, '--reporter', 'json'),
      /^error: --verify-files .*media: holds no manifest /,
    );
  });

  it.each([
    ['a FIFO', async (file: string) => mkfifo(file), /: a FIFO \(named pipe\), not a file\n$/],
    ['a link to /dev/zero', (file: string) => symlink('/dev/zero', file), /: a device, not a file\n$/],
    [
      'over the size cap',
      (file: string) => writeFile(file, '').then(() => truncate(file, 2 * 1024 * 1024)),
      /: larger than 1048576 bytes, the cap on a manifest record\n$/,
    ],
  ])('a manifest record that is %s', async (_, make, reason) => {
    const media = await renderedFolder();
    const file = path.join(media, MANIFEST_RECORDS, 'meadow.webp.json');
    await rm(file);
    await make(file);
    oneLine(
      await runWithin(['check', '--verify-files', media]),
      new RegExp(`^error: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}${reason.source}`),
    );
  });

  it('a manifest record cut short', async () => {
    const media = await renderedFolder();
    const file = path.join(media, MANIFEST_RECORDS, 'meadow.jpg.json');
    const text = await readFile(file);
    await writeFile(file, text.subarray(0, text.length - 40));
    oneLine(await check('--verify-files', media), /: not a valid manifest record \(not JSON \(.*\)\)\n$/);
  });

  it('a one-file manifest of an earlier version that is a FIFO', async () => {
    const media = await renderedFolder();
    const file = path.join(media, MANIFEST_FILE);
    await mkfifo(file);
    oneLine(
      await runWithin(['check', '--verify-files', media]),
      new RegExp(`^error: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: a FIFO \\(named pipe\\), not a file\n$`),
    );
  });

  it('no targets and no --verify-files', async () => {
    oneLine(
      await runCli(['check'], { cwd: await tempDir() }),
      /^error: missing required argument 'targets': give pages to check, or --verify-files /,
    );
  });

  it('a server as --verify-files (it lists no manifest)', async () => {
    oneLine(
      await check('--verify-files', 'http://127.0.0.1:9'),
      /^error: --verify-files http:\/\/127\.0\.0\.1:9: without page targets it takes a folder or s3:\/\/bucket\/prefix\//,
    );
  });
});
