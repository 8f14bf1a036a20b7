/**
 * `--alt-text FILE`: the alt text of each original's Image object, and the keys no original
 * asked for (a typo, or a file that is not there), said as warnings.
 */
import path from 'node:path';
import { z } from 'zod';
import { escapeText, InvalidArgumentError } from '../../../errors.js';
import { readFileWithin } from '../../../fs/read-within.js';
import { parseJsonAs } from '../../../json.js';
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
const altTextSchema = z.preprocess(
  // As entries: zod's record is a new object, in which a `__proto__` key would be lost without a word.
  // Anything but an object is refused (null is no list of entries), an array of pairs too.
  (value) => (typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.entries(value) : null),
  z.array(z.tuple([z.string(), z.string()])),
);

/** A character no alt text holds: a control character other than tab and line breaks, which HTML refuses. */
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

/** The largest --alt-text file read. */
const MAX_ALT_TEXT_BYTES = 64 * 1024 * 1024;

export async function loadAltText(file: string): Promise<AltText> {
  // Only a regular file is read: a FIFO or /dev/zero is refused before a byte is read.
  const read = await readFileWithin(file, MAX_ALT_TEXT_BYTES, 'the cap on an --alt-text file');
  if (!read.ok) throw new InvalidArgumentError(`--alt-text ${escapeText(file)}: ${read.reason}`);
  const parsed = parseJsonAs(altTextSchema, read.bytes, () => ['expected a JSON object of strings']);
  if (!parsed.ok) throw new InvalidArgumentError(`--alt-text ${escapeText(file)}: ${parsed.problems[0]}`);
  const texts = new Map(parsed.data);
  for (const [key, text] of texts) {
    const control = CONTROL.exec(text)?.[0];
    if (control === undefined) continue;
    const code = `U+${control.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    throw new InvalidArgumentError(
      `--alt-text ${escapeText(file)}: the alt text of '${escapeText(key)}' holds a control character (${code}): ` +
        'alt text is plain text',
    );
  }
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
