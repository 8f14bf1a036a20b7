/**
 * `render --formats`, `--html`, `--sizes` and `--report` through the built binary: what a
 * front-end developer and an editor run.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { photo, writeImage } from '../fixtures/images.js';
import { tempDir } from '../fixtures/tmp.js';
import { versionedIn } from '../fixtures/versions.js';
import { runCli } from './run-cli.js';

async function originals() {
  const dir = await tempDir();
  await writeImage(dir, 'in/b-wide.jpg', photo(900, 500));
  await writeImage(dir, 'in/a-tall.png', photo(400, 700));
  return { dir, input: path.join(dir, 'in'), out: path.join(dir, 'media') };
}

describe('render --formats', () => {
  it('--json lists each format, the primary first, with its bytes, and a placeholder', async () => {
    const { input, out } = await originals();
    const run = await runCli(['render', input, '--out', out, '--formats', 'keep,webp', '--json']);
    expect(run.code).toBe(0);
    const { results } = JSON.parse(run.stdout);
    expect(results.map((r: { format: string }) => r.format)).toEqual(['png', 'jpeg']);
    for (const result of results) {
      expect(result.alternates).toHaveLength(1);
      const [webp] = result.alternates;
      expect(webp).toMatchObject({ format: 'webp', type: 'image/webp' });
      expect(webp.files).toHaveLength(5);
      for (const file of webp.files) expect(file).toMatch(new RegExp(`^${out}/.*\\.webp$`));
      const sizes = await Promise.all([...new Set<string>(webp.files)].map(async (file) => (await stat(file)).size));
      expect(webp.bytes).toBe(sizes.reduce((sum, size) => sum + size, 0));
      expect(result.placeholder.color).toMatch(/^#[0-9a-f]{6}$/);
    }
  });

  it('--format and --formats together, or a format twice: one line, exit 2', async () => {
    const { input, out } = await originals();
    const both = await runCli(['render', input, '--out', out, '--format', 'webp', '--formats', 'keep']);
    expect([both.code, both.stderr.trim()]).toEqual([2, 'error: --format and --formats do not go together: give one']);
    const twice = await runCli(['render', input, '--out', out, '--formats', 'webp,keep,webp']);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain(
      'Expected a comma-separated list of keep, jpeg, png, webp, avif, each at most once for the formats ' +
        "but got 'webp,keep,webp'",
    );
    await expect(stat(out)).rejects.toThrow(/ENOENT/);
  });

  it('a dry run lists the alternates too', async () => {
    const { input, out } = await originals();
    const run = await runCli(['render', input, '--out', out, '--formats', 'keep,avif', '--dry-run']);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(20);
    expect(lines.filter((line) => /^would write\t.*\.avif\t\d+x\d+$/.test(line))).toHaveLength(10);
  });
});

describe('render --html', () => {
  it('prints the markup in the order of the inputs, up-to-date images too', async () => {
    const { dir, out } = await originals();
    const inputs = [path.join(dir, 'in/b-wide.jpg'), path.join(dir, 'in/a-tall.png')];
    const first = await runCli(['render', ...inputs, '--out', out, '--formats', 'keep,webp', '--html']);
    expect(first.code).toBe(0);
    const again = await runCli(['render', ...inputs, '--out', out, '--formats', 'keep,webp', '--html']);
    expect(again.stderr).toContain('0 rendered, 2 up to date');
    expect(again.stdout).toBe(first.stdout);
    const pictures = first.stdout.trim().split('</picture>\n');
    expect(pictures).toHaveLength(2);
    const url = (file: string) => versionedIn(out, `/media/${file}`);
    expect(pictures[0]).toContain(
      `<source type="image/webp" srcset="${await url('b-wide.max-300x300.webp')} 300w, ` +
        `${await url('b-wide.max-600x600.webp')} 600w`,
    );
    expect(pictures[0]).toContain(`<img src="${await url('b-wide.max-1200x1200.jpg')}"`);
    expect(pictures[1]).toContain(`<img src="${await url('a-tall.max-1200x1200.png')}"`);
    expect(first.stdout).toContain('sizes="auto, 100vw"');
  });

  it('warns once for the batch about images without alt text (alt="" marks them decorative), not with it', async () => {
    const { dir, input, out } = await originals();
    const without = await runCli(['render', input, '--out', out, '--html']);
    expect(without.code).toBe(0);
    const warnings = without.stderr.split('\n').filter((line) => line.includes('alt text'));
    expect(warnings).toEqual([
      'warning: 2 of 2 image(s) have no alt text: their markup says alt="", which marks an image as decorative ' +
        '(screen readers skip it); give each its text with --alt-text <file>',
    ]);
    const texts = path.join(dir, 'alt.json');
    await writeFile(texts, JSON.stringify({ 'b-wide.jpg': 'A wide photograph' }));
    const some = await runCli(['render', input, '--out', out, '--html', '--alt-text', texts]);
    expect(some.stderr).toContain('warning: 1 of 2 image(s) have no alt text');
    await writeFile(texts, JSON.stringify({ 'b-wide.jpg': 'A wide photograph', 'a-tall.png': 'A tall one' }));
    const all = await runCli(['render', input, '--out', out, '--html', '--alt-text', texts]);
    expect([all.code, all.stderr]).toEqual([0, expect.not.stringContaining('alt text')]);
    // Not a markup run: nothing to say.
    expect((await runCli(['render', input, '--out', out])).stderr).not.toContain('alt text');
  });

  it('a transparent PNG with a JPEG alternate: the flattened JPEG is never offered, said once; added later too', async () => {
    const dir = await tempDir();
    const input = await writeImage(dir, 'in/cut-out.png', photo(400, 300, 4));
    const out = path.join(dir, 'media');
    const offered = (html: string) => [...html.matchAll(/<source type="([^"]+)"/g)].map((match) => match[1]);
    const flattened =
      'its jpeg alternate renditions are flattened onto white, where its png ones keep its transparency: ' +
      'markup leaves them out, as a browser would show them instead';
    const all = await runCli(['render', input, '--out', out, '--formats', 'keep,jpeg,webp', '--html']);
    expect(all.code).toBe(0);
    expect(offered(all.stdout)).toEqual(['image/webp']);
    expect(all.stdout).not.toContain('style=');
    expect(all.stderr.split('\n').filter((line) => line.includes('flattened'))).toEqual([
      `warning: ${input}: ${flattened}`,
    ]);
    // The JPEGs added to an output that had the PNG and WebP: the placeholder stays the transparent one.
    const later = path.join(dir, 'later');
    expect((await runCli(['render', input, '--out', later, '--formats', 'keep,webp'])).code).toBe(0);
    const added = await runCli(['render', input, '--out', later, '--formats', 'keep,webp,jpeg', '--json']);
    const [result] = JSON.parse(added.stdout).results;
    expect(result.placeholder.transparent).toBe(true);
    const again = await runCli(['render', input, '--out', later, '--formats', 'keep,webp,jpeg', '--html']);
    expect(again.stderr).toContain('0 rendered, 1 up to date');
    expect(offered(again.stdout)).toEqual(['image/webp']);
    expect(again.stdout).not.toContain('style=');
  });

  it('--sizes sets the attribute; --html with --json or --dry-run, or --sizes alone, is refused', async () => {
    const { input, out } = await originals();
    const sized = await runCli(['render', input, '--out', out, '--html', '--sizes', '(min-width: 800px) 50vw, 100vw']);
    expect(sized.stdout).toContain('sizes="(min-width: 800px) 50vw, 100vw"');
    expect(sized.stdout).not.toContain('<picture>'); // one format: the <img> alone
    const json = await runCli(['render', input, '--out', out, '--html', '--json']);
    expect([json.code, json.stderr.trim()]).toEqual([
      2,
      'error: --html and --json both want standard output: give one',
    ]);
    // A dry run's markup would not be the run's: no versions, no placeholder, heavier alternates offered.
    const dry = await runCli(['render', input, '--out', out, '--html', '--dry-run']);
    expect([dry.code, dry.stdout]).toEqual([2, '']);
    expect(dry.stderr.trim()).toBe(
      'error: --html prints the markup of the files written, which --dry-run does not write: drop one (--dry-run lists them)',
    );
    const alone = await runCli(['render', input, '--out', out, '--sizes', '100vw']);
    expect([alone.code, alone.stderr.trim()]).toEqual([2, 'error: --sizes applies only with --html']);
  });
});

describe('render --report', () => {
  it('writes the contact sheet, and refuses a folder that cannot take it before rendering', async () => {
    const { dir, input, out } = await originals();
    const sheet = path.join(dir, 'report.html');
    const run = await runCli(['render', input, '--out', out, '--formats', 'keep,webp', '--report', sheet]);
    expect(run.code).toBe(0);
    const html = await readFile(sheet, 'utf8');
    expect(html).toMatch(/^<!doctype html>/i);
    expect(html).toContain('b-wide.jpg');
    expect((html.match(/<img [^>]*src="data:image\//g) ?? []).length).toBeGreaterThanOrEqual(10);
    const nowhere = await runCli(['render', input, '--out', out, '--report', path.join(dir, 'no/such/report.html')]);
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toContain('--report');
  });

  it('never replaces a folder, an input or a file of the output folder (exit 2, nothing written)', async () => {
    const { dir, input, out } = await originals();
    const original = path.join(input, 'b-wide.jpg');
    const refused: Array<[string, string]> = [
      // A device is written through, a link to a file refused: test/hostile/output-targets.test.ts.
      [dir, `--report ${dir}: cannot write (it is a folder)`],
      [original, `--report ${original}: it is among the inputs (${input}); write it elsewhere`],
      [path.join(out, 'report.html'), `--report ${path.join(out, 'report.html')}: it is in the output folder`],
      ['', '--report : cannot write (no file named)'],
    ];
    for (const [file, message] of refused) {
      const run = await runCli(['render', input, '--out', out, '--report', file]);
      expect([run.code, run.stderr]).toEqual([2, expect.stringContaining(message)]);
    }
    await expect(stat(out)).rejects.toThrow(/ENOENT/);
    expect((await stat(original)).size).toBeGreaterThan(0);
  });
});
