/**
 * `--alt-text FILE`: the alt text of each original's Image object, and the keys no original
 * asked for (a typo, or a file that is not there), said as warnings.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { escapedMessage, InvalidArgumentError } from '../../../errors.js';
import type { Original } from '../../../renditions/discover.js';

export interface AltText {
  lookup: (original: Pick<Original, 'source'>) => string | undefined;
  unused: () => string[];
}

/**
 * `--alt-text` file: a JSON object whose keys are originals, as reported (`samples/a.jpg`)
 * or by file name (`a.jpg`), and whose values are their alt text. `unused` lists the keys
 * no original asked for (a typo, or a file that is not there).
 */
export async function loadAltText(file: string): Promise<AltText> {
  let map: unknown;
  try {
    map = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new InvalidArgumentError(`--alt-text ${file}: ${escapedMessage(error)}`);
  }
  if (
    typeof map !== 'object' ||
    map === null ||
    Array.isArray(map) ||
    Object.values(map).some((v) => typeof v !== 'string')
  ) {
    throw new InvalidArgumentError(`--alt-text ${file}: expected a JSON object of strings`);
  }
  const texts = new Map(Object.entries(map as Record<string, string>));
  const used = new Set<string>();
  const lookup = (original: Pick<Original, 'source'>) => {
    const key = [original.source, path.normalize(original.source), path.basename(original.source)].find((candidate) =>
      texts.has(candidate),
    );
    if (key === undefined) return undefined;
    used.add(key);
    return texts.get(key);
  };
  return { lookup, unused: () => [...texts.keys()].filter((key) => !used.has(key)) };
}
