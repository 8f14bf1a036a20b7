/**
 * The nested `url` fields that spec 4.1 rule 2 is about: those of articles, exhibitions,
 * news entries and news categories inside a page's blocks. One home for where they are:
 * `validate.ts` checks them, the server rewrites them.
 */
import { BLOCK_VALUES } from './blocks.js';
import type { JsonPath } from './walk.js';

export type LinkKind = 'article' | 'exhibition' | 'news entry' | 'news category';

export interface ResourceUrl {
  kind: LinkKind;
  /** JSON path of the `url` field. */
  path: JsonPath;
  /** The object holding it: `holder.url` is the URL. */
  holder: Record<string, unknown>;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function* resourceUrls(page: unknown): Generator<ResourceUrl> {
  const body = isObject(page) && isObject(page.presentation_stage) ? page.presentation_stage.body : undefined;
  if (!Array.isArray(body)) return;
  for (const [i, block] of body.entries()) {
    if (!isObject(block) || !isObject(block.value)) continue;
    const at: JsonPath = ['$', 'presentation_stage', 'body', i, 'value'];
    const value = block.value;
    const items = function* (key: string) {
      const list = value[key];
      if (Array.isArray(list))
        for (const [j, item] of list.entries()) if (isObject(item)) yield [item, [...at, key, j] as JsonPath] as const;
    };
    if (block.type === 'quarterly_articles') {
      for (const [article, p] of items('articles')) yield { kind: 'article', path: [...p, 'url'], holder: article };
    } else if (block.type === 'news') {
      for (const [entry, p] of items('news_entries')) {
        yield { kind: 'news entry', path: [...p, 'url'], holder: entry };
        if (isObject(entry.category))
          yield { kind: 'news category', path: [...p, 'category', 'url'], holder: entry.category };
      }
    } else if (typeof block.type === 'string' && !Object.hasOwn(BLOCK_VALUES, block.type)) {
      // The exhibitions list, whose type name the spec does not show.
      for (const key of Object.keys(value)) {
        for (const [item, p] of items(key))
          if ('date_end_effective' in item) yield { kind: 'exhibition', path: [...p, 'url'], holder: item };
      }
    }
  }
}
