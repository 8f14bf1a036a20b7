/** The HTTP headers of rendition files: what `serve` sends for /media/, and what a bucket is given for its CDN. */
export const MEDIA_TYPES: Readonly<Record<string, string>> = {
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
  '.avif': 'image/avif',
};

/**
 * A versioned URL (`?v=<version>`, rules.ts `mediaUrl`) names one content for good: a year, and
 * `immutable`, so that a browser does not revalidate it even on reload.
 */
export const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable';

/**
 * A URL without a version keeps its name when its file changes: a cache may keep the file but asks
 * again (with its ETag, a 304 when unchanged) before each use.
 */
export const REVALIDATE_CACHE_CONTROL = 'public, no-cache';

/**
 * The Cache-Control a rendition object in a bucket is written with. An object has one, whatever
 * the query of a request for it: with URL versions every URL published carries one, so
 * immutable (a CDN must keep `v` in its cache key: docs/guides/s3.md); without, revalidate.
 */
export function objectCacheControl(urlVersions: boolean): string {
  return urlVersions ? IMMUTABLE_CACHE_CONTROL : REVALIDATE_CACHE_CONTROL;
}
