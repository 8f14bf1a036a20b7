/**
 * Every relative link in README.md and docs/ points at a file that exists, and every anchor at
 * a heading of that file (GitHub's anchors); every page under docs/ is in the index.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchors, links, markdownFiles, ROOT, readDoc, slug } from './markdown.js';

describe('links in README.md and docs/', () => {
  it('computes anchors as GitHub does', () => {
    expect(slug("A page's images: `--page`")).toBe('a-pages-images---page');
    expect(slug('2.5 Image')).toBe('25-image');
    expect(slug('`content-api queue status`')).toBe('content-api-queue-status');
    expect([...anchors('# Exit codes\n## Exit codes\n```\n# not a heading\n```\n')]).toEqual([
      'exit-codes',
      'exit-codes-1',
    ]);
  });

  it.each(markdownFiles())('every relative link and anchor in %s resolves', (file) => {
    const broken: string[] = [];
    for (const target of links(readDoc(file))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      const [pathPart = '', anchor] = target.split('#');
      const resolved = pathPart ? path.resolve(ROOT, path.dirname(file), decodeURI(pathPart)) : path.join(ROOT, file);
      if (!existsSync(resolved)) {
        broken.push(`${target}: no such file`);
        continue;
      }
      if (anchor === undefined) continue;
      if (!resolved.endsWith('.md') || statSync(resolved).isDirectory()) {
        broken.push(`${target}: an anchor into a file that is not Markdown`);
        continue;
      }
      const relative = path.relative(ROOT, resolved).split(path.sep).join('/');
      if (!anchors(readDoc(relative)).has(anchor)) broken.push(`${target}: no heading makes #${anchor}`);
    }
    expect(broken, `broken links in ${file}`).toEqual([]);
  });

  it('lists every page under docs/ in docs/README.md', () => {
    const index = new Set(links(readDoc('docs/README.md')).map((target) => path.posix.join('docs', target)));
    const pages = markdownFiles().filter((file) => file.startsWith('docs/') && file !== 'docs/README.md');
    expect(pages.filter((page) => !index.has(page))).toEqual([]);
  });
});
