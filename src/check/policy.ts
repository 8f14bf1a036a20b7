/**
 * What a config file changes in a check: each finding's severity (or its removal), the JSON
 * paths whose findings are dropped, and the pages not checked at all.
 */
import path from 'node:path';
import { z } from 'zod';
import { isUrlSource } from './baseline.js';
import { RULE_IDS } from './rules.js';

export const SEVERITIES = ['off', 'warn', 'error'] as const;
export type RuleSeverity = (typeof SEVERITIES)[number];

/**
 * The longest entry `ignore.paths` and `ignore.pages` take, in characters: far more than any real
 * JSON path, glob or page URL, and it bounds the work each finding or page costs.
 */
export const MAX_PATTERN_LENGTH = 2048;
const tooLong = `longer than ${MAX_PATTERN_LENGTH} characters`;

/** What a policy is made of: the config file's `rules` and `ignore` keys (config.ts takes them in). */
export const policySchema = z.strictObject({
  // An object of optional keys, not a partial record: zod's records skip a `__proto__` key
  // silently, where a strict object refuses it as it refuses any other key that is not a rule id.
  rules: z
    .strictObject(Object.fromEntries(RULE_IDS.map((id) => [id, z.enum(SEVERITIES).optional()])))
    .optional()
    .describe('severity per rule id: "off" drops its findings, "warn" makes them warnings, "error" errors'),
  ignore: z
    .strictObject({
      pages: z
        .array(z.string().min(1).max(MAX_PATTERN_LENGTH, tooLong))
        .optional()
        .describe('globs of page files (relative to this file; ** crosses folders) or page URLs not checked at all'),
      paths: z
        .array(z.string().regex(/^\$/, 'a JSON path starts with $').max(MAX_PATTERN_LENGTH, tooLong))
        .optional()
        .describe(
          'JSON paths whose findings (at the path or below it) are dropped; * stands for one key, [*] for any index',
        ),
    })
    .optional(),
});
export type PolicyConfig = z.infer<typeof policySchema>;

export interface Policy {
  /** The severity a finding of `rule` gets, or null when the rule is off. */
  severity(rule: string, severity: 'error' | 'warning'): 'error' | 'warning' | null;
  /** A finding at `jsonPath` is dropped. */
  ignoresPath(jsonPath: string): boolean;
  /** The page from `source` (file path or URL) is not checked. */
  ignoresPage(source: string): boolean;
}

/**
 * One step of a pattern: one character that passes `test`, any run of them, or `**\/` (any
 * run of folders: nothing, or anything that ends with `/`).
 */
type Token =
  | { kind: 'one'; test: (c: string) => boolean }
  | { kind: 'many'; test: (c: string) => boolean }
  | { kind: 'folders' };

/**
 * Whether `tokens` match a prefix of `text` that `accept` takes (given where it ends). The
 * tokens run as a set of states over the text, never by backtracking, so a match costs at most
 * text length times pattern length, whatever the pattern (`**\/**\/**\/b.json`, `*a*a*a*b`).
 */
function matches(tokens: readonly Token[], text: string, accept: (end: number) => boolean): boolean {
  const m = tokens.length;
  // at[i]: the text so far matched tokens before i; inside[i]: within a folder name of `**/` token i.
  let at = new Uint8Array(m + 1);
  let inside = new Uint8Array(m + 1);
  let next = new Uint8Array(m + 1);
  let nextInside = new Uint8Array(m + 1);
  // A `many` or `folders` token may match nothing; epsilon steps only go forward, so one pass closes them.
  const skip = (states: Uint8Array) => {
    for (let i = 0; i < m; i++) if (states[i] && tokens[i]!.kind !== 'one') states[i + 1] = 1;
  };
  at[0] = 1;
  skip(at);
  for (let p = 0; ; p++) {
    if (at[m] && accept(p)) return true;
    if (p === text.length) return false;
    const c = text[p]!;
    next.fill(0);
    nextInside.fill(0);
    let alive = false;
    for (let i = 0; i < m; i++) {
      const token = tokens[i]!;
      if (inside[i] || (at[i] && token.kind === 'folders')) {
        (c === '/' ? next : nextInside)[i] = 1;
        alive = true;
      }
      if (!at[i] || token.kind === 'folders' || !token.test(c)) continue;
      if (token.kind === 'one') next[i + 1] = 1;
      else next[i] = 1;
      alive = true;
    }
    if (!alive) return false;
    skip(next);
    [at, next] = [next, at];
    [inside, nextInside] = [nextInside, inside];
  }
}

const notSlash = (c: string) => c !== '/';
const anything = () => true;
const literal = (text: string): Token[] => Array.from(text, (l) => ({ kind: 'one', test: (c) => c === l }));

/**
 * A glob of paths: `**\/` any number of folders, `**` any characters, `*` any characters but
 * `/`, `?` one of them. A run of `**\/` is one.
 */
export function globMatcher(glob: string): (path: string) => boolean {
  const tokens: Token[] = [];
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      const slash = glob[i + 2] === '/';
      if (!slash) tokens.push({ kind: 'many', test: anything });
      else if (tokens.at(-1)?.kind !== 'folders') tokens.push({ kind: 'folders' });
      i += slash ? 2 : 1;
    } else if (c === '*') tokens.push({ kind: 'many', test: notSlash });
    else if (c === '?') tokens.push({ kind: 'one', test: notSlash });
    else tokens.push(...literal(c));
  }
  return (path) => matches(tokens, path, (end) => end === path.length);
}

const keyChar = (c: string) => c !== '.' && c !== '[';
const digit = (c: string) => c >= '0' && c <= '9';

/** A JSON path pattern: `*` one key, `[*]` any index; it matches the path itself and everything below it. */
export function jsonPathMatcher(pattern: string): (jsonPath: string) => boolean {
  const tokens = pattern.split(/(\[\*\]|\*)/).flatMap((part): Token[] =>
    part === '[*]'
      ? [...literal('['), { kind: 'one', test: digit }, { kind: 'many', test: digit }, ...literal(']')]
      : part === '*'
        ? [
            { kind: 'one', test: keyChar },
            { kind: 'many', test: keyChar },
          ]
        : literal(part),
  );
  return (jsonPath) =>
    matches(tokens, jsonPath, (end) => end === jsonPath.length || jsonPath[end] === '.' || jsonPath[end] === '[');
}

/** The policy of `config`; page globs are relative to `baseDir` (the config file's folder). */
export function createPolicy(config: PolicyConfig, baseDir: string = process.cwd()): Policy {
  // A Map, not the object: a rule id is looked up among the config's own keys, never its prototype's.
  const rules = new Map(Object.entries(config.rules ?? {}) as Array<[string, RuleSeverity | undefined]>);
  const paths = (config.ignore?.paths ?? []).map(jsonPathMatcher);
  const pages = (config.ignore?.pages ?? []).map((glob) => ({ glob, matches: globMatcher(glob.replace(/^\.\//, '')) }));
  return {
    severity(rule, severity) {
      const set = rules.get(rule);
      return set === undefined ? severity : set === 'off' ? null : set === 'warn' ? 'warning' : 'error';
    },
    ignoresPath: (jsonPath) => paths.some((matches) => matches(jsonPath)),
    ignoresPage(source) {
      if (pages.length === 0) return false;
      const relative = isUrlSource(source)
        ? source
        : path.relative(baseDir, path.resolve(source)).split(path.sep).join('/');
      return pages.some(({ glob, matches }) => matches(relative) || glob === source);
    },
  };
}
