/**
 * The depth check every JSON document passes before `JSON.parse` (json-text.ts): a document with few
 * brackets passes without a scan; one with many is scanned, strings skipped.
 */
import { describe, expect, it } from 'vitest';
import { depthExceeded, MAX_JSON_DEPTH, parseJsonText } from '../../src/page/json-text.js';

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('depthExceeded', () => {
  it('passes a document nested to the limit, and names where one nested deeper goes past it', () => {
    expect(depthExceeded(nested(MAX_JSON_DEPTH))).toBeNull();
    expect(depthExceeded(nested(MAX_JSON_DEPTH + 1))).toEqual({ offset: MAX_JSON_DEPTH });
    expect(depthExceeded(`{"a": ${nested(MAX_JSON_DEPTH)}}`)).toEqual({ offset: MAX_JSON_DEPTH + 5 });
  });

  it('counts no bracket inside a string, however many a document holds', () => {
    const brackets = '{['.repeat(MAX_JSON_DEPTH);
    expect(depthExceeded(JSON.stringify({ title: brackets, escaped: `\\"${brackets}` }))).toBeNull();
    expect(parseJsonText(JSON.stringify([brackets])).ok).toBe(true);
    // Many shallow objects side by side: more brackets than the limit, never deeper than two.
    expect(depthExceeded(JSON.stringify(Array.from({ length: 3 * MAX_JSON_DEPTH }, () => ({ a: [1] }))))).toBeNull();
  });

  it('finds the depth past the limit after many shallow brackets', () => {
    const text = `[${'{},'.repeat(MAX_JSON_DEPTH)}${nested(MAX_JSON_DEPTH)}]`;
    expect(depthExceeded(text)).toEqual({ offset: 1 + 3 * MAX_JSON_DEPTH + MAX_JSON_DEPTH - 1 });
  });
});
