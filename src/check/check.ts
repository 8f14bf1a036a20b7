/**
 * `check`: every page's schema and rendition rules, and with `verifyFiles` the files behind
 * the URLs: their real pixel size and format against the JSON.
 */
import { stat } from 'node:fs/promises';
import { InvalidArgumentError } from '../errors.js';
import { createDispatcher } from '../client/http.js';
import { validatePage, type Problem } from '../page/validate.js';
import { findImages, formatPath } from '../page/walk.js';
import { RENDITION_KEYS, type RenditionKey } from '../renditions/rules.js';
import { probeAll, type FileFormat, type FileSource, type ProbeResult } from './probe.js';
import type { LoadedPage } from './targets.js';

/** File rules, checked with `--verify-files`. */
export const FILE_RULES = {
  'page-json': 'the page is JSON',
  'file-missing': 'the rendition file exists',
  'file-unreadable': 'the rendition file can be read and is an image',
  'file-size': "the file's real pixel size is the size the JSON gives",
  'file-format': "the file's real format is the one its extension names",
} as const;

export type FileRule = keyof typeof FILE_RULES;

/** A problem found by `check`: a page problem, or a file rule broken. */
export interface Finding extends Omit<Problem, 'rule'> {
  rule: Problem['rule'] | FileRule;
}

export interface CheckedImage {
  path: string;
  sizes: Partial<Record<RenditionKey, { width: number; height: number; url: string; src: string }>>;
}

export interface CheckedPage {
  source: string;
  problems: Finding[];
  images: CheckedImage[];
}

export interface CheckReport {
  pages: CheckedPage[];
  files: { probed: number; bytesRead: number } | null;
  errors: number;
  warnings: number;
}

export interface CheckOptions {
  /** A folder (URL paths below `mediaPrefix` are looked up in it) or an http(s) base URL. */
  verifyFiles?: string;
  /** URL path prefix of rendition files, for `verifyFiles` folders (default `/media/`). */
  mediaPrefix?: string;
  concurrency?: number;
  timeoutMs?: number;
}

const EXTENSION_FORMATS: Record<string, FileFormat> = { jpg: 'jpeg', jpeg: 'jpeg', png: 'png', webp: 'webp', gif: 'gif', avif: 'avif' };

export async function checkPages(pages: LoadedPage[], options: CheckOptions = {}): Promise<CheckReport> {
  const checked = pages.map((page) => checkOne(page));
  let files: CheckReport['files'] = null;
  if (options.verifyFiles) {
    const source = await fileSource(options);
    try {
      const urls = checked.flatMap((page) => page.images.flatMap((image) => Object.values(image.sizes).map((size) => size.url)));
      const probes = await probeAll(urls, source, options.concurrency ?? 16);
      files = { probed: probes.size, bytesRead: [...probes.values()].reduce((sum, p) => sum + p.bytesRead, 0) };
      for (const page of checked) page.problems.push(...fileProblems(page, probes));
      for (const page of checked) for (const image of page.images) for (const size of Object.values(image.sizes)) size.src = probes.get(size.url)?.location ?? size.src;
    } finally {
      if (source.kind === 'http') await source.dispatcher.close();
    }
  }
  const all = checked.flatMap((page) => page.problems);
  return { pages: checked, files, errors: all.filter((p) => p.severity === 'error').length, warnings: all.filter((p) => p.severity === 'warning').length };
}

function checkOne(page: LoadedPage): CheckedPage {
  if (page.parseError !== undefined) {
    return { source: page.source, images: [], problems: [{ severity: 'error', path: '$', rule: 'page-json', message: `not JSON (${page.parseError})` }] };
  }
  const { problems } = validatePage(page.json, { baseUrl: page.baseUrl });
  const images = [...findImages(page.json)].map(({ path, image }) => {
    const sizes = (typeof image.sizes === 'object' && image.sizes ? image.sizes : {}) as Record<string, { width?: unknown; height?: unknown; url?: unknown }>;
    const entries = RENDITION_KEYS.flatMap((key) => {
      const { width, height, url } = sizes[key] ?? {};
      return typeof width === 'number' && typeof height === 'number' && typeof url === 'string' ? [[key, { width, height, url, src: url }] as const] : [];
    });
    return { path: formatPath(path), sizes: Object.fromEntries(entries) };
  });
  return { source: page.source, problems, images };
}

/** Where rendition files are read; a folder that is not there is an `InvalidArgumentError` (exit 2), not a finding per file. */
async function fileSource(options: CheckOptions): Promise<FileSource> {
  const target = options.verifyFiles!;
  if (/^https?:\/\//.test(target)) {
    return { kind: 'http', base: target, dispatcher: createDispatcher({ timeoutMs: options.timeoutMs ?? 10_000, retries: 2 }) };
  }
  const info = await stat(target).catch(() => null);
  if (!info?.isDirectory()) throw new InvalidArgumentError(`--verify-files ${target}: ${info ? 'is a file, not a folder or an http(s) base URL' : 'no such folder'}`);
  return { kind: 'folder', folder: target, mediaPrefix: options.mediaPrefix ?? '/media/' };
}

function fileProblems(page: CheckedPage, probes: Map<string, ProbeResult>): Finding[] {
  const problems: Finding[] = [];
  for (const image of page.images) {
    for (const [key, size] of Object.entries(image.sizes)) {
      const at = `${image.path}.sizes.${key}.url`;
      const result = probes.get(size.url);
      if (!result) continue;
      if (!result.ok) {
        const rule = result.reason === 'missing' ? 'file-missing' : 'file-unreadable';
        problems.push({ severity: 'error', path: at, rule, message: result.message });
        continue;
      }
      if (result.width !== size.width || result.height !== size.height) {
        problems.push({ severity: 'error', path: at, rule: 'file-size', message: `${result.location} is ${result.width}x${result.height}, the JSON says ${size.width}x${size.height}` });
      }
      const expected = EXTENSION_FORMATS[(/\.([A-Za-z0-9]+)$/.exec(new URL(size.url, 'http://x.invalid').pathname)?.[1] ?? '').toLowerCase()];
      if (expected && result.format !== expected) {
        problems.push({ severity: 'error', path: at, rule: 'file-format', message: `${result.location} is ${result.format}, its name says ${expected}` });
      }
    }
  }
  return problems;
}
