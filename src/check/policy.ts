/**
 * What a config file changes in a check: each finding's severity (or its removal), the JSON
 * paths whose findings are dropped, and the pages not checked at all.
 */
import path from 'node:path';
import { z } from 'zod';
import { RULE_IDS } from './rules.js';

export const SEVERITIES = ['off', 'warn', 'error'] as const;
export type RuleSeverity = (typeof SEVERITIES)[number];

/** What a policy is made of: the config file's `rules` and `ignore` keys (config.ts takes them in). */
export const policySchema = z.strictObject({
  rules: z
    .partialRecord(z.enum(RULE_IDS), z.enum(SEVERITIES))
    .optional()
    .describe('severity per rule id: "off" drops its findings, "warn" makes them warnings, "error" errors'),
  ignore: z
    .strictObject({
      pages: z
        .array(z.string().min(1))
        .optional()
        .describe('globs of page files (relative to this file; ** crosses folders) or page URLs not checked at all'),
      paths: z
        .array(z.string().regex(/^\$/, 'a JSON path starts with $'))
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

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A glob of paths: `**` any number of folders, `*` any characters but `/`, `?` one of them. */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      const slash = glob[i + 2] === '/';
      source += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else source += escapeRegExp(c);
  }
  return new RegExp(`^${source}$`);
}

/** A JSON path pattern: `*` one key, `[*]` any index; it matches the path itself and everything below it. */
export function jsonPathPattern(pattern: string): RegExp {
  const source = pattern
    .split(/(\[\*\]|\*)/)
    .map((part) => (part === '[*]' ? '\\[\\d+\\]' : part === '*' ? '[^.[]+' : escapeRegExp(part)))
    .join('');
  return new RegExp(`^${source}(?:$|[.[])`);
}

/** The policy of `config`; page globs are relative to `baseDir` (the config file's folder). */
export function createPolicy(config: PolicyConfig, baseDir: string = process.cwd()): Policy {
  const rules = (config.rules ?? {}) as Record<string, RuleSeverity | undefined>;
  const paths = (config.ignore?.paths ?? []).map(jsonPathPattern);
  const pages = (config.ignore?.pages ?? []).map((glob) => ({
    glob,
    pattern: globToRegExp(glob.replace(/^\.\//, '')),
  }));
  return {
    severity(rule, severity) {
      const set = rules[rule];
      return set === undefined ? severity : set === 'off' ? null : set === 'warn' ? 'warning' : 'error';
    },
    ignoresPath: (jsonPath) => paths.some((pattern) => pattern.test(jsonPath)),
    ignoresPage(source) {
      if (pages.length === 0) return false;
      const relative = /^https?:\/\//i.test(source)
        ? source
        : path.relative(baseDir, path.resolve(source)).split(path.sep).join('/');
      return pages.some(({ glob, pattern }) => pattern.test(relative) || glob === source);
    },
  };
}
