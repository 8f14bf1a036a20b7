/**
 * An original is rendered on two reads of its header: the plan's, and the check that it is still that
 * original before it is decoded, which also says whether its pixels are 16-bit RGB (#35: a third read
 * asked that alone).
 */
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
// The sharp the library runs on (src/packages/sharp.ts: its CommonJS build, not the ES one `import` gives).
import { sharp } from '../../src/packages/sharp.js';
import { renderOriginal } from '../../src/renditions/render.js';
import { tempDir } from '../fixtures/tmp.js';

const LADYBIRD = path.resolve(import.meta.dirname, '../../samples/originals/ladybird.jpg');

describe('the header of an original rendered', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('is read twice: to plan it, and to check it before decoding (16-bit RGB or not, from the same read)', async () => {
    const metadata = vi.spyOn(Object.getPrototypeOf(sharp()), 'metadata');
    const result = await renderOriginal(LADYBIRD, { outDir: path.join(await tempDir(), 'media') });
    expect(result.status).toBe('rendered');
    expect(metadata).toHaveBeenCalledTimes(2);
  });
});
