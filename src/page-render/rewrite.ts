/**
 * Changes values in a JSON text and leaves every other byte as it was: key order, spacing
 * and line breaks of untouched values survive. Values are compared leaf by leaf, so only
 * what really differs is rewritten. Replacements come from jsonc-parser (VS Code's JSON
 * editing library); a replaced value is laid out in the document's own indentation, or on
 * one line when the value it replaces was on one line. A key that is missing is inserted
 * after the sibling named, with the separators the object already uses. A text with a key twice
 * in one object cannot be rewritten faithfully (`duplicateKeys`).
 */
import { isDeepStrictEqual } from 'node:util';
import {
  applyEdits,
  type Edit,
  type FormattingOptions,
  findNodeAtLocation,
  modify,
  type Node,
  parseTree,
  visit,
} from 'jsonc-parser';
import { formatPath, type JsonPath } from '../page/walk.js';

export interface ValueEdit {
  /** Where the value is, as `findImages` gives it (`['$', 'presentation_stage', 'thumbnail', 'sizes']`). */
  path: JsonPath;
  value: unknown;
  /** For a key the object does not have yet: the sibling to insert it after (none: first). */
  insert?: { after: string | undefined };
}

/**
 * The edits that turn `before`, the value at `path`, into `after`: objects key by key (keys
 * only `before` has are kept), any other value replaced when it differs. A missing key whose
 * value is a plain string, number, boolean or null is inserted; an object that lacks a key
 * whose value is an object or array, or that has no keys at all, is replaced whole, so the
 * replacement is laid out in the document's own indentation.
 */
export function diffEdits(path: JsonPath, before: unknown, after: unknown): ValueEdit[] {
  if (!isObject(before) || !isObject(after)) return isDeepStrictEqual(before, after) ? [] : [{ path, value: after }];
  const keys = Object.keys(after);
  const missing = keys.filter((key) => !(key in before));
  if (
    missing.length > 0 &&
    (Object.keys(before).length === 0 || missing.some((key) => typeof after[key] === 'object' && after[key] !== null))
  ) {
    const kept = Object.fromEntries(Object.entries(before).filter(([key]) => !(key in after)));
    return [{ path, value: { ...after, ...kept } }];
  }
  return keys.flatMap((key, i) =>
    key in before
      ? diffEdits([...path, key], before[key], after[key])
      : [
          {
            path: [...path, key],
            value: after[key],
            insert: {
              after: keys
                .slice(0, i)
                .reverse()
                .find((k) => k in before),
            },
          },
        ],
  );
}

/** `text` with each edit made; throws when an edit's path (or, to insert, its object) is not in the text. */
export function replaceValues(text: string, edits: ValueEdit[]): string {
  const root = parseTree(text);
  if (!root) throw new Error('not a JSON document');
  const layout = detectLayout(text);
  const changes: Edit[] = [];
  for (const edit of edits) {
    const location = edit.path[0] === '$' ? edit.path.slice(1) : edit.path;
    if (edit.insert) {
      const parent = findNodeAtLocation(root, location.slice(0, -1));
      if (parent?.type !== 'object')
        throw new Error(`no object at ${edit.path.slice(0, -1).join('.')} to add ${String(edit.path.at(-1))} to`);
      changes.push(insertion(text, parent, String(location.at(-1)), edit.value, edit.insert.after));
      continue;
    }
    const node = findNodeAtLocation(root, location);
    if (!node) throw new Error(`no value at ${edit.path.join('.')} to replace`);
    const multiLine = text.slice(node.offset, node.offset + node.length).includes('\n');
    changes.push(...modify(text, location, edit.value, multiLine ? { formattingOptions: layout } : {}));
  }
  const edited = applyEdits(text, changes);
  JSON.parse(edited); // a bug here must never be written as a broken page
  return edited;
}

/**
 * Inserts `"key": value` (a plain value, on one line) after the property `after` of `parent`,
 * a non-empty object, separated as its other properties are: by what stands between two of
 * them, or for a lone property by a comma and the line break and indentation before it.
 */
function insertion(text: string, parent: Node, key: string, value: unknown, after: string | undefined): Edit {
  const properties = parent.children ?? [];
  const at = properties.findIndex((property) => property.children?.[0]?.value === after);
  const between = (a: Node | undefined, b: Node | undefined) =>
    a && b ? text.slice(a.offset + a.length, b.offset) : undefined;
  const lead = properties[0] ? text.slice(parent.offset + 1, properties[0].offset) : '';
  const separator = between(properties[0], properties[1]) ?? (lead.includes('\n') ? `,${lead}` : ', ');
  const [keyNode, valueNode] = properties[Math.max(at, 0)]?.children ?? [];
  const colon = between(keyNode, valueNode) ?? ': ';
  const property = `${JSON.stringify(key)}${colon}${JSON.stringify(value)}`;
  if (at >= 0) {
    const previous = properties[at]!;
    return { offset: previous.offset + previous.length, length: 0, content: `${separator}${property}` };
  }
  const first = properties[0];
  return first
    ? { offset: first.offset, length: 0, content: `${property}${separator}` }
    : { offset: parent.offset + 1, length: 0, content: property };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The document's indentation (the first indented line's) and line ending. */
function detectLayout(text: string): FormattingOptions {
  const indent = /\r?\n([ \t]+)\S/.exec(text)?.[1] ?? '  ';
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  return indent.startsWith('\t')
    ? { insertSpaces: false, tabSize: 1, eol }
    : { insertSpaces: true, tabSize: indent.length, eol };
}

export interface DuplicateKey {
  /** The object's JSON path and the key, as `$.meta.title`. */
  path: string;
  key: string;
}

/**
 * Keys that appear twice in one object: `JSON.parse` keeps the last, an editor of the text
 * finds the first, so a page with them cannot be rewritten faithfully. Call on text that
 * passed `parseJsonText` (the depth check bounds the recursion of jsonc-parser's visitor).
 */
export function duplicateKeys(text: string): DuplicateKey[] {
  const found: DuplicateKey[] = [];
  const objects: Array<Set<string>> = [];
  visit(text, {
    onObjectBegin: () => void objects.push(new Set()),
    onObjectEnd: () => void objects.pop(),
    onObjectProperty: (key, _offset, _length, _line, _column, pathSupplier) => {
      const keys = objects.at(-1);
      if (!keys) return;
      if (keys.has(key)) found.push({ path: formatPath(['$', ...(pathSupplier() as JsonPath), key]), key });
      keys.add(key);
    },
  });
  return found;
}
