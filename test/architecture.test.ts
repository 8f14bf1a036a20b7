/**
 * The shape of src/: no module imports itself back through others (type-only imports count:
 * a cycle of types is a boundary drawn in the wrong place all the same), folders import only the
 * folders below them (FOLDERS; packages/ stands for the packages themselves, which any folder may
 * use), nothing outside src/cli reaches into the CLI, and no module outside it holds threads of the
 * process's own.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../src');

/** Every module of src/ with the modules of src/ it imports (statically, dynamically, or for types). */
function importGraph(): Map<string, string[]> {
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(path.join(SRC, file), 'utf8'), true, true);
    const local = importedFiles
      .map(({ fileName }) => fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => path.relative(SRC, path.resolve(SRC, path.dirname(file), name.replace(/\.js$/, '.ts'))));
    graph.set(file, local);
  }
  return graph;
}

/** The cycles of `graph`: its strongly connected components of more than one module (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (stack.includes(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component = stack.splice(stack.indexOf(node));
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

describe('the architecture of src/', () => {
  const graph = importGraph();

  it('reads every module and its imports', () => {
    expect(graph.get('cli/program.ts')).toContain('cli/commands/render/command.ts');
    expect(graph.get('renditions/session.ts')).toContain('renditions/render-one.ts');
    // The test can see a cycle: two modules that import each other.
    expect(
      cycles(
        new Map([
          ['a.ts', ['b.ts']],
          ['b.ts', ['a.ts']],
        ]),
      ),
    ).toEqual([['a.ts', 'b.ts']]);
  });

  it('has no import cycles', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('keeps the CLI a shell: nothing outside src/cli imports from it', () => {
    const reaching = [...graph]
      .filter(([file]) => !file.startsWith('cli/'))
      .flatMap(([file, imports]) =>
        imports.filter((imported) => imported.startsWith('cli/')).map((i) => `${file} -> ${i}`),
      );
    expect(reaching).toEqual([]);
  });

  it('imports across folders only as FOLDERS allows: no sideways import', () => {
    const crossing = [...graph].flatMap(([file, imports]) =>
      imports
        .filter((imported) => folderOf(imported) !== folderOf(file) && folderOf(imported) !== 'packages')
        .filter((imported) => !FOLDERS[folderOf(file)]?.includes(folderOf(imported)))
        .map((imported) => `${file} -> ${imported}`),
    );
    expect(crossing).toEqual([]);
    // The table itself is layered: no two folders may import each other, but for the one exception named.
    const mutual = Object.entries(FOLDERS).flatMap(([folder, allowed]) =>
      allowed
        .filter((other) => FOLDERS[other]?.includes(folder) && folder < other)
        .map((other) => `${folder} <-> ${other}`),
    );
    expect(mutual).toEqual(['(base) <-> page']);
  });

  it('keeps sharp out of quality/: the metric and its search take pixels, pixels/ decodes them', () => {
    const withSharp = [...graph]
      .filter(([file]) => file.startsWith('quality/'))
      .filter(
        ([file, imports]) => imports.includes(SHARP) || /'sharp'/.test(readFileSync(path.join(SRC, file), 'utf8')),
      )
      .map(([file]) => file);
    expect(withSharp).toEqual([]);
    expect(graph.get('pixels/read.ts')).toContain(SHARP);
  });

  it("owns no process's threads: no module-level score pool or worker thread outside src/cli", () => {
    const singletons = (file: string, text: string) =>
      ts
        .createSourceFile(file, text, ts.ScriptTarget.Latest, true)
        .statements.filter(ts.isVariableStatement)
        .flatMap((statement) => statement.declarationList.declarations)
        .filter(
          (declaration) => THREADS.test(declaration.type?.getText() ?? '') || THREADS.test(initializer(declaration)),
        )
        .map((declaration) => `${file}: ${declaration.name.getText()}`);
    // The test can see one: a pool made on first use and kept for the process.
    expect(singletons('a.ts', 'let shared: ScorePool | undefined;\nconst pool = new Worker(file);')).toEqual([
      'a.ts: shared',
      'a.ts: pool',
    ]);
    const found = [...graph.keys()]
      .filter((file) => !file.startsWith('cli/'))
      .flatMap((file) => singletons(file, readFileSync(path.join(SRC, file), 'utf8')));
    expect(found).toEqual([]);
  });
});

/** sharp, as src/ loads it (packages/require.ts). */
const SHARP = 'packages/sharp.ts';

/** A type or a construction that holds threads: a score pool, a worker thread. */
const THREADS = /\b(ScorePool|Worker)\b/;

/** A declaration's initializer as written, when it constructs something (else empty). */
const initializer = (declaration: ts.VariableDeclaration) =>
  declaration.initializer && ts.isNewExpression(declaration.initializer) ? declaration.initializer.getText() : '';

/**
 * Which folders of src/ each folder's modules may import (besides its own), from the bottom up. The
 * base is the root's shared modules (errors.ts, json.ts, styles.ts, units.ts); the entries (index.ts,
 * api/) and the CLI sit on top. One exception, named: json.ts reads JSON on a page's terms
 * (page/json-text.ts), while page/ uses the base's errors.
 */
const WORK = [
  '(base)',
  'check',
  'client',
  'contact-sheet',
  'inspect',
  'markup',
  'page',
  'page-render',
  'pixels',
].concat(['quality', 'queue', 'renditions', 'server', 'storage']);
const FOLDERS: Record<string, readonly string[]> = {
  '(base)': ['page'],
  fs: ['(base)'],
  storage: ['(base)', 'fs'],
  quality: ['(base)'],
  pixels: ['(base)', 'quality'],
  picture: ['(base)', 'pixels', 'quality'],
  html: ['(base)'],
  renditions: ['(base)', 'fs', 'picture', 'pixels', 'quality', 'storage'],
  markup: ['(base)', 'renditions'],
  page: ['(base)', 'renditions'],
  client: ['(base)', 'fs', 'page'],
  server: ['(base)', 'fs', 'page', 'renditions', 'storage'],
  'contact-sheet': ['(base)', 'fs', 'html', 'quality', 'renditions', 'storage'],
  queue: ['(base)', 'quality', 'renditions', 'storage'],
  check: ['(base)', 'client', 'fs', 'html', 'page', 'picture', 'renditions', 'storage'],
  inspect: ['(base)', 'check', 'client', 'page', 'renditions'],
  'page-render': ['(base)', 'check', 'client', 'page', 'renditions', 'storage'],
  // The entries and the CLI: every folder of the work (the CLI reads files itself too: fs).
  '(entry)': WORK,
  cli: [...WORK, 'fs'],
};

/** The folder of a module of src/ in FOLDERS' terms. */
function folderOf(file: string): string {
  if (file === 'index.ts' || file.startsWith('api/')) return '(entry)';
  return file.includes('/') ? file.split('/')[0]! : '(base)';
}
