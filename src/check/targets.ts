/**
 * What `check` reads: page JSON files, folders of them, page ids fetched from the API, or
 * standard input. Each page comes with a label that names it in reports.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { InvalidArgumentError } from '../errors.js';
import { createDispatcher } from '../client/http.js';
import { loadPage, type LoadedPage, type LoadPageOptions } from '../client/pages.js';

export type { LoadedPage };

export type TargetOptions = Omit<LoadPageOptions, 'dispatcher'>;

/** Loads every target; throws (exit 2) for a target that cannot be read or fetched at all. */
export async function loadTargets(targets: string[], options: TargetOptions): Promise<LoadedPage[]> {
  const pages: LoadedPage[] = [];
  const dispatcher = targets.some((t) => /^\d+$/.test(t)) ? createDispatcher(options) : undefined;
  try {
    for (const target of targets) {
      const files = target === '-' || /^\d+$/.test(target) ? [target] : await jsonFiles(target);
      for (const file of files) pages.push(await loadPage(file, { ...options, ...(dispatcher && { dispatcher }) }));
    }
  } finally {
    await dispatcher?.close();
  }
  return pages;
}

async function jsonFiles(target: string): Promise<string[]> {
  const info = await stat(target).catch(() => null);
  if (!info) throw new InvalidArgumentError(`${target}: no such file, folder or page id`);
  if (!info.isDirectory()) return [target];
  const names = (await readdir(target, { recursive: true })).filter((name) => name.endsWith('.json') && !name.split(path.sep).some((part) => part.startsWith('.')));
  // A CI job pointed at the wrong folder must not pass on nothing.
  if (names.length === 0) throw new InvalidArgumentError(`${target}: no .json files in this folder`);
  return names.sort().map((name) => path.join(target, name));
}
