/**
 * A manifest record edited by someone else (a shared folder or bucket) costs that record and no
 * more: a placeholder that is not a hex colour and a data URI never reaches `--json` or `--html`
 * (the record is named, its original rendered again); a fingerprint that cannot be read is a
 * finding on its file in `check`, not the end of the run.
 */
import { readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MANIFEST_FILE } from '../../src/renditions/manifest.js';
import { runCli } from '../cli/run-cli.js';
import { photo, writeImage } from '../fixtures/images.js';
import { mkfifo } from '../fixtures/launcher.js';
import { recordFile } from '../fixtures/manifest.js';
import { tempDir } from '../fixtures/tmp.js';

/** What the tests edit of a record's entry. */
interface EditableEntry {
  placeholder: { color: string; preview: string };
  kept?: string[];
  renditions: Record<string, { fingerprint?: string; path?: string }>;
}

/** Two originals rendered into `media`, and a way to edit the record of `a.jpg`. */
async function rendered() {
  const dir = await tempDir();
  const originals = path.join(dir, 'in');
  await writeImage(originals, 'a.jpg', photo(320, 200).jpeg());
  await writeImage(originals, 'b.jpg', photo(200, 320).jpeg());
  const media = path.join(dir, 'media');
  const first = await runCli(['render', originals, '--out', media, '--json']);
  expect(first.code).toBe(0);
  const record = recordFile(media, 'a.jpg');
  const edit = async (change: (entry: EditableEntry) => void) => {
    const stored = JSON.parse(await readFile(record, 'utf8'));
    change(stored.entry);
    await writeFile(record, JSON.stringify(stored));
  };
  const page = JSON.parse(first.stdout);
  // The Images as a page `check` reads (a bare list: schema findings, which the tests leave aside).
  const pageFile = path.join(dir, 'page.json');
  await writeFile(pageFile, JSON.stringify({ id: 1, images: page.results.map((r: { image: unknown }) => r.image) }));
  /** `check` of that page against `media`: its exit code, its file findings, its stderr. */
  const check = async () => {
    const result = await runCli(['check', pageFile, '--verify-files', media, '--reporter', 'json']);
    const problems = result.code === 2 ? [] : JSON.parse(result.stdout).pages[0].problems;
    const files = problems.filter((problem: { rule: string }) => problem.rule.startsWith('file-'));
    return { ...result, files: files as Array<{ path: string; rule: string; message: string }> };
  };
  return { dir, originals, media, record, edit, page, check };
}

describe('a hostile manifest record', () => {
  it.each([
    ['a colour that is CSS', { color: 'red;background:url(//evil.example/x)' }, 'evil.example'],
    ['a preview that is a remote URL', { preview: 'https://evil.example/x.webp' }, 'evil.example'],
    // Within the record's 1 MiB: it would be copied into every page's markup and contact sheet.
    [
      'a preview of a million characters',
      { preview: `data:image/webp;base64,${'QUFB'.repeat(250_000)}` },
      'QUFB'.repeat(300),
    ],
  ])(
    'with a placeholder holding %s: named, its original rendered again, the value never output',
    async (_, bad, mark) => {
      const { originals, media, record, edit } = await rendered();
      await edit((entry) => Object.assign(entry.placeholder, bad));
      const html = await runCli(['render', originals, '--out', media, '--html']);
      expect(html.code).toBe(0);
      expect(html.stdout.includes(mark)).toBe(false); // not toContain: its failure would print a million characters
      expect(html.stdout.match(/<picture>|<img /g)?.length).toBeGreaterThanOrEqual(2);
      expect(html.stderr).toContain(`${record}: not a valid manifest record ($.entry.placeholder.`);
      expect(html.stderr).not.toContain('more record(s) like it'); // one record, said once though read twice
      expect(html.stderr).toMatch(/1 rendered, 1 up to date/);
      // Recorded anew: the next run has nothing to say and nothing to render.
      const json = await runCli(['render', originals, '--out', media, '--json']);
      expect(json.code).toBe(0);
      expect(json.stdout.includes(mark)).toBe(false);
      expect(json.stderr).not.toContain('not a valid manifest record');
      const statuses = JSON.parse(json.stdout).results.map((result: { status: string }) => result.status);
      expect(statuses).toEqual(['skipped', 'skipped']);
    },
  );

  it('with a fingerprint that cannot be read: a finding on that file in check, the others checked', async () => {
    const { dir, media, edit, page } = await rendered();
    await edit((entry) => {
      entry.renditions.md!.fingerprint = 'f1:xyz';
    });
    const file = path.join(dir, 'page.json');
    await writeFile(file, JSON.stringify({ id: 1, images: page.results.map((r: { image: unknown }) => r.image) }));
    const report = path.join(dir, 'report.xml');
    const result = await runCli(['check', file, '--verify-files', media, '--reporter', 'junit', '-o', report]);
    expect(result.code).toBe(1);
    const junit = await readFile(report, 'utf8');
    const md = path.join(media, 'a.max-1200x1200.jpg');
    expect(junit).toContain(`${md} cannot be compared with its record: the fingerprint its manifest record (a.jpg)`);
    expect(junit).toContain('malformed fingerprint');
    // The page is a bare list of Images (schema findings): of the files, only that one is a finding.
    expect(junit.match(/<testcase [^>]*name="[^"]*\[file-/g)).toHaveLength(1);
  });

  it.each([
    ['cut short', (file: string) => writeFile(file, '{"version":1,"entry":{"sou')],
    [
      'a FIFO',
      async (file: string) => {
        await rm(file);
        await mkfifo(file);
      },
    ],
    ['nested 200,000 deep', (file: string) => writeFile(file, '['.repeat(200_000))],
  ])('%s: a finding on its image in check naming the record, and no other', async (_, spoil) => {
    const { record, check } = await rendered();
    const before = await check();
    expect(before.code).toBe(1); // the schema findings of a bare list
    expect(before.files).toEqual([]);
    await spoil(record);
    const after = await check();
    expect(after.code).toBe(1);
    expect(after.files).toEqual([
      {
        severity: 'error',
        path: '$.images[0]',
        rule: 'file-picture',
        message: expect.stringMatching(
          new RegExp(
            `^its manifest record ${record.replaceAll('.', '\\.')} cannot be read \\(.+\\): the files of a\\.jpg are not compared`,
          ),
        ),
      },
    ]);
  });
});

describe('a record naming a file out of the output folder', () => {
  it('is not a record: named, its original rendered again, nothing out of the folder removed or read', async () => {
    const { dir, originals, media, record, edit, check } = await rendered();
    const outside = path.join(dir, 'outside.txt');
    await writeFile(outside, 'not a rendition');
    await edit((entry) => {
      entry.renditions.xs!.path = '../outside.txt';
    });
    const checked = await check();
    expect(checked.files).toEqual([
      expect.objectContaining({
        rule: 'file-picture',
        message: expect.stringContaining(`its manifest record ${record} cannot be read (not a valid manifest record`),
      }),
    ]);
    const pruned = await runCli(['render', originals, '--out', media, '--prune']);
    expect(pruned.code).toBe(0);
    expect(pruned.stderr).toContain(
      `${record}: not a valid manifest record ($.entry.renditions.xs.path: expected a path below the output folder)`,
    );
    expect(await readFile(outside, 'utf8')).toBe('not a rendition');
  });
});

describe("a record naming another image's files, or the tool's own, in the output folder", () => {
  it.each([
    [
      'kept',
      (entry: EditableEntry) =>
        Object.assign(entry, { kept: ['b.max-300x300.jpg', '.content-api-manifest/b.jpg.json'] }),
      '$.entry.kept[0]',
      'b.max-300x300.jpg',
    ],
    [
      'a rendition',
      (entry: EditableEntry) => Object.assign(entry.renditions.lg!, { path: 'index.html' }),
      '$.entry.renditions.lg.path',
      'index.html',
    ],
  ])('in %s: is not a record, and --prune removes nothing of theirs', async (_, change, at, file) => {
    const { originals, media, record, edit } = await rendered();
    await writeFile(path.join(media, 'index.html'), '<!doctype html><p>the site</p>');
    const theirs = ['b.max-300x300.jpg', '.content-api-manifest/b.jpg.json', 'index.html'].map((name) =>
      path.join(media, name),
    );
    const before = await Promise.all(theirs.map((name) => readFile(name)));
    await edit(change);
    // The format no longer listed: what the record names is stale, for --prune to remove.
    const pruned = await runCli([
      'render',
      path.join(originals, 'a.jpg'),
      '--out',
      media,
      '--format',
      'webp',
      '--prune',
    ]);
    expect(pruned.code).toBe(0);
    expect(pruned.stderr).toContain(
      `${record}: not a valid manifest record (${at}: '${file}' is not a rendition of a)`,
    );
    expect(await Promise.all(theirs.map((name) => readFile(name)))).toEqual(before);
  });
});

describe('a one-file manifest that cannot be read', () => {
  it.each([
    ['a link to /dev/zero', (file: string) => symlink('/dev/zero', file), 'a device, not a file'],
    ['cut short', (file: string) => writeFile(file, '{"version":1,"entries":{"a'), 'not a valid manifest (not JSON'],
  ])('(%s): check stops (exit 2) naming it, as render does, never passes for no findings', async (_, spoil, reason) => {
    const { media, check } = await rendered();
    const manifest = path.join(media, MANIFEST_FILE);
    await spoil(manifest);
    const result = await check();
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${manifest}: ${reason}`);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });
});
