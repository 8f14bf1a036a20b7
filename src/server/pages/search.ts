/**
 * `search=` over a site's pages, as Wagtail's database search backend answers it for a small
 * site: the words of the query against the words of each page's title and text (case folded,
 * HTML tags left out), any of them (`search_operator=or`, the default) or all (`and`); without
 * `order`, the best matches first, a word in the title counting more than one in the text.
 */
import { BadRequest } from './errors.js';
import { membership, type SitePage } from './site.js';

const TITLE_WEIGHT = 3;
/** Words of a query looked for: the first 32 distinct ones (a query of hundreds would cost a page each). */
export const MAX_TERMS = 32;
const WORD = /[\p{L}\p{N}]+/gu;

interface Words {
  title: Set<string>;
  text: Set<string>;
}

function wordsOf(text: string): string[] {
  return text.toLowerCase().match(WORD) ?? [];
}

function pageWords(page: SitePage): Words {
  const text = new Set<string>();
  const visit = (value: unknown): void => {
    if (typeof value === 'string') {
      // URLs and paths name files and pages; they are not what a page says.
      if (!/^(?:https?:\/\/|\/|\{base_url\})/.test(value))
        for (const word of wordsOf(value.replace(/<[^>]*>/g, ' '))) text.add(word);
    } else if (Array.isArray(value)) for (const item of value) visit(item);
    else if (typeof value === 'object' && value !== null) for (const item of Object.values(value)) visit(item);
  };
  for (const [key, value] of Object.entries(page.json)) if (key !== 'meta' && key !== 'title') visit(value);
  visit([page.meta.seo_title, page.meta.search_description]);
  return { title: new Set(wordsOf(typeof page.json.title === 'string' ? page.json.title : '')), text };
}

/**
 * The search of one site: each page's words are gathered when it is first searched, then kept; a
 * query's matches among all the site's pages are kept too (the last `MAX_QUERIES`), so that the next
 * request for it, with other filters or another page of results, picks from them.
 */
export class PageSearch {
  static readonly MAX_QUERIES = 32;
  readonly #all: readonly SitePage[];
  readonly #words = new Map<SitePage, Words>();
  readonly #queries = new Map<string, SitePage[]>();

  /** `all`: every page of the site, in tree order. */
  constructor(all: readonly SitePage[]) {
    this.#all = all;
  }

  /**
   * The pages that match `search`, best first when `byRelevance` (ties kept in the order given),
   * else in the order given. An empty query matches nothing, as Wagtail's does.
   */
  search(pages: readonly SitePage[], search: string, operator: string | undefined, byRelevance: boolean): SitePage[] {
    const mode = (operator ?? '').toLowerCase() || 'or';
    if (mode !== 'or' && mode !== 'and') throw new BadRequest("`operator` must be either 'or' or 'and'.");
    const terms = [...new Set(wordsOf(search))].slice(0, MAX_TERMS);
    if (terms.length === 0) return [];
    const key = `${mode}\n${terms.join(' ')}`;
    let best = this.#queries.get(key);
    if (!best) {
      best = this.#match(terms, mode);
      this.#queries.set(key, best);
      if (this.#queries.size > PageSearch.MAX_QUERIES) this.#queries.delete(this.#queries.keys().next().value!);
    }
    const size = this.#all.length;
    if (byRelevance) {
      const wanted = membership(pages, size);
      return best.filter((page) => wanted[page.order] === 1);
    }
    const matched = membership(best, size);
    return pages.filter((page) => matched[page.order] === 1);
  }

  /** The site's pages that match, best first (ties in tree order). */
  #match(terms: readonly string[], mode: 'or' | 'and'): SitePage[] {
    const scored: Array<{ page: SitePage; score: number }> = [];
    for (const page of this.#all) {
      let words = this.#words.get(page);
      if (!words) {
        words = pageWords(page);
        this.#words.set(page, words);
      }
      const { title, text } = words;
      let score = 0;
      let matched = 0;
      for (const term of terms) {
        const inTitle = title.has(term);
        if (inTitle || text.has(term)) matched++;
        score += (inTitle ? TITLE_WEIGHT : 0) + (text.has(term) ? 1 : 0);
      }
      if (mode === 'and' ? matched === terms.length : matched > 0) scored.push({ page, score });
    }
    return scored.sort((a, b) => b.score - a.score).map(({ page }) => page);
  }
}
