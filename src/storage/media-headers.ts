/** The HTTP headers of rendition files: what `serve` sends for /media/, and what a bucket is given for its CDN. */

export const MEDIA_TYPES: Readonly<Record<string, string>> = {
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
  '.avif': 'image/avif',
};

/** A year: rendition names change when their pixels do (a new original gets new names only if renamed), so revalidation uses ETag. */
export const MEDIA_CACHE_CONTROL = 'public, max-age=31536000';
