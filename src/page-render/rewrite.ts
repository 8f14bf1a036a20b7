/**
 * Replaces values in a JSON text and leaves every other byte as it was: key order, spacing
 * and line breaks of untouched values survive. The edits come from jsonc-parser (VS Code's
 * JSON editing library); a replaced value is laid out in the document's own indentation,
 * or on one line when the value it replaces was on one line.
 */
import { applyEdits, findNodeAtLocation, modify, parseTree, type Edit, type FormattingOptions } from 'jsonc-parser';
import type { JsonPath } from '../page/walk.js';

export interface ValueEdit {
  /** Where the value is, as `findImages` gives it (`['$', 'presentation_stage', 'thumbnail', 'sizes']`). */
  path: JsonPath;
  value: unknown;
}

/** `text` with each edit's value replaced; throws when an edit's path is not in the text. */
export function replaceValues(text: string, edits: ValueEdit[]): string {
  const root = parseTree(text);
  if (!root) throw new Error('not a JSON document');
  const layout = detectLayout(text);
  const changes: Edit[] = [];
  for (const edit of edits) {
    const location = edit.path[0] === '$' ? edit.path.slice(1) : edit.path;
    const node = findNodeAtLocation(root, location);
    if (!node) throw new Error(`no value at ${edit.path.join('.')} to replace`);
    const multiLine = text.slice(node.offset, node.offset + node.length).includes('\n');
    changes.push(...modify(text, location, edit.value, multiLine ? { formattingOptions: layout } : {}));
  }
  return applyEdits(text, changes);
}

/** The document's indentation (the first indented line's) and line ending. */
function detectLayout(text: string): FormattingOptions {
  const indent = /\r?\n([ \t]+)\S/.exec(text)?.[1] ?? '  ';
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  return indent.startsWith('\t') ? { insertSpaces: false, tabSize: 1, eol } : { insertSpaces: true, tabSize: indent.length, eol };
}
