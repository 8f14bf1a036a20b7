/**
 * A generated site for the benchmarks: a content folder (`pages/<id>.json`, as `serve` reads it,
 * with the sample's media) of `count` published presentation pages below the sample's category
 * page 200, each made from samples/content/pages/201.json. With `defectEvery`, every such page's
 * thumbnail names renditions that are not there (`gone-<id>.max-...`): a valid page, which `serve`
 * serves, whose five missing files `check --verify-files` finds, and no other page has a finding.
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const FIRST_ID = 1000;

export function makeSite(root, dir, count, { defectEvery = 0 } = {}) {
  const pages = path.join(dir, 'pages');
  mkdirSync(pages, { recursive: true });
  const read = (id) => JSON.parse(readFileSync(path.join(root, `samples/content/pages/${id}.json`), 'utf8'));
  writeFileSync(path.join(pages, '200.json'), JSON.stringify(read(200)));
  cpSync(path.join(root, 'samples/content/media'), path.join(dir, 'media'), { recursive: true });
  const template = read(201);
  const defective = [];
  for (let i = 0; i < count; i++) {
    const page = structuredClone(template);
    page.id = FIRST_ID + i;
    page.title = `Installation ${i}`;
    page.meta.slug = `installation-${i}`;
    page.meta.detail_url = `{base_url}/api/v2/pages/${page.id}/`;
    page.meta.html_url = `{base_url}/collecting/installations/installation-${i}/`;
    page.meta.first_published_at = '2026-03-01T08:00:00.000000';
    if (defectEvery && (i + 1) % defectEvery === 0) {
      const { thumbnail } = page.presentation_stage;
      const gone = (url) => url.replace(/\/media\/[^/.]+\./, `/media/gone-${page.id}.`);
      for (const size of Object.values(thumbnail.sizes)) size.url = gone(size.url);
      thumbnail.srcset = thumbnail.srcset.replace(/\/media\/[^ ]+/g, gone);
      defective.push(page.id);
    }
    writeFileSync(path.join(pages, `${page.id}.json`), JSON.stringify(page));
  }
  return { defective };
}
