/**
 * Page variants in test/page/variants/: each is the valid base page with a few values
 * set or deleted by JSON path, and the problems it must produce. They are patches, not
 * pages, so they live with the tests, where `check samples/pages` does not read them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ValidateOptions } from '../../src/page/validate.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const PAGES = path.resolve(HERE, '../../samples/pages');
export const VARIANTS = path.join(HERE, 'variants');

export interface Variant {
  name: string;
  description: string;
  page: unknown;
  options: ValidateOptions;
  expect: Array<{ severity: string; rule: string; path: string }>;
}

/** `$.a.b[2].c` -> ['a', 'b', 2, 'c'] */
function parsePath(jsonPath: string): Array<string | number> {
  return [...jsonPath.slice(1).matchAll(/\.([A-Za-z_$][\w$]*)|\[(\d+)\]/g)].map((m) =>
    m[2] !== undefined ? Number(m[2]) : m[1]!,
  );
}

function apply(
  page: unknown,
  jsonPath: string,
  change: (parent: Record<string | number, unknown>, key: string | number) => void,
) {
  const parts = parsePath(jsonPath);
  let node = page as Record<string | number, unknown>;
  for (const part of parts.slice(0, -1)) node = node[part] as Record<string | number, unknown>;
  change(node, parts.at(-1)!);
}

export function loadPage(file: string): unknown {
  return JSON.parse(readFileSync(path.join(PAGES, file), 'utf8'));
}

export function loadVariants(): Variant[] {
  const dir = VARIANTS;
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => {
      const spec = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
      const page = JSON.parse(readFileSync(path.join(dir, spec.base), 'utf8'));
      for (const [at, value] of Object.entries(spec.set ?? {}))
        apply(page, at, (parent, key) => (parent[key] = structuredClone(value)));
      for (const at of spec.delete ?? []) apply(page, at, (parent, key) => delete parent[key]);
      return {
        name: file.replace(/\.json$/, ''),
        description: spec.description,
        page,
        options: spec.options ?? {},
        expect: spec.expect,
      };
    });
}
