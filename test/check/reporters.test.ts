/**
 * Reporters for CI platforms through the real binary: SARIF 2.1.0 validated against the
 * SARIF schema (the OASIS 2.1.0 schema as Microsoft ships it in @microsoft/jest-sarif,
 * lib/schemas/sarif-2.1.0-rtm.5.json), JUnit XML with every character XML forbids escaped
 * (checked by Chromium's XML parser), JSON lines.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import AjvDraft04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { runCli } from '../cli/run-cli.js';
import { tempDir } from '../fixtures/tmp.js';
import { loadVariants, PAGES } from '../page/variants.js';

const require = createRequire(import.meta.url);
const SARIF_SCHEMA = require.resolve('@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json');

const variant = (name: string) => loadVariants().find((v) => v.name === name)!.page;

describe('--reporter sarif', () => {
  it('is valid SARIF 2.1.0, with the page file, the line of the JSON path, and every rule', async () => {
    const dir = await tempDir();
    const pretty = JSON.stringify(variant('image-aspect'), null, 2);
    await writeFile(path.join(dir, 'aspect.json'), pretty);
    await writeFile(path.join(dir, 'key.json'), JSON.stringify(variant('unknown-key'), null, 2));
    await writeFile(path.join(dir, 'broken.json'), '{"id": ');
    const result = await runCli(['check', '.', '--reporter', 'sarif'], { cwd: dir });
    expect(result.code).toBe(1);
    const log = JSON.parse(result.stdout);

    // The schema's `language` pattern has a stray ']' that only a non-unicode RegExp accepts.
    const ajv = new AjvDraft04.default({ allErrors: true, strict: false, unicodeRegExp: false });
    addFormats.default(ajv);
    const validate = ajv.compile(JSON.parse(await readFile(SARIF_SCHEMA, 'utf8')));
    expect(validate(log), JSON.stringify(validate.errors, null, 2)).toBe(true);
    // The schema does reject: a run needs its tool.
    expect(validate({ version: '2.1.0', runs: [{ results: [] }] })).toBe(false);

    expect(log.version).toBe('2.1.0');
    const run = log.runs[0];
    expect(run.tool.driver.name).toBe('content-api');
    expect(run.tool.driver.rules.map((r: { id: string }) => r.id)).toEqual(
      expect.arrayContaining(['image-aspect', 'unknown-key', 'page-json', 'file-size', 'base-url-placeholder']),
    );
    const results = run.results.map(
      (r: {
        ruleId: string;
        level: string;
        locations: Array<{ physicalLocation: { artifactLocation: { uri: string }; region?: { startLine: number } } }>;
      }) => ({
        rule: r.ruleId,
        level: r.level,
        uri: r.locations[0]!.physicalLocation.artifactLocation.uri,
        line: r.locations[0]!.physicalLocation.region?.startLine,
      }),
    );
    const mdLine =
      pretty
        .split('\n')
        .findIndex((line, i, lines) => line === '        "md": {' && lines[i + 2]!.trim() === '"height": 700,') + 1;
    expect(mdLine).toBeGreaterThan(1);
    expect(results).toEqual([
      { rule: 'image-aspect', level: 'error', uri: 'aspect.json', line: mdLine },
      { rule: 'page-json', level: 'error', uri: 'broken.json', line: 1 },
      { rule: 'unknown-key', level: 'warning', uri: 'key.json', line: expect.any(Number) },
    ]);
    const unknown = JSON.stringify(variant('unknown-key'), null, 2).split('\n');
    expect(unknown[results[2].line - 1]).toBe('    "colour": "red"');
    expect(run.results[0].locations[0].logicalLocations[0].fullyQualifiedName).toBe(
      '$.presentation_stage.thumbnail.sizes.md',
    );
  });
});

describe('--reporter junit', () => {
  it('escapes every character XML forbids, in text and in attributes, so the report parses', async () => {
    const dir = await tempDir();
    const page = variant('image-aspect') as Record<string, unknown>;
    // Keys the spec does not name, holding control characters, a lone surrogate, U+FFFF and markup: they reach
    // messages and names.
    page['bad\u0001key\u001b[31m'] = 1;
    page['lone\ud800surrogate\uffff'] = 2;
    page['<tag attr="x">&amp;\ttab\r\n'] = 3;
    const file = path.join(dir, 'page "quoted" <&>.json');
    await writeFile(file, JSON.stringify(page));
    const result = await runCli(['check', file, '--reporter', 'junit']);
    expect(result.code).toBe(1);
    const xml = result.stdout;
    expect(xml).not.toMatch(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u);
    // Escaped once, where the message is made (validate) or where it is written (JUnit): either spelling.
    expect(xml).toMatch(/bad\\u0001key\\u001[bB]\[31m/);
    expect(xml).toContain('lone\\uD800surrogate\\uFFFF');

    const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
    if (!existsSync(chromiumPath))
      throw new Error(`${chromiumPath} is missing: npm test installs Debian's chromium (scripts/test-deps.js)`);
    const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-gpu'] });
    try {
      const tab = await browser.newPage();
      const parsed = await tab.evaluate((text) => {
        type Element = {
          getAttribute(name: string): string | null;
          querySelector(selector: string): Element | null;
          textContent: string | null;
        };
        type Doc = {
          querySelector(selector: string): Element | null;
          querySelectorAll(selector: string): Iterable<Element>;
        };
        const Parser = (
          globalThis as unknown as { DOMParser: new () => { parseFromString(text: string, type: string): Doc } }
        ).DOMParser;
        const doc = new Parser().parseFromString(text, 'application/xml');
        const error = doc.querySelector('parsererror');
        const cases = [...doc.querySelectorAll('testcase')];
        return {
          error: error?.textContent ?? null,
          suite: doc.querySelector('testsuite')?.getAttribute('name'),
          names: cases.map((c) => c.getAttribute('name')),
          messages: cases.map((c) => c.querySelector('failure')?.getAttribute('message') ?? null),
        };
      }, xml);
      expect(parsed.error).toBeNull();
      expect(parsed.suite).toBe(file);
      expect(parsed.names).toContain('$["<tag attr=\\"x\\">&amp;\\ttab\\r\\n"] [unknown-key]');
      // The page model escapes control characters in its messages (a page is remote text): they arrive as \t, \r, \n.
      expect(parsed.messages).toContain('<tag attr="x">&amp;\\ttab\\r\\n is not a key the spec names here');
    } finally {
      await browser.close();
    }
  });
});

describe('--reporter json-lines', () => {
  it('one JSON object per page, then the summary', async () => {
    const valid = path.join(PAGES, 'presentation-every-block.json');
    const result = await runCli(['check', valid, valid, '--reporter', 'json-lines']);
    expect(result.code).toBe(0);
    const lines = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((l) => l.type)).toEqual(['page', 'page', 'summary']);
    expect(lines[0]).toMatchObject({ source: valid, problems: [] });
    expect(lines[2]).toMatchObject({ pages: 2, images: 36, errors: 0, warnings: 0, files: null });
  });
});
