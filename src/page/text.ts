/**
 * A page's strings shown on one line (inspect's block summaries, link titles): tags taken
 * out, whitespace collapsed, cut to a length, everything a terminal would act on escaped.
 * One left-to-right pass with no backtracking, so a hostile field (400 KB of unclosed `<`)
 * costs what its length costs; a regular expression like `/<[^>]*>/g` rescans the rest of
 * the string from every `<` that is never closed, which is quadratic.
 */
import { escapeText } from '../errors.js';

const BREAK = /^<br\s*\/?>$/i;

/**
 * Any JSON value as text: a string as it is, anything else as JSON (never `String()`, which
 * throws on an object whose `toString` is not a function, as a hostile page can send).
 */
export function shown(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
}

/**
 * `value` as plain text on one line: `<br>` a space, other tags removed, an unclosed `<` kept, at
 * most `max` characters.
 */
export function plainText(value: unknown, max = 60): string {
  const input = value === null || value === undefined ? '' : shown(value);
  let out = '';
  for (let i = 0; i < input.length; ) {
    if (input[i] !== '<') {
      const next = input.indexOf('<', i);
      const end = next === -1 ? input.length : next;
      out += input.slice(i, end);
      i = end;
      continue;
    }
    const close = input.indexOf('>', i + 1);
    // No `>` after this `<`: none after any later `<` either, so the rest is text.
    if (close === -1) {
      out += input.slice(i);
      break;
    }
    if (BREAK.test(input.slice(i, close + 1))) out += ' ';
    i = close + 1;
  }
  const plain = escapeText(out.replace(/\s+/g, ' ').trim());
  return plain.length > max ? `${plain.slice(0, max - 1)}…` : plain;
}

/** The `src` of the first `src="..."` in an embed's HTML, found in linear time; null when none. */
export function embedSource(html: unknown): string | null {
  const text = html === null || html === undefined ? '' : shown(html);
  const at = text.indexOf('src="');
  if (at === -1) return null;
  const end = text.indexOf('"', at + 5);
  return end > at + 5 ? escapeText(text.slice(at + 5, end)) : null;
}
