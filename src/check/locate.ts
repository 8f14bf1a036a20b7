/**
 * The line and column of a JSON path in a page's text, found with jsonc-parser (the
 * format-preserving parser `render --page` edits pages with), for annotations that point at
 * a line. A path that is not in the text (a missing key) points at its nearest ancestor.
 */
import { findNodeAtLocation, type Node, parseTree } from 'jsonc-parser';

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

/** A function from JSON path to position in `text`; null for a text that does not parse. */
export function locator(text: string): ((jsonPath: string) => TextPosition) | null {
  const root = parseTree(text);
  if (!root) return null;
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
      const node: Node | undefined = n === 0 ? root : findNodeAtLocation(root, parts.slice(0, n));
      if (!node) continue;
      // A property's value: point at its key, where a reader looks.
      return position(node.parent?.type === 'property' ? node.parent.offset : node.offset);
    }
    return { line: 1, column: 1 };
  };
}
