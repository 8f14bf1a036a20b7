/**
 * content-api.config.json through the real binary: found upward from the working folder or
 * named with --config, rule severities, ignored paths and pages, flag defaults that flags
 * override, every problem of a bad file listed; its JSON Schema from `schema --config`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { runCli } from '../cli/run-cli.js';
import { tempDir } from '../fixtures/tmp.js';
import { loadVariants } from '../page/variants.js';

const variant = (name: string) => loadVariants().find((v) => v.name === name)!.page;

/**
 * A project folder: pages/srcset.json (image-srcset-present), pages/legacy/key.json (unknown-key), a
 * sub folder to run from.
 */
async function project(config: unknown): Promise<string> {
  const dir = await tempDir();
  await mkdir(path.join(dir, 'pages', 'legacy'), { recursive: true });
  await mkdir(path.join(dir, 'deep', 'er'), { recursive: true });
  await writeFile(path.join(dir, 'pages', 'srcset.json'), JSON.stringify(variant('image-srcset-present')));
  await writeFile(path.join(dir, 'pages', 'legacy', 'key.json'), JSON.stringify(variant('unknown-key')));
  if (config !== undefined) await writeFile(path.join(dir, 'content-api.config.json'), JSON.stringify(config, null, 2));
  return dir;
}

const findings = (stdout: string) =>
  (
    JSON.parse(stdout) as { pages: Array<{ source: string; problems: Array<{ severity: string; rule: string }> }> }
  ).pages
    .flatMap((p) => p.problems.map((f) => `${path.basename(p.source)} ${f.severity} ${f.rule}`))
    .sort();

describe('the config file', () => {
  it('without one: both findings, exit 1', async () => {
    const dir = await project(undefined);
    const result = await runCli(['check', 'pages', '--reporter', 'json'], { cwd: dir });
    expect(findings(result.stdout)).toEqual(['key.json warning unknown-key', 'srcset.json error image-srcset-present']);
    expect(result.code).toBe(1);
  });

  it('is found upward from the working folder: severities, ignored pages, flag defaults', async () => {
    const dir = await project({
      rules: { 'image-srcset-present': 'warn' },
      ignore: { pages: ['pages/legacy/**'] },
      reporter: 'json',
      maxWarnings: 1,
    });
    const result = await runCli(['check', '../../pages'], { cwd: path.join(dir, 'deep', 'er') });
    expect(findings(result.stdout)).toEqual(['srcset.json warning image-srcset-present']);
    expect(JSON.parse(result.stdout)).toMatchObject({ errors: 0, warnings: 1, ignored: 0 });
    expect(result.code).toBe(0); // one warning, and the config allows one

    // Flags win over the file.
    const flagged = await runCli(['check', '../../pages', '--reporter', 'text', '--max-warnings', '0'], {
      cwd: path.join(dir, 'deep', 'er'),
    });
    expect(flagged.stdout).toMatch(/^1 page\(s\), 18 image\(s\): 0 error\(s\), 1 warning\(s\)$/m);
    expect(flagged.code).toBe(1);
  });

  it('turns rules off and ignores JSON paths (the path and everything below it; * and [*] wildcards)', async () => {
    const dir = await project({
      rules: { 'unknown-key': 'off' },
      ignore: { paths: ['$.presentation_stage.thumbnail'] },
    });
    const result = await runCli(['check', 'pages', '--reporter', 'json'], { cwd: dir });
    expect(findings(result.stdout)).toEqual([]);
    expect(JSON.parse(result.stdout).ignored).toBe(2);
    expect(result.code).toBe(0);
    await writeFile(
      path.join(dir, 'content-api.config.json'),
      JSON.stringify({ ignore: { paths: ['$.*.thumbnail.srcset', '$.presentation_stage.body[*].value.nope'] } }),
    );
    expect(findings((await runCli(['check', 'pages', '--reporter', 'json'], { cwd: dir })).stdout)).toEqual([
      'key.json warning unknown-key',
    ]);
  });

  it('--config names another file; its relative paths are relative to it', async () => {
    const dir = await project(undefined);
    await mkdir(path.join(dir, 'ci'));
    await writeFile(
      path.join(dir, 'ci', 'strict.json'),
      JSON.stringify({ rules: { 'unknown-key': 'error' }, output: 'out/report.json', reporter: 'json' }),
    );
    await mkdir(path.join(dir, 'ci', 'out'));
    const result = await runCli(['check', 'pages', '--config', 'ci/strict.json'], { cwd: dir });
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `json report written to ${path.join(dir, 'ci', 'out', 'report.json')}: 2 error(s), 0 warning(s)\n`,
    );
    expect(result.code).toBe(1);
  });

  it('an invalid file stops the run (exit 2), every problem named by its JSON path', async () => {
    const dir = await project({
      rules: { 'image-srcset-present': 'loud', nope: 'off' },
      ignore: { paths: ['thumbnail'] },
      reporter: 'xml',
      verifyfiles: 'media',
    });
    const result = await runCli(['check', 'pages'], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n')).toEqual([
      `error: ${path.join(dir, 'content-api.config.json')}: 5 problems`,
      expect.stringMatching(
        /^ {2}\$\.rules\.image-srcset-present: Invalid option: expected one of "off"\|"warn"\|"error"$/,
      ),
      '  $.rules.nope: not a rule id',
      '  $.ignore.paths[0]: a JSON path starts with $',
      expect.stringMatching(/^ {2}\$\.reporter: Invalid option: expected one of "text"\|/),
      '  $.verifyfiles: not a key the config file takes',
      '',
    ]);
    await writeFile(path.join(dir, 'content-api.config.json'), '{ "rules": ');
    expect((await runCli(['check', 'pages'], { cwd: dir })).stderr).toMatch(
      /^error: .*content-api\.config\.json: not JSON \(.+\)\n$/,
    );
    expect((await runCli(['check', 'pages', '--config', 'missing.json'], { cwd: dir })).stderr).toBe(
      'error: missing.json: no such file\n',
    );
  });

  it('a UTF-8 byte-order mark before the JSON is accepted (#22)', async () => {
    const dir = await project(undefined);
    const config = JSON.stringify({ rules: { 'unknown-key': 'off', 'image-srcset-present': 'off' } });
    await writeFile(path.join(dir, 'content-api.config.json'), `\ufeff${config}`);
    const result = await runCli(['check', 'pages'], { cwd: dir });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('2 page(s), 36 image(s): no findings (2 ignored by the config)\n');
    expect(result.code).toBe(0);
  });

  it('schema --config prints a JSON Schema that accepts good files and rejects bad ones', async () => {
    const result = await runCli(['schema', '--config']);
    expect(result.code).toBe(0);
    const schema = JSON.parse(result.stdout);
    const validate = new Ajv2020({ strict: false }).compile(schema);
    expect(
      validate({
        $schema: './content-api.config.schema.json',
        rules: { 'file-size': 'warn', 'image-srcset-present': 'off' },
        ignore: { paths: ['$.meta'], pages: ['legacy/**'] },
        baseUrl: 'https://gallery.example.org',
        mediaPrefix: '/media/',
        verifyFiles: 'media',
        reporter: 'sarif',
        maxWarnings: 3,
      }),
    ).toBe(true);
    for (const bad of [
      { rules: { nope: 'off' } },
      { rules: { 'file-size': 'loud' } },
      { reporter: 'xml' },
      { extra: 1 },
      { maxWarnings: -1 },
    ])
      expect(validate(bad), JSON.stringify(bad)).toBe(false);
  });
});
