/**
 * --update-baseline and --baseline through the real binary: today's findings recorded by
 * page, rule and JSON path (the same file from another working folder or run), only new
 * findings fail, fixed ones are listed as removable.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pageKey } from '../../src/check/baseline.js';
import { runCli } from '../cli/run-cli.js';
import { tempDir } from '../fixtures/tmp.js';
import { loadVariants } from '../page/variants.js';

const variant = (name: string) =>
  structuredClone(loadVariants().find((v) => v.name === name)!.page) as Record<string, any>;

describe('a baseline', () => {
  it("records today's findings, then fails only on new ones and lists the fixed ones", async () => {
    const dir = await tempDir();
    await mkdir(path.join(dir, 'pages', 'legacy'), { recursive: true });
    await writeFile(path.join(dir, 'pages', 'legacy', 'aspect.json'), JSON.stringify(variant('image-aspect')));
    await writeFile(path.join(dir, 'pages', 'legacy', 'key.json'), JSON.stringify(variant('unknown-key')));
    await mkdir(path.join(dir, 'ci'));

    const update = await runCli(['check', 'pages', '--update-baseline', 'ci/baseline.json'], { cwd: dir });
    expect(update.stderr).toBe('baseline written to ci/baseline.json: 2 finding(s) recorded\n');
    expect(update.code).toBe(0);
    const baseline = JSON.parse(await readFile(path.join(dir, 'ci', 'baseline.json'), 'utf8'));
    // Named relative to the baseline file, by rule and JSON path: no message, no absolute path, no order from the run.
    expect(baseline).toEqual({
      version: 1,
      findings: [
        { page: '../pages/legacy/aspect.json', rule: 'image-aspect', path: '$.presentation_stage.thumbnail.sizes.md' },
        { page: '../pages/legacy/key.json', rule: 'unknown-key', path: '$.presentation_stage.colour' },
      ],
    });
    // The same findings from another working folder give the same file.
    const again = await runCli(
      ['check', path.join(dir, 'pages'), '--update-baseline', path.join(dir, 'ci', 'again.json')],
      { cwd: path.join(dir, 'ci') },
    );
    expect(again.code).toBe(0);
    expect(await readFile(path.join(dir, 'ci', 'again.json'), 'utf8')).toBe(
      await readFile(path.join(dir, 'ci', 'baseline.json'), 'utf8'),
    );

    // Nothing new: exit 0, the known findings counted apart.
    const known = await runCli(['check', 'pages', '--baseline', 'ci/baseline.json'], { cwd: dir });
    expect(known.stdout).toBe('2 page(s), 36 image(s): no findings (2 in the baseline)\n');
    expect(known.code).toBe(0);

    // A new finding on a baselined page fails, alone; a fixed one is listed as removable.
    const page = variant('unknown-key');
    delete page.presentation_stage.colour;
    page.presentation_stage.thumbnail.srcset = page.presentation_stage.thumbnail.srcset.replace(' 300w', ' 301w');
    await writeFile(path.join(dir, 'pages', 'legacy', 'key.json'), JSON.stringify(page));
    const changed = await runCli(['check', 'pages', '--baseline', 'ci/baseline.json', '--reporter', 'json'], {
      cwd: dir,
    });
    expect(changed.code).toBe(1);
    const report = JSON.parse(changed.stdout);
    expect(report.pages.flatMap((p: { problems: Array<{ rule: string }> }) => p.problems.map((f) => f.rule))).toEqual([
      'image-srcset-width',
    ]);
    expect(report.pages.flatMap((p: { baselined: Array<{ rule: string }> }) => p.baselined.map((f) => f.rule))).toEqual(
      ['image-aspect'],
    );
    expect(report).toMatchObject({
      errors: 1,
      baselined: 1,
      fixed: [{ page: '../pages/legacy/key.json', rule: 'unknown-key', path: '$.presentation_stage.colour' }],
    });
    const text = await runCli(['check', 'pages', '--baseline', 'ci/baseline.json'], { cwd: dir });
    expect(text.stdout).toContain(
      'Fixed since the baseline (1), removable from ci/baseline.json:\n' +
        '  fixed   ../pages/legacy/key.json $.presentation_stage.colour  [unknown-key]\n',
    );

    // A baseline that is not there or not one: could not run.
    expect(await runCli(['check', 'pages', '--baseline', 'ci/none.json'], { cwd: dir })).toMatchObject({
      code: 2,
      stderr: 'error: --baseline ci/none.json: no such file (write one with --update-baseline)\n',
    });
    await writeFile(path.join(dir, 'ci', 'bad.json'), '{"version": 2, "findings": {}}');
    const bad = await runCli(['check', 'pages', '--baseline', 'ci/bad.json'], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: --baseline ci\/bad\.json: \$\.version: .+; \$\.findings: .+\n$/);
  });

  it("is written the first time with the config naming it, as docs/guides/ci.md's steps go", async () => {
    const dir = await tempDir();
    await mkdir(path.join(dir, 'pages'));
    await writeFile(path.join(dir, 'pages', 'aspect.json'), JSON.stringify(variant('image-aspect')));
    await writeFile(path.join(dir, 'content-api.config.json'), JSON.stringify({ baseline: 'check-baseline.json' }));
    const update = await runCli(['check', 'pages', '--update-baseline', 'check-baseline.json'], { cwd: dir });
    expect([update.code, update.stderr]).toEqual([
      0,
      'baseline written to check-baseline.json: 1 finding(s) recorded\n',
    ]);
    const known = await runCli(['check', 'pages'], { cwd: dir });
    expect([known.code, known.stdout]).toEqual([0, '1 page(s), 18 image(s): no findings (1 in the baseline)\n']);
    // Only a run that writes one takes a baseline that is not there for an empty one.
    await rm(path.join(dir, 'check-baseline.json'));
    const missing = await runCli(['check', 'pages'], { cwd: dir });
    expect([missing.code, missing.stderr]).toEqual([
      2,
      expect.stringContaining('check-baseline.json: no such file (write one with --update-baseline)'),
    ]);
  });

  it('a UTF-8 byte-order mark before the JSON is accepted (#22)', async () => {
    const dir = await tempDir();
    await mkdir(path.join(dir, 'pages'));
    await writeFile(path.join(dir, 'pages', 'aspect.json'), JSON.stringify(variant('image-aspect')));
    const finding = {
      page: 'pages/aspect.json',
      rule: 'image-aspect',
      path: '$.presentation_stage.thumbnail.sizes.md',
    };
    await writeFile(path.join(dir, 'baseline.json'), `\ufeff${JSON.stringify({ version: 1, findings: [finding] })}`);
    const known = await runCli(['check', 'pages', '--baseline', 'baseline.json'], { cwd: dir });
    expect(known.stderr).toBe('');
    expect(known.stdout).toBe('1 page(s), 18 image(s): no findings (1 in the baseline)\n');
    expect(known.code).toBe(0);
  });

  it('pages fetched by id are named by their URL path, so another host or port matches', async () => {
    const { startFixtureServer } = await import('../inspect/fixture-server.js');
    const server = await startFixtureServer();
    const dir = await tempDir();
    try {
      const file = path.join(dir, 'baseline.json');
      expect(
        (await runCli(['check', '101', '--base-url', server.base('defect'), '--update-baseline', file])).code,
      ).toBe(0);
      expect(JSON.parse(await readFile(file, 'utf8')).findings).toEqual([
        { page: '/defect/api/v2/pages/101/', rule: 'image-aspect', path: '$.presentation_stage.thumbnail.sizes.md' },
      ]);
      const known = await runCli(['check', '101', '--base-url', server.base('defect'), '--baseline', file]);
      expect(known.code).toBe(0);
      expect(pageKey('https://staging.example.org:8443/defect/api/v2/pages/101/', file)).toBe(
        '/defect/api/v2/pages/101/',
      );
    } finally {
      await server.close();
    }
  });
});
