/**
 * The line and column of JSON paths in a page's text, found with jsonc-parser (the
 * format-preserving parser `render --page` edits pages with), for annotations that point at
 * a line. A path that is not in the text (a missing key) points at its nearest ancestor.
 */
import { type JSONPath, visit } from 'jsonc-parser';

export interface TextPosition {
  /** 1-based. */
  line: number;
  /** 1-based, in UTF-16 code units as editors count. */
  column: number;
}

/** `$.a.b[2]["x y"]` -> ['a', 'b', 2, 'x y'] (the forms `formatPath` writes). */
export function parseJsonPath(jsonPath: string): Array<string | number> {
  const parts: Array<string | number> = [];
  for (const match of jsonPath.slice(1).matchAll(/\.([^.[]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/g)) {
    parts.push(
      match[2] !== undefined ? Number(match[2]) : match[3] !== undefined ? (JSON.parse(match[3]) as string) : match[1]!,
    );
  }
  return parts;
}

/** A path's key among the offsets found. */
const keyOf = (parts: JSONPath) => JSON.stringify(parts);

/**
 * A function from each of `jsonPaths` to its position in `text`; null for a text with no JSON value.
 * One pass over the text that looks only inside the objects and arrays on the way to those paths
 * (no tree of the whole page: a check's github and sarif reporters call it for each page with findings).
 */
export function locator(text: string, jsonPaths: readonly string[]): ((jsonPath: string) => TextPosition) | null {
  const wanted = jsonPaths.map(parseJsonPath);
  /** Whether `path` is on the way to (or is) a wanted path. */
  const onTheWay = (path: JSONPath) =>
    path.length === 0 || wanted.some((parts) => path.every((part, i) => parts[i] === part));
  // The offset of every node on the way: a property's value at its key, where a reader looks.
  const offsets = new Map<string, number>();
  const found = (path: JSONPath, offset: number) => {
    const key = keyOf(path);
    if (!offsets.has(key) && onTheWay(path)) offsets.set(key, offset);
  };
  const container = (offset: number, _length: number, _line: number, _column: number, path: () => JSONPath) => {
    const at = path();
    found(at, offset);
    return onTheWay(at);
  };
  visit(text, {
    onObjectBegin: container,
    onArrayBegin: container,
    // jsonc-parser resumes calling back at the end of a container skipped, when it has an end to call.
    onObjectEnd: () => {},
    onArrayEnd: () => {},
    onObjectProperty: (property, offset, _length, _line, _column, path) => found([...path(), property], offset),
    onLiteralValue: (_value, offset, _length, _line, _column, path) => found(path(), offset),
  });
  if (!offsets.has(keyOf([]))) return null;
  const lineStarts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lineStarts.push(i + 1);
  const position = (offset: number): TextPosition => {
    let low = 0;
    let high = lineStarts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (lineStarts[mid]! <= offset) low = mid;
      else high = mid - 1;
    }
    return { line: low + 1, column: offset - lineStarts[low]! + 1 };
  };
  return (jsonPath) => {
    const parts = parseJsonPath(jsonPath);
    for (let n = parts.length; n >= 0; n--) {
      const offset = offsets.get(keyOf(parts.slice(0, n)));
      if (offset !== undefined) return position(offset);
    }
    return { line: 1, column: 1 };
  };
}
