/**
 * Property-based tests (fast-check) of the page walker and validator: for any JSON value
 * (and for the sample page with any value put anywhere in it), `validatePage` returns a
 * list of problems and never throws, and `findObjects` visits every object exactly once,
 * parents first, however deep the value.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeUtf8, MAX_JSON_DEPTH, parseJsonText } from '../../src/page/json-text.js';
import { plainText } from '../../src/page/text.js';
import { validatePage } from '../../src/page/validate.js';
import { findImages, findObjects, formatPath, type JsonPath } from '../../src/page/walk.js';
import { duplicateKeys } from '../../src/page-render/rewrite.js';
import { PAGES } from '../page/variants.js';

const SAMPLE = JSON.parse(readFileSync(path.join(PAGES, 'presentation-every-block.json'), 'utf8')) as Record<
  string,
  unknown
>;

/**
 * Keys that trip naive lookups (`type in TABLE`, `obj[key]` on a prototype), mixed into any
 * JSON. `toString` and `valueOf` are left to the known-bug test below until verify.ts is fixed.
 */
const trickyKey = fc.constantFrom(
  '__proto__',
  'constructor',
  'hasOwnProperty',
  'sizes',
  'srcset',
  'width',
  'type',
  'value',
  'url',
  'body',
  'date_end',
  'date_end_effective',
);
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.double(),
    fc.integer(),
    fc.string(),
    fc.constantFrom(
      'text',
      'single_image',
      'constructor',
      '__proto__',
      'http://x/api/v2/pages/1/',
      '/media/a.max-300x300.jpg',
    ),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(fc.oneof(fc.string(), trickyKey), tie('value'), { maxKeys: 6, noNullPrototype: true }),
  ),
})).value;

/** Every path in the sample page, for putting a value anywhere in it. */
const samplePaths: JsonPath[] = [];
(function collect(value: unknown, at: JsonPath) {
  samplePaths.push(at);
  if (typeof value === 'object' && value !== null)
    for (const [key, child] of Object.entries(value)) collect(child, [...at, Array.isArray(value) ? Number(key) : key]);
})(SAMPLE, []);

function withValueAt(at: JsonPath, value: unknown): unknown {
  const page = structuredClone(SAMPLE) as Record<string | number, unknown>;
  if (at.length === 0) return value;
  let holder = page;
  for (const key of at.slice(0, -1)) holder = holder[key] as Record<string | number, unknown>;
  holder[at.at(-1)!] = value;
  return page;
}

function assertProblemList(result: ReturnType<typeof validatePage>): void {
  expect(Array.isArray(result.problems)).toBe(true);
  for (const problem of result.problems) {
    expect(['error', 'warning']).toContain(problem.severity);
    expect(problem.path.startsWith('$')).toBe(true);
    expect(typeof problem.rule).toBe('string');
    expect(typeof problem.message).toBe('string');
  }
  if (result.problems.some((p) => p.severity === 'error')) expect(result.page).toBeNull();
}

describe('validatePage, for any JSON value', () => {
  it('returns a list of problems, never throws', () => {
    fc.assert(
      fc.property(json, fc.boolean(), (value, formatApi) =>
        assertProblemList(validatePage(value, { formatApi, baseUrl: 'http://localhost:8000' })),
      ),
      { numRuns: 1_000 },
    );
  });

  it('the sample page with any value anywhere: a list of problems, never a throw', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: samplePaths.length - 1 }), json, (i, value) =>
        assertProblemList(validatePage(withValueAt(samplePaths[i]!, value))),
      ),
      { numRuns: 1_000 },
    );
  });

  it("a block of any type, the prototype's names included", () => {
    fc.assert(
      fc.property(fc.oneof(trickyKey, fc.string()), json, (type, value) => {
        const page = withValueAt(['presentation_stage', 'body', 0], {
          type,
          value,
          id: '3f1e1c9e-4a43-4b7e-9f67-0d5c8f2b1a11',
        });
        assertProblemList(validatePage(page));
      }),
    );
  });

  it('any depth: past the limit one problem names it; nothing overflows the stack', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5_000 }), fc.boolean(), (depth, objects) => {
        let value: unknown = 1;
        for (let i = 0; i < depth; i++) value = objects ? { a: value } : [value];
        const { problems } = validatePage({ id: 1, x: value });
        if (depth + 1 > MAX_JSON_DEPTH)
          expect(problems).toEqual([
            {
              severity: 'error',
              path: '$',
              rule: 'schema',
              message: `nested deeper than ${MAX_JSON_DEPTH} levels (the limit); not checked further`,
            },
          ]);
        else expect(problems.some((p) => p.message.includes('nested deeper'))).toBe(false);
      }),
      { numRuns: 200 },
    );
  });
});

describe('findObjects and findImages, for any JSON value', () => {
  it('visit every object exactly once, parents before children, at their JSON paths', () => {
    fc.assert(
      fc.property(json, (value) => {
        const expected: string[] = [];
        (function collect(v: unknown, at: JsonPath) {
          if (typeof v !== 'object' || v === null) return;
          if (!Array.isArray(v)) expected.push(formatPath(at));
          for (const [key, child] of Object.entries(v)) collect(child, [...at, Array.isArray(v) ? Number(key) : key]);
        })(value, ['$']);
        expect([...findObjects(value)].map((found) => formatPath(found.path))).toEqual(expected);
        for (const image of findImages(value)) expect(typeof image.image.sizes).toBe('object');
      }),
      { numRuns: 1_000 },
    );
  });
});

describe('page text, for any string', () => {
  it('parseJsonText agrees with JSON.parse below the depth limit, and never throws', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          json.map((v) => JSON.stringify(v) ?? 'null'),
        ),
        (text) => {
          const parsed = parseJsonText(text);
          let expected: unknown;
          let ok = true;
          try {
            expected = JSON.parse(text);
          } catch {
            ok = false;
          }
          expect(parsed.ok).toBe(ok);
          if (parsed.ok) expect(parsed.json).toEqual(expected);
          else expect(parsed.reason).toMatch(/^[^\n\r\u0000-\u001f]+$/);
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it('duplicateKeys finds a key repeated in one object, and nothing in JSON.stringify output', () => {
    fc.assert(
      fc.property(json, fc.string(), (value, key) => {
        expect(duplicateKeys(JSON.stringify({ v: value }))).toEqual([]);
        const quotedKey = JSON.stringify(key);
        const text = `{"a": {${quotedKey}: 1, "x": ${JSON.stringify(value) ?? 'null'}, ${quotedKey}: 2}}`;
        expect(duplicateKeys(text).map((d) => d.key)).toContain(key);
      }),
      { numRuns: 500 },
    );
  });

  it('decodeUtf8 accepts exactly the well-formed UTF-8, drops a leading byte-order mark, names the first bad byte', () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const some = fc.oneof(
      fc.uint8Array({ maxLength: 64 }),
      fc.string({ unit: 'binary' }).map((t) => new Uint8Array(Buffer.from(t))),
    );
    const bytes = fc.oneof(
      some,
      some.map((b) => new Uint8Array(Buffer.concat([bom, b]))),
    );
    fc.assert(
      fc.property(bytes, (input) => {
        const decoded = decodeUtf8(input);
        const roundTrips = Buffer.from(Buffer.from(input).toString('utf8'), 'utf8').equals(Buffer.from(input));
        expect(decoded.ok).toBe(roundTrips);
        const text = Buffer.from(input).subarray(bom.equals(input.subarray(0, 3)) ? 3 : 0);
        if (decoded.ok) expect(Buffer.from(decoded.text, 'utf8').equals(text)).toBe(true);
        else {
          const at = Number(/at offset (\d+)/.exec(decoded.reason)![1]);
          expect(at).toBeLessThan(input.length);
          expect(decodeUtf8(input.subarray(0, at)).ok).toBe(true);
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it('formatPath is one printable line for any key', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string({ unit: 'binary' }), fc.nat()), { maxLength: 5 }), (keys) => {
        expect(formatPath(['$', ...keys])).toMatch(
          /^\$[^\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]*$/,
        );
      }),
      { numRuns: 1_000 },
    );
  });

  it('plainText is one printable line of at most max characters', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), fc.integer({ min: 1, max: 100 }), (text, max) => {
        const plain = plainText(text, max);
        expect(plain.length).toBeLessThanOrEqual(max);
        expect(plain).toMatch(/^[^\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]*$/);
      }),
      { numRuns: 1_000 },
    );
  });
});

describe('a size url that is not a string', () => {
  // verify.ts once quoted it with String(entry.url): an object url whose `toString` key is not
  // a function made String() throw, so validatePage (check, inspect, serve) died with a TypeError.
  it('an Image whose size url is {"toString": null} gives problems, not a TypeError', () => {
    const page = withValueAt(
      ['presentation_stage', 'thumbnail', 'sizes', 'md', 'url'],
      JSON.parse('{"toString": null}'),
    );
    assertProblemList(validatePage(page));
  });

  it('the same value elsewhere (an exhibition date) is quoted safely', () => {
    const exhibition = {
      date_end: '2026-01-01',
      date_extended: null,
      date_end_effective: JSON.parse('{"toString": null, "valueOf": 1}'),
      is_extended: false,
    };
    const { problems } = validatePage({ id: 1, x: exhibition });
    expect(problems).toContainEqual(
      expect.objectContaining({
        rule: 'exhibition-date-end-effective',
        message: 'date_end_effective is {"toString":null,"valueOf":1}, expected 2026-01-01 (date_end)',
      }),
    );
  });

  it('keys and values with escape sequences come out escaped in paths and messages', () => {
    const { problems } = validatePage({ id: 1, meta: { detail_url: 'http://x/\u001b[2J?\n' }, '\u001b]0;x\u0007': 1 });
    for (const p of problems) expect(`${p.path} ${p.message}`).toMatch(/^[^\u0000-\u001f\u007f-\u009f]*$/);
    expect(problems.map((p) => p.message)).toContain('http://x/\\u001b[2J?\\n has a query string or fragment');
  });
});
