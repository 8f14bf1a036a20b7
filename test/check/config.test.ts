/**
 * content-api.config.json through the real binary: found upward from the working folder or
 * named with --config, rule severities, ignored paths and pages, flag defaults that flags
 * override, every problem of a bad file listed; its JSON Schema from `schema --config`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { globMatcher, jsonPathMatcher, MAX_PATTERN_LENGTH } from '../../src/check/policy.js';
import { runCli, runWithin } from '../cli/run-cli.js';
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

describe('patterns and rule ids a config can hold', () => {
  it('ignore.pages: many **/ (or *) in a glob are matched in linear time, not by backtracking', async () => {
    const dir = await project(undefined);
    const deep = path.join(dir, ...Array<string>(30).fill('a'));
    await mkdir(deep, { recursive: true });
    await writeFile(path.join(deep, 'p.json'), JSON.stringify(variant('image-srcset-present')));
    const globs = [`${'**/'.repeat(10)}b.json`, `${'*a'.repeat(20)}*b/**/p.json`, `**/${'*a'.repeat(20)}*b`];
    await writeFile(path.join(dir, 'content-api.config.json'), JSON.stringify({ ignore: { pages: globs } }));
    const result = await runWithin(['check', 'a', '--reporter', 'json'], 15_000, { cwd: dir });
    expect(result.signal).toBeNull();
    expect(findings(result.stdout)).toEqual(['p.json error image-srcset-present']);
    expect(result.code).toBe(1);
    // A glob of forty **/ that matches: the page is not read.
    const matching = { ignore: { pages: [`${'**/'.repeat(40)}p.json`] } };
    await writeFile(path.join(dir, 'content-api.config.json'), JSON.stringify(matching));
    const ignored = await runWithin(['check', 'a'], 15_000, { cwd: dir });
    expect(ignored.stdout).toBe('0 page(s), 0 image(s): no findings\n');
    expect(ignored.code).toBe(0);
  });

  it('glob and JSON path matching: what each wildcard takes, and no pattern is slow', () => {
    const glob = (pattern: string, file: string) => globMatcher(pattern)(file);
    expect(glob('pages/legacy/**', 'pages/legacy/a/key.json')).toBe(true);
    expect(glob('**/**/b.json', 'b.json')).toBe(true);
    expect(glob('**/**/b.json', 'x/y/b.json')).toBe(true);
    expect(glob('**/b.json', 'x/yb.json')).toBe(false);
    expect(glob('a/**/b', 'a/b')).toBe(true);
    expect(glob('a**b', 'a/x/b')).toBe(true);
    expect(glob('a*b', 'a/b')).toBe(false);
    expect(glob('?.json', '/.json')).toBe(false);
    expect(glob('pages/draft-*.json', 'pages/draft-1.json')).toBe(true);
    const json = (pattern: string, at: string) => jsonPathMatcher(pattern)(at);
    expect(json('$.a', '$.a.b')).toBe(true);
    expect(json('$.a', '$.a[0]')).toBe(true);
    expect(json('$.a', '$.ab')).toBe(false);
    expect(json('$.*.thumbnail', '$.x.thumbnail.srcset')).toBe(true);
    expect(json('$.*', '$.')).toBe(false);
    expect(json('$.b[*].v', '$.b[12].v')).toBe(true);
    expect(json('$.b[*].v', '$.b[x].v')).toBe(false);
    const started = performance.now();
    const long = 'a'.repeat(MAX_PATTERN_LENGTH);
    expect(glob(`${'**/'.repeat(600) + '*a'.repeat(40)}b`, `${'a/'.repeat(100)}${long}`)).toBe(false);
    expect(json(`$.${'*a'.repeat(40)}b`, `$.${long}`)).toBe(false);
    expect(json(`$.${'*'.repeat(40)}b`, `$.${long}`)).toBe(false);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('an ignore.paths or ignore.pages entry too long: one line naming the file and the entry, exit 2', async () => {
    const dir = await project({
      ignore: { paths: [`$${'.a'.repeat(20_000)}`], pages: ['x'.repeat(MAX_PATTERN_LENGTH + 1)] },
    });
    const result = await runCli(['check', 'pages'], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n')).toEqual([
      `error: ${path.join(dir, 'content-api.config.json')}: 2 problems`,
      `  $.ignore.pages[0]: longer than ${MAX_PATTERN_LENGTH} characters`,
      `  $.ignore.paths[0]: longer than ${MAX_PATTERN_LENGTH} characters`,
      '',
    ]);
    // At the bound, the entry is taken.
    const atBound = `$.presentation_stage${'.a'.repeat((MAX_PATTERN_LENGTH - 20) / 2)}`;
    expect(atBound).toHaveLength(MAX_PATTERN_LENGTH);
    await writeFile(path.join(dir, 'content-api.config.json'), JSON.stringify({ ignore: { paths: [atBound] } }));
    const taken = await runCli(['check', 'pages', '--reporter', 'json'], { cwd: dir });
    expect(taken.stderr).toBe('');
    expect(taken.code).toBe(1);
  });

  it('__proto__ as a rule id is refused as any other key that is not a rule id, exit 2', async () => {
    for (const [text, key] of [
      ['{"rules":{"__proto__":"off"}}', '__proto__'],
      ['{"rules":{"__proto__":{"schema":"off"}}}', '__proto__'],
      ['{"rules":{"constructor":"off"}}', 'constructor'],
      ['{"rules":{"toString":"off"}}', 'toString'],
    ]) {
      const dir = await project(undefined);
      await writeFile(path.join(dir, 'content-api.config.json'), text!);
      const result = await runCli(['check', 'pages'], { cwd: dir });
      expect(result.stderr, text).toBe(
        `error: ${path.join(dir, 'content-api.config.json')}: $.rules.${key}: not a rule id\n`,
      );
      expect(result.code, text).toBe(2);
    }
  });
});

describe('text from the config file is printed escaped (#22)', () => {
  // An ESC sequence, and a line break followed by a GitHub workflow command.
  const hostile = 'x\u001b[31m\n::error::forged';
  const oneEscapedLine = (stderr: string) => {
    expect(stderr.endsWith('\n')).toBe(true);
    expect(stderr.slice(0, -1)).not.toMatch(/[\u0000-\u001f\u007f]/);
    expect(stderr).not.toMatch(/^::/m);
  };

  it('a rule key with control characters: one line, its characters escaped', async () => {
    const dir = await project({ rules: { [hostile]: 'off' } });
    const result = await runCli(['check', 'pages', '--reporter', 'github'], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    oneEscapedLine(result.stderr);
    expect(result.stderr).toContain('$.rules.x\\u001b[31m\\n::error::forged: not a rule id');
  });

  it('a file that is not JSON: its text quoted escaped', async () => {
    const dir = await project(undefined);
    await writeFile(path.join(dir, 'content-api.config.json'), `{ "rules": ${hostile}`);
    const result = await runCli(['check', 'pages', '--reporter', 'github'], { cwd: dir });
    expect(result.code).toBe(2);
    oneEscapedLine(result.stderr);
    expect(result.stderr).toMatch(/: not JSON \(.*\\u001b\[31m/);
  });

  it('a baseline and an output named in the config: escaped by the text and github reporters', async () => {
    const dir = await project(undefined);
    const baseline = `base${hostile}.json`;
    const recorded = await runCli(['check', 'pages', '--update-baseline', baseline], { cwd: dir });
    expect(recorded.code).toBe(0);
    // The rule turned off: the baseline's findings of it are fixed, and the reporters name the baseline.
    const config = { baseline, rules: { 'image-srcset-present': 'off' } };
    await writeFile(path.join(dir, 'content-api.config.json'), JSON.stringify(config));
    const text = await runCli(['check', 'pages'], { cwd: dir });
    expect(text.stdout).toContain('removable from ');
    expect(text.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
    expect(text.stdout).not.toMatch(/^::/m);
    expect(text.stdout).toContain('basex\\u001b[31m\\n::error::forged.json');
    const github = await runCli(['check', 'pages', '--reporter', 'github'], { cwd: dir });
    const lines = github.stdout.trimEnd().split('\n');
    expect(lines.filter((line) => line.startsWith('::notice '))).toHaveLength(1);
    expect(lines.filter((line) => line.startsWith('::error'))).toEqual([]);
    expect(github.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
    await writeFile(path.join(dir, 'content-api.config.json'), JSON.stringify({ ...config, output: `out${hostile}` }));
    const written = await runCli(['check', 'pages'], { cwd: dir });
    oneEscapedLine(written.stderr);
    expect(written.stderr).toMatch(/^text report written to .*outx\\u001b\[31m\\n::error::forged: /);
  });
});

describe('the GitHub reporter escapes workflow-command data as GitHub documents (#22)', () => {
  it('%, \\r and \\n in data as %XX; also : and , in properties; other controls as \\u escapes', async () => {
    const { githubReporter } = await import('../../src/check/reporters/machine.js');
    const reporter = githubReporter();
    const text = reporter.page({
      source: 'pages/a,b:c%\r\n::error::x.json',
      problems: [{ severity: 'error', rule: 'schema', path: '$.a', message: '100% \u001b[2J\r\n::error::forged' }],
      baselined: [],
      images: 0,
    } as never);
    expect(text).toBe(
      '::error file=pages/a%2Cb%3Ac%25%0D%0A%3A%3Aerror%3A%3Ax.json,title=content-api schema::' +
        '$.a: 100%25 \\u001b[2J%0D%0A::error::forged\n',
    );
  });
});
