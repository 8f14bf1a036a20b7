/**
 * What `inspect` tells a developer about a page: its headline data, the block outline, every
 * Image with its five sizes, the linked resources, and every problem found. Pure data; the
 * CLI formats it.
 */

import { escapeText } from '../errors.js';
import { embedSource, plainText, shown } from '../page/text.js';
import type { Problem } from '../page/validate.js';
import { findImages, findObjects, formatPath } from '../page/walk.js';
import { RENDITION_KEYS, type RenditionKey } from '../renditions/rules.js';

export interface InspectReport {
  url: string;
  page: {
    id: unknown;
    title: unknown;
    type: unknown;
    slug: unknown;
    date: unknown;
    published: boolean;
    firstPublishedAt: unknown;
    htmlUrl: unknown;
    detailUrl: unknown;
    parent: { id: unknown; title: unknown; type: unknown } | null;
  };
  stage: { header: unknown; title: unknown; subtitle: unknown } | null;
  blocks: Array<{ index: number; type: string; id: string; summary: string }>;
  images: Array<{
    path: string;
    sizes: Partial<Record<RenditionKey, string>>;
    srcset: 'ok' | 'wrong' | 'missing' | 'absent';
    naming: 'ok' | 'wrong';
  }>;
  links: Array<{
    kind: 'article' | 'exhibition' | 'news entry' | 'news category' | 'presentation';
    title: string;
    url: string;
    path: string;
  }>;
  problems: Problem[];
  errors: number;
  warnings: number;
}

type Json = Record<string, unknown>;
const obj = (value: unknown): Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {};
/** A page's text on one line, linear in its length, escaped (page/text.ts). */
const text = plainText;
/** Any other value a page holds, as text to show, escaped. */
const show = (value: unknown): string => escapeText(shown(value));
const count = (list: unknown, noun: string) =>
  `${Array.isArray(list) ? list.length : 0} ${noun}${Array.isArray(list) && list.length === 1 ? '' : 's'}`;

const SUMMARIES: Record<string, (value: Json) => string> = {
  section_header: (v) => text(v.title),
  text: (v) => text(v.text),
  text_image: (v) => `${text(v.text, 40)} + image`,
  single_image: (v) => text(v.caption) || 'image',
  single_work: (v) => {
    if (Array.isArray(v.works))
      return `${count(v.works, 'work')}: ${v.works.map((w) => text(obj(w).title, 30)).join(', ')}`;
    const work = obj(v.work);
    return `${text(work.title, 40)}, ${text(work.artist, 30)}`;
  },
  dek_quote_cta: (v) => `${text(v.text, 40)} (${text(v.attribution, 20)})`,
  embed: (v) => embedSource(v.embed) ?? 'embed',
  custom_embed: (v) => `${text(v.caption, 40)} (${show(v.aspect_ratio_mobile)}, ${show(v.aspect_ratio_desktop)})`,
  banner: (v) => `${text(obj(v.banner).title, 40)} (${show(obj(v.banner).banner_type)})`,
  quarterly_articles: (v) => `${text(v.title, 40)}: ${count(v.articles, 'article')}`,
  news: (v) => `${text(v.title, 40)}: ${count(v.news_entries, 'entry')}`.replace('entrys', 'entries'),
  related_presentations: (v) =>
    `${text(v.title, 40)}: ${count(obj(v.large_presentations).presentations, 'presentation')}`,
  share_button: (v) => (Array.isArray(v.hashtags) ? v.hashtags.join(' ') : ''),
};

export function buildInspectReport(url: string, json: unknown, problems: Problem[]): InspectReport {
  const page = obj(json);
  const meta = obj(page.meta);
  const parent = obj(meta.parent);
  const stage = obj(page.presentation_stage);
  const body = Array.isArray(stage.body) ? stage.body : [];
  const imageProblems = new Map<string, Set<string>>();
  for (const problem of problems) {
    if (!problem.rule.startsWith('image-')) continue;
    const at = problem.path.replace(/\.(sizes|srcset|width|height).*$/, '');
    imageProblems.set(at, (imageProblems.get(at) ?? new Set()).add(problem.rule));
  }
  return {
    url,
    page: {
      id: page.id,
      title: page.title,
      type: meta.type,
      slug: meta.slug,
      date: page.date,
      published: typeof meta.first_published_at === 'string',
      firstPublishedAt: meta.first_published_at ?? null,
      htmlUrl: meta.html_url ?? null,
      detailUrl: meta.detail_url,
      parent: meta.parent ? { id: parent.id, title: parent.title, type: obj(parent.meta).type } : null,
    },
    stage: page.presentation_stage ? { header: stage.header, title: stage.title, subtitle: stage.subtitle } : null,
    blocks: body.map((block, index) => {
      const { type, id, value } = obj(block);
      const summarise = typeof type === 'string' && Object.hasOwn(SUMMARIES, type) ? SUMMARIES[type] : undefined;
      const unknown = `(not in the spec) ${show(Object.keys(obj(value)).join(', '))}`;
      return { index, type: show(type), id: show(id), summary: summarise ? summarise(obj(value)) : unknown };
    }),
    images: [...findImages(json)].map(({ path, image }) => {
      const at = formatPath(path);
      const rules = imageProblems.get(at) ?? new Set();
      const sizes = obj(image.sizes);
      return {
        path: at,
        sizes: Object.fromEntries(
          RENDITION_KEYS.filter((k) => k in sizes).map((k) => [
            k,
            `${show(obj(sizes[k]).width)}x${show(obj(sizes[k]).height)}`,
          ]),
        ),
        srcset:
          image.srcset === undefined
            ? rules.has('image-srcset-present')
              ? 'missing'
              : 'absent'
            : [...rules].some((r) => r.startsWith('image-srcset'))
              ? 'wrong'
              : 'ok',
        naming: rules.has('image-file-name') ? 'wrong' : 'ok',
      };
    }),
    links: findLinks(json),
    problems,
    errors: problems.filter((p) => p.severity === 'error').length,
    warnings: problems.filter((p) => p.severity === 'warning').length,
  };
}

function findLinks(json: unknown): InspectReport['links'] {
  const links: InspectReport['links'] = [];
  for (const { path, value } of findObjects(json)) {
    const at = formatPath(path);
    const url = typeof value.url === 'string' ? value.url : null;
    if (!url) continue;
    let kind: InspectReport['links'][number]['kind'] | null = null;
    if (/\/api\/quarterly\/articles\//.test(url)) kind = 'article';
    else if ('date_end_effective' in value) kind = 'exhibition';
    else if (/\/api\/gallery\/newsentries\//.test(url)) kind = 'news entry';
    else if (/\/api\/gallery\/newscategories\//.test(url)) kind = 'news category';
    else if ('list_presentation_stage' in value) kind = 'presentation';
    if (kind)
      links.push({ kind, title: text(value.title ?? obj(value.list_presentation_stage).title, 50), url, path: at });
  }
  return links;
}
