/**
 * What `check` reads: page JSON files, folders of them, page ids fetched from the API, or
 * standard input. Each page comes with a label that names it in reports.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { InvalidArgumentError } from '../errors.js';
import { createDispatcher, fetchJson, type HttpOptions } from '../client/http.js';
import { pageUrl } from '../client/pages.js';

export interface LoadedPage {
  /** The file, URL or `stdin` the page came from. */
  source: string;
  /** The parsed JSON, or the reason it could not be parsed. */
  json: unknown;
  parseError?: string;
  /** The API base URL, for pages fetched by id. */
  baseUrl?: string;
}

export interface TargetOptions extends HttpOptions {
  baseUrl?: string;
  stdin?: () => Promise<string>;
}

const MAX_STDIN = 64 * 1024 * 1024;

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of process.stdin) {
    length += (chunk as Buffer).length;
    if (length > MAX_STDIN) throw new InvalidArgumentError(`standard input is larger than ${MAX_STDIN} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Loads every target; throws (exit 2) for a target that cannot be read or fetched at all. */
export async function loadTargets(targets: string[], options: TargetOptions): Promise<LoadedPage[]> {
  const pages: LoadedPage[] = [];
  const dispatcher = targets.some((t) => /^\d+$/.test(t)) ? createDispatcher(options) : undefined;
  try {
    for (const target of targets) {
      if (target === '-') {
        pages.push(parse('stdin', await (options.stdin ?? readStdin)()));
      } else if (/^\d+$/.test(target)) {
        if (!options.baseUrl) throw new InvalidArgumentError(`Expected --base-url or CONTENT_API_BASE_URL to fetch page ${target}`);
        const url = pageUrl(options.baseUrl, Number(target));
        const response = await fetchJson(url, dispatcher!, options);
        pages.push({ source: url, json: response.json, baseUrl: options.baseUrl });
      } else {
        for (const file of await jsonFiles(target)) pages.push(parse(file, await readFile(file, 'utf8')));
      }
    }
  } finally {
    await dispatcher?.close();
  }
  return pages;
}

function parse(source: string, text: string): LoadedPage {
  try {
    return { source, json: JSON.parse(text) };
  } catch (error) {
    return { source, json: undefined, parseError: (error as Error).message };
  }
}

async function jsonFiles(target: string): Promise<string[]> {
  const info = await stat(target).catch(() => null);
  if (!info) throw new InvalidArgumentError(`${target}: no such file, folder or page id`);
  if (!info.isDirectory()) return [target];
  const names = (await readdir(target, { recursive: true })).filter((name) => name.endsWith('.json') && !name.split(path.sep).some((part) => part.startsWith('.')));
  return names.sort().map((name) => path.join(target, name));
}
