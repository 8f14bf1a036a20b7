/**
 * Where media is: a local folder, or `s3://bucket/prefix/`. Parsing a location never loads
 * the AWS SDK; `openStore` loads it only for a bucket.
 */
import path from 'node:path';
import { LocalStore } from './local.js';
import { isS3Url, parseS3Url, type S3Options } from './s3-url.js';
import type { MediaStore } from './store.js';

export { isBelow, isS3Url, parseS3Url, type S3Location, type S3Options, s3Url, splitS3Object } from './s3-url.js';

/** The store at `location`: a bucket prefix for `s3://...`, else a local folder. */
export async function openStore(location: string, s3: S3Options = {}): Promise<MediaStore> {
  if (!isS3Url(location)) return new LocalStore(location);
  const where = parseS3Url(location);
  const { S3Store } = await import('./s3.js');
  return new S3Store(where, s3);
}

/** How to name `key` below `location` in messages: `s3://bucket/prefix/key`, or a path. */
export function joinLocation(location: string, key: string): string {
  if (!isS3Url(location)) return path.join(location, key);
  return `${location.endsWith('/') ? location : `${location}/`}${key}`;
}
