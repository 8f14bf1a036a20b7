/**
 * The positions the github and sarif reporters point at: each JSON path's line and column in the page's
 * text, found in one pass over it, against a tree of the whole text (jsonc-parser's `parseTree`) read
 * the way an editor shows it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { findNodeAtLocation, type Node, parseTree } from 'jsonc-parser';
import { describe, expect, it } from 'vitest';
import { locator, parseJsonPath } from '../../src/check/locate.js';
import { formatPath } from '../../src/page/walk.js';

const PAGES = path.resolve(import.meta.dirname, '../../samples/pages');

/** Where an editor shows `parts`: a property's value at its key; else the nearest ancestor there is. */
function fromTree(text: string, root: Node, parts: Array<string | number>) {
  for (let n = parts.length; n >= 0; n--) {
    const node = n === 0 ? root : findNodeAtLocation(root, parts.slice(0, n));
    if (!node) continue;
    const offset = node.parent?.type === 'property' ? node.parent.offset : node.offset;
    const before = text.slice(0, offset).split('\n');
    return { line: before.length, column: before.at(-1)!.length + 1 };
  }
  throw new Error('no root');
}

/** Every path in `value`, containers and leaves. */
function everyPath(value: unknown, parts: Array<string | number> = []): Array<Array<string | number>> {
  const children = Array.isArray(value)
    ? value.map((item, i) => [i, item] as const)
    : value !== null && typeof value === 'object'
      ? Object.entries(value)
      : [];
  return [parts, ...children.flatMap(([key, child]) => everyPath(child, [...parts, key]))];
}

describe('locator', () => {
  it('finds every path of the sample pages where their tree does, in one pass for all of them', () => {
    const files = readdirSync(PAGES).filter((file) => file.endsWith('.json'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const text = readFileSync(path.join(PAGES, file), 'utf8');
      const paths = everyPath(JSON.parse(text));
      expect(paths.length, file).toBeGreaterThan(100);
      const jsonPath = (parts: Array<string | number>) => formatPath(['$', ...parts]);
      const locate = locator(text, paths.map(jsonPath))!;
      const root = parseTree(text)!;
      for (const parts of paths) expect(locate(jsonPath(parts)), jsonPath(parts)).toEqual(fromTree(text, root, parts));
    }
  });

  it('finds one path past the objects and arrays it skips; a missing key points at its nearest ancestor', () => {
    const text = '{\n  "a": {"x": [1, {"y": 2}]},\n  "b": [\n    {"c": "d"},\n    [true, null]\n  ],\n  "e f": {}\n}\n';
    const at = (jsonPath: string) => locator(text, [jsonPath])!(jsonPath);
    expect(at('$.b[1][1]')).toEqual({ line: 5, column: 12 });
    expect(at('$.b[0].c')).toEqual({ line: 4, column: 6 });
    expect(at('$["e f"]')).toEqual({ line: 7, column: 3 });
    expect(at('$.b[0].missing')).toEqual({ line: 4, column: 5 });
    expect(at('$.b[7]')).toEqual({ line: 3, column: 3 });
    expect(at('$.nothing.here')).toEqual({ line: 1, column: 1 });
    // Asked for one path, it answers the others by their nearest ancestor it looked at.
    expect(locator(text, ['$.b[0].c'])!('$.a.x')).toEqual({ line: 1, column: 1 });
  });

  it('counts columns in UTF-16 code units, lines at each line feed; null for a text with no JSON value', () => {
    const text = '{"🌼": 1,\r\n "k": [2]}';
    expect(locator(text, ['$.k[0]'])!('$.k[0]')).toEqual({ line: 2, column: 8 });
    expect(locator(text, ['$["🌼"]'])!('$["🌼"]')).toEqual({ line: 1, column: 2 });
    expect(locator('', ['$.a'])).toBeNull();
    expect(locator('  ', [])).toBeNull();
    expect(parseJsonPath('$.a.b[2]["x y"]')).toEqual(['a', 'b', 2, 'x y']);
  });
});
