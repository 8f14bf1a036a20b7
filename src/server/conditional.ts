/**
 * Conditional requests, one rule for every route `serve` answers (`/api/` and `/media/`).
 */

/**
 * True when an `If-None-Match` header matches `etag` (RFC 9110 13.1.2): `*` matches any
 * current representation; otherwise the header is a list of entity tags, compared weakly, as
 * that section asks (`W/"x"` and `"x"` match), so a cache that kept any of them gets its 304.
 */
export function ifNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  // Each entity tag's opaque part: a quoted string (which may hold a comma), with or without W/.
  return header.match(/"[^"]*"/g)?.includes(opaque) ?? false;
}
