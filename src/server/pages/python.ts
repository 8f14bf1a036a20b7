/**
 * What Wagtail's messages and redirects show of Python: `int()` of a query value, `repr()` of a
 * string in an error, and `quote_plus` as Django's `QueryDict.urlencode()` encodes parameters.
 */

/** Python's `int()` of a query value: spaces around, a sign, `_` between digits; null when it is not one. */
export function pythonInt(text: string): bigint | null {
  const match = /^\s*([+-]?)(\d+(?:_\d+)*)\s*$/.exec(text);
  return match ? BigInt(`${match[1]}${match[2]!.replaceAll('_', '')}`) : null;
}

/** Python's `repr()` of a string, cut to 200 characters as `%.200R` cuts it. */
export function pythonRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  const escaped = text.replace(/[\\\n\r\t'"\x00-\x1f\x7f]/g, (char) => {
    if (char === '\\') return '\\\\';
    if (char === '\n') return '\\n';
    if (char === '\r') return '\\r';
    if (char === '\t') return '\\t';
    if (char === "'" || char === '"') return char === quote ? `\\${char}` : char;
    return `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`;
  });
  return Array.from(`${quote}${escaped}${quote}`).slice(0, 200).join('');
}

/** Python's `quote_plus`: only letters, digits and `_.-~` kept, a space as `+`. */
export function quotePlus(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`)
    .replaceAll('%20', '+');
}
