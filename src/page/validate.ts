/**
 * Validates a page as the API serves it: its shape (zod, every problem at once), then the
 * rules the spec states beyond shape, and the rendition rules of every Image in it.
 * Problems are errors, or warnings where the spec says a shape is not shown; nothing is
 * dropped and nothing throws on bad data.
 */
import type { z } from 'zod';
import { escapeText } from '../errors.js';
import { type ImageRule, verifyImage } from '../renditions/verify.js';
import { BLOCK_VALUES, type BlockType, exhibitionsArray, exhibitionsListValueSchema } from './blocks.js';
import { MAX_JSON_DEPTH, valueDepth } from './json-text.js';
import { resourceUrls } from './links.js';
import { pageEnvelopeSchema } from './page.js';
import { shown } from './text.js';
import type { Page } from './types.js';
import { findImages, findObjects, formatPath, type JsonPath } from './walk.js';

export type Severity = 'error' | 'warning';

/** Rule ids beyond the image rules of `renditions/verify.ts`. */
export const PAGE_RULES = {
  schema: 'the value has the type and shape the spec gives',
  'unknown-key': 'a key the spec does not name (warning)',
  'unknown-block-type': 'a block type the spec does not show (warning)',
  'not-shown-type': 'a field the spec shows only as null holds a value (warning: its type is not shown)',
  'exhibition-date-end-effective': 'date_end_effective equals date_extended when set, else date_end',
  'exhibition-is-extended': 'is_extended is true exactly when date_extended is set',
  'detail-url': "meta.detail_url is the page endpoint URL of the page's own id, without a query string",
  'format-api-url':
    'with format=api, the url of articles, exhibitions, news entries and categories ends with ?format=api ' +
    '(and only then)',
} as const;

export type PageRule = keyof typeof PAGE_RULES;

export interface Problem {
  severity: Severity;
  /** JSON path, e.g. `$.presentation_stage.body[2].value.image.sizes.md`. */
  path: string;
  rule: PageRule | ImageRule;
  message: string;
}

export interface ValidateOptions {
  /** The page was requested with `?format=api`. */
  formatApi?: boolean;
  /** The API's base URL, when known: `meta.detail_url` must then be exactly `{base}/api/v2/pages/{id}/`. */
  baseUrl?: string;
}

export interface Validation {
  /** The page as given, typed, when it has no error (warnings allowed); otherwise null. */
  page: Page | null;
  problems: Problem[];
}

/** Fields the spec shows only as null (2.13): a value there is reported, never rejected. */
const ONLY_NULL_FIELDS = new Set([
  'alias_of',
  'admin_url',
  'publish_time',
  'publish_time_display',
  'status_display',
  'class_name',
  'price',
  'duration',
  'cta',
]);

export function validatePage(json: unknown, options: ValidateOptions = {}): Validation {
  if (valueDepth(json) > MAX_JSON_DEPTH) {
    // Every walk below (zod's included) recurses: a page this deep is reported whole.
    const message = `nested deeper than ${MAX_JSON_DEPTH} levels (the limit); not checked further`;
    return { page: null, problems: [{ severity: 'error', path: '$', rule: 'schema', message }] };
  }
  const problems: Problem[] = [];
  problems.push(...zodProblems(pageEnvelopeSchema, json, ['$']));
  const body = (json as { presentation_stage?: { body?: unknown } } | null)?.presentation_stage?.body;
  if (Array.isArray(body)) {
    for (const [i, block] of body.entries())
      problems.push(...blockProblems(block, ['$', 'presentation_stage', 'body', i]));
  }

  for (const { path, value } of findObjects(json, ['$'])) {
    for (const [key, field] of Object.entries(value)) {
      if (ONLY_NULL_FIELDS.has(key) && field !== null && field !== undefined) {
        problems.push({
          severity: 'warning',
          path: formatPath([...path, key]),
          rule: 'not-shown-type',
          message: `${key} holds a value; the spec shows it only as null, so its type is not known`,
        });
      }
    }
    if ('date_end_effective' in value && 'date_end' in value) problems.push(...exhibitionProblems(value, path));
  }
  problems.push(...detailUrlProblems(json, options));
  problems.push(...formatApiProblems(json, options));
  for (const { path, image, srcsetRequired } of findImages(json)) {
    for (const finding of verifyImage(image, { srcsetRequired })) {
      problems.push({
        severity: 'error',
        path: formatPath([...path, ...finding.path.split('.')]),
        rule: finding.rule,
        message: finding.message,
      });
    }
  }
  const ok = !problems.some((problem) => problem.severity === 'error');
  // Paths and messages quote the page's keys and values: escaped here, once, for every reporter.
  const printable = problems.map((p) => ({ ...p, path: escapeText(p.path), message: escapeText(p.message) }));
  return { page: ok ? (json as Page) : null, problems: dedupe(printable) };
}

/** zod issues as problems; keys the spec does not name are warnings, one per key. */
export function zodProblems(schema: z.ZodType, value: unknown, at: JsonPath): Problem[] {
  const result = schema.safeParse(value, {
    error: (issue) => (issue.input === undefined ? 'required, but missing' : undefined),
  });
  if (result.success) return [];
  const problems: Problem[] = [];
  for (const issue of result.error.issues) {
    const path = [...at, ...(issue.path as JsonPath)];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        problems.push({
          severity: 'warning',
          path: formatPath([...path, key]),
          rule: 'unknown-key',
          message: `${key} is not a key the spec names here`,
        });
      }
    } else {
      problems.push({ severity: 'error', path: formatPath(path), rule: 'schema', message: issue.message });
    }
  }
  return problems;
}

function blockProblems(block: unknown, at: JsonPath): Problem[] {
  const { type, value } = (block ?? {}) as { type?: unknown; value?: unknown };
  if (typeof type !== 'string' || typeof value !== 'object' || value === null) return []; // the envelope reported it
  const valueAt = [...at, 'value'];
  if (Object.hasOwn(BLOCK_VALUES, type)) return zodProblems(BLOCK_VALUES[type as BlockType], value, valueAt);
  const problems: Problem[] = [];
  const lists = Object.entries(value).filter(([, v]) => Array.isArray(v));
  if (exhibitionsListValueSchema.safeParse(value).success && lists.length === 1) {
    problems.push({
      severity: 'warning',
      path: formatPath([...at, 'type']),
      rule: 'unknown-block-type',
      message:
        `block type '${type}' is not named in the spec; ` +
        'its value has the shape of the exhibitions list and was checked as one',
    });
    const [key, list] = lists[0]!;
    problems.push(...zodProblems(exhibitionsArray, list, [...valueAt, key]));
  } else {
    problems.push({
      severity: 'warning',
      path: formatPath([...at, 'type']),
      rule: 'unknown-block-type',
      message: `block type '${type}' is not in the spec; its value was not checked`,
    });
  }
  return problems;
}

function exhibitionProblems(exhibition: Record<string, unknown>, at: JsonPath): Problem[] {
  const problems: Problem[] = [];
  const { date_end, date_extended, date_end_effective, is_extended } = exhibition;
  const expected = date_extended ?? date_end;
  if (date_end_effective !== expected) {
    problems.push({
      severity: 'error',
      path: formatPath([...at, 'date_end_effective']),
      rule: 'exhibition-date-end-effective',
      message:
        `date_end_effective is ${shown(date_end_effective)}, ` +
        `expected ${shown(expected)} (${date_extended ? 'date_extended' : 'date_end'})`,
    });
  }
  if (typeof is_extended === 'boolean' && is_extended !== (date_extended !== null && date_extended !== undefined)) {
    problems.push({
      severity: 'error',
      path: formatPath([...at, 'is_extended']),
      rule: 'exhibition-is-extended',
      message: `is_extended is ${is_extended} but date_extended is ${date_extended ? 'set' : 'not set'}`,
    });
  }
  return problems;
}

function detailUrlProblems(json: unknown, options: ValidateOptions): Problem[] {
  const page = json as { id?: unknown; meta?: { detail_url?: unknown } } | null;
  const detail = page?.meta?.detail_url;
  if (typeof detail !== 'string' || typeof page?.id !== 'number') return [];
  const path = '$.meta.detail_url';
  const suffix = `/api/v2/pages/${page.id}/`;
  const expected = options.baseUrl ? `${options.baseUrl.replace(/\/+$/, '')}${suffix}` : null;
  if (/[?#]/.test(detail))
    return [{ severity: 'error', path, rule: 'detail-url', message: `${detail} has a query string or fragment` }];
  if (expected ? detail !== expected : !detail.endsWith(suffix)) {
    return [
      {
        severity: 'error',
        path,
        rule: 'detail-url',
        message: `${detail} is not ${expected ?? `the endpoint of page ${page.id} (…${suffix})`}`,
      },
    ];
  }
  return [];
}

/** Spec 4.1 rule 2: with format=api the nested resource URLs end with `?format=api`, and only then. */
function formatApiProblems(json: unknown, options: ValidateOptions): Problem[] {
  const problems: Problem[] = [];
  for (const { kind, path, holder } of resourceUrls(json)) {
    const url = holder.url;
    if (typeof url !== 'string') continue;
    const at = formatPath(path);
    if (options.formatApi && !url.endsWith('?format=api')) {
      problems.push({
        severity: 'error',
        path: at,
        rule: 'format-api-url',
        message: `${kind} url ${url} does not end with ?format=api although the page was requested with format=api`,
      });
    }
    if (!options.formatApi && url.includes('format=api')) {
      problems.push({
        severity: 'error',
        path: at,
        rule: 'format-api-url',
        message: `${kind} url ${url} carries format=api although the page was requested without it`,
      });
    }
  }
  return problems;
}

/**
 * A page value in a message: strings as they are, anything else as JSON (never `String(value)`,
 * which a `toString` key breaks).
 */
function dedupe(problems: Problem[]): Problem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.path}|${p.rule}|${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
