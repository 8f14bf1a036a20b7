/** `--alt-text FILE` as render reads it: every key kept, each text plain text. */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAltText } from '../../src/cli/commands/render/alt-text.js';
import { tempDir } from '../fixtures/tmp.js';

async function altFile(content: string): Promise<string> {
  const file = path.join(await tempDir(), 'alt.json');
  await writeFile(file, content);
  return file;
}

describe('loadAltText', () => {
  it('keeps every key, `__proto__` too: one no original asks for is said, never lost', async () => {
    const alt = await loadAltText(await altFile('{"__proto__": "a typo", "a.jpg": "An apple"}'));
    expect(alt.lookup({ source: 'photos/a.jpg' })).toBe('An apple');
    expect(alt.unused()).toEqual(['__proto__']);
  });

  it('refuses an alt text holding a control character, naming its key; tabs and line breaks are text', async () => {
    const file = await altFile(JSON.stringify({ 'a.jpg': 'An apple\u001b[2J', 'b.jpg': 'Two\tlines\nof text' }));
    await expect(loadAltText(file)).rejects.toThrow(
      `--alt-text ${file}: the alt text of 'a.jpg' holds a control character (U+001B): alt text is plain text`,
    );
    const lines = await loadAltText(await altFile(JSON.stringify({ 'b.jpg': 'Two\tlines\nof text' })));
    expect(lines.lookup({ source: 'b.jpg' })).toBe('Two\tlines\nof text');
  });

  it('refuses anything but an object of strings, an array of pairs too', async () => {
    for (const content of ['[["a.jpg", "An apple"]]', '"a.jpg"', 'null', '{"a.jpg": 1}']) {
      await expect(loadAltText(await altFile(content))).rejects.toThrow(/: expected a JSON object of strings$/);
    }
  });
});
