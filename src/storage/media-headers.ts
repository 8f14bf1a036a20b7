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
 * A year. A rendition keeps its name when its original changes in place, so a cache must
 * revalidate (serve answers with ETag and 304) or be invalidated after a re-render (a CDN).
 */
export const MEDIA_CACHE_CONTROL = 'public, max-age=31536000';
