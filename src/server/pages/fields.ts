/**
 * Wagtail API v2's `fields` query parameter: its grammar (`a,b`, `-a`, `*`, `_`, `a(b,c)`), parsed
 * as `wagtail/api/v2/utils.py` parses it, with its error messages and positions (code points into
 * the whole parameter), and the set of fields it selects from a view's defaults.
 */
import { BadRequest } from './errors.js';

/** One entry of `fields`: a name, whether it is taken away (`-name`), and its nested fields. */
export interface FieldEntry {
  name: string;
  negated: boolean;
  nested: FieldEntry[] | null;
}

class ParseError extends Error {}

const isIdentifierChar = (char: string) => /^[\p{L}\p{N}_]$/u.test(char);

/**
 * `fields` parsed, or a `BadRequest` worded as Wagtail words it (`fields error: unexpected char
 * '(' at position 5`). An empty parameter is no entries: the defaults.
 */
export function parseFields(text: string): FieldEntry[] {
  const chars = Array.from(text);
  let at = 0;
  const unexpected = (char: string) => new ParseError(`unexpected char '${char}' at position ${at}`);

  const identifier = (): { name: string; negated: boolean } => {
    let first = true;
    let negated = false;
    let name = '';
    for (; at < chars.length; at++, first = false) {
      const char = chars[at]!;
      if (char === '(' || char === ')' || char === ',') {
        if (!name || ((name === '*' || name === '_') && char === '(')) throw unexpected(char);
        return { name, negated };
      }
      if (char === '-') {
        if (!first) throw unexpected(char);
        negated = true;
      } else if (char === '*' || char === '_') {
        if (name && char === '*') throw unexpected(char);
        name += char;
      } else if (isIdentifierChar(char)) {
        if (name === '*') throw unexpected(char);
        name += char;
      } else if (/^\s$/u.test(char)) {
        throw new ParseError(`unexpected whitespace at position ${at}`);
      } else {
        throw unexpected(char);
      }
    }
    return { name, negated };
  };

  const list = (inBrackets: boolean): FieldEntry[] => {
    const entries: FieldEntry[] = [];
    let firstName: string | null = null;
    while (at < chars.length) {
      const { name, negated } = identifier();
      const special = name === '*' || name === '_';
      if (special && entries.length > 0) throw new ParseError(`'${name}' must be in the first position`);
      if (special && negated) throw new ParseError(`'${name}' cannot be negated`);
      let nested: FieldEntry[] | null = null;
      if (chars[at] === '(') {
        if (negated) throw unexpected('(');
        at++;
        nested = list(true);
      }
      if (entries.length === 0) firstName = name;
      else if (firstName === '_' && negated) throw new ParseError("negated fields with '_' doesn't make sense");
      else if (firstName === '*' && !negated && !nested?.length)
        throw new ParseError("additional fields with '*' doesn't make sense");
      entries.push({ name, negated, nested });
      if (chars[at] === ')') {
        if (!inBrackets) throw unexpected(')');
        at++;
        return entries;
      }
      if (chars[at] === ',') {
        at++;
        if (at === chars.length || chars[at] === ',') throw unexpected(',');
      }
    }
    if (inBrackets) throw new ParseError('unexpected end of input (did you miss out a close bracket?)');
    return entries;
  };

  try {
    return list(false);
  } catch (error) {
    if (error instanceof ParseError) throw new BadRequest(`fields error: ${error.message}`);
    throw error;
  }
}

/** What a view offers: every field it knows (in output order), its defaults, and which take nested fields. */
export interface FieldSet {
  all: readonly string[];
  defaults: readonly string[];
  /** Fields that take nested fields, with what those may name (a page relation: a page's fields). */
  nested: ReadonlyMap<string, FieldSet>;
}

/**
 * The fields `entries` select from `set`, in `set.all`'s order, as Wagtail's serializer builds
 * them: `*` starts from every field, `_` from none, otherwise the defaults; then each entry adds
 * or takes away one in turn. Unknown names, then nested fields where none are taken, are a
 * `BadRequest` (`unknown fields: a, b`; `'title' does not support nested fields`).
 */
export function selectFields(set: FieldSet, entries: readonly FieldEntry[]): string[] {
  let rest = entries;
  let selected = new Set(set.defaults);
  if (rest[0]?.name === '*') {
    selected = new Set(set.all);
    rest = rest.slice(1);
  } else if (rest[0]?.name === '_') {
    selected = new Set();
    rest = rest.slice(1);
  }
  const mentioned = new Set<string>();
  const nested = new Map<string, FieldEntry[]>();
  for (const { name, negated, nested: sub } of rest) {
    if (negated) selected.delete(name);
    else {
      selected.add(name);
      if (sub?.length) nested.set(name, sub);
    }
    mentioned.add(name);
  }
  const known = new Set(set.all);
  const unknown = [...mentioned].filter((name) => !known.has(name)).sort();
  if (unknown.length > 0) throw new BadRequest(`unknown fields: ${unknown.join(', ')}`);
  for (const name of set.all) {
    if (!selected.has(name)) continue;
    const relation = set.nested.get(name);
    if (relation) selectFields(relation, nested.get(name) ?? []);
    else if (nested.has(name)) throw new BadRequest(`'${name}' does not support nested fields`);
  }
  return set.all.filter((name) => selected.has(name));
}
