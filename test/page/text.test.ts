/** plainText and embedSource: the same one-line summaries, in time linear in the input, escaped. */
import { describe, expect, it } from 'vitest';
import { embedSource, plainText } from '../../src/page/text.js';

describe('plainText', () => {
  it('takes tags out, turns <br> into a space, collapses whitespace and cuts at max', () => {
    expect(plainText('<p>Light<br/>and <em>grass</em></p>\n\n  in  spring')).toBe('Light and grass in spring');
    expect(plainText('a <br > b<BR>c')).toBe('a b c');
    expect(plainText('x'.repeat(100), 10)).toBe(`${'x'.repeat(9)}…`);
    expect(plainText(null)).toBe('');
    expect(plainText('1 < 2 and 3 > 2')).toBe('1 2');
    expect(plainText('a < b')).toBe('a < b');
  });

  it('escapes what a terminal would act on', () => {
    expect(plainText('\u001b[2Jtitle\u202e')).toBe('\\u001b[2Jtitle\\u202e');
  });

  it('a 400 KB field of unclosed < (quadratic for /<[^>]*>/g) and one of unclosed src=" take linear time', () => {
    const hostile = `${'<'.repeat(400_000)}x`;
    const started = performance.now();
    expect(plainText(hostile)).toBe(`${'<'.repeat(59)}…`);
    expect(plainText('<a'.repeat(200_000))).toHaveLength(60);
    expect(embedSource('src="'.repeat(80_000))).toBe('src=');
    // Generous: linear work here is a few milliseconds; the quadratic regex takes over 30 s.
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe('embedSource', () => {
  it('the first src, escaped; null when there is none', () => {
    expect(embedSource('<iframe src="https://player.example/v/1" width="640"></iframe>')).toBe(
      'https://player.example/v/1',
    );
    expect(embedSource('<iframe></iframe>')).toBeNull();
    expect(embedSource('<iframe src="https://x/\u001b[2J"></iframe>')).toBe('https://x/\\u001b[2J');
  });
});
