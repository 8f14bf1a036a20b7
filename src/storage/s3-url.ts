/**
 * `s3://bucket/prefix/` locations: parsed and checked without the AWS SDK, and how to reach S3.
 */
import { InvalidArgumentError } from '../errors.js';
import { isKey } from './store.js';

export interface S3Location {
  bucket: string;
  /** The key prefix: `''`, or ending in `/`. */
  prefix: string;
}

/** How to reach S3; anything left out comes from the SDK's provider chain and the environment. */
export interface S3Options {
  /** `--s3-endpoint`: an S3-compatible service's URL (default: AWS, or `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL`). */
  endpoint?: string | undefined;
  /**
   * `--s3-path-style`: `https://host/bucket/key` instead of `https://bucket.host/key` (always on
   * for IP addresses and localhost).
   */
  pathStyle?: boolean | undefined;
  /** Timeout for connecting, for the answer to start, and for any silence after, in ms (default 10,000). */
  timeoutMs?: number | undefined;
  /** Attempts per request, retries with backoff on throttling, 5xx and connection errors included (default 4). */
  maxAttempts?: number | undefined;
  /**
   * How `stat` finds an object: `listing` (default) lists its folder once and answers from
   * that, which suits a run over many objects; `head` asks for the object each time, which a
   * long-lived store (a queue worker's) needs to see what other machines changed since.
   */
  lookups?: 'listing' | 'head' | undefined;
}

/** `s3:` anything: `s3:/bucket` (a slash short) is refused by `parseS3Url`, never taken for a local folder. */
export const isS3Url = (value: string): boolean => /^s3:/i.test(value);

/** `s3://bucket/a/b.jpg` -> `{ location: 's3://bucket/', key: 'a/b.jpg' }`, checked; throws `InvalidArgumentError`. */
export function splitS3Object(url: string): { location: string; key: string } {
  const { bucket } = parseS3Url(url);
  const key = url.slice(`s3://${bucket}/`.length);
  if (!isKey(key)) throw new InvalidArgumentError(`Expected s3://bucket/key of an object but got '${url}'`);
  return { location: s3Url(bucket, ''), key };
}

/** `s3://bucket/a/b` -> `{ bucket: 'bucket', prefix: 'a/b/' }`: a location is always a folder. */
export function parseS3Url(value: string): S3Location {
  const match = /^s3:\/\/([^/]+)\/?(.*)$/i.exec(value);
  const bucket = match?.[1] ?? '';
  // Bucket names: 3-63 of a-z 0-9 . - (S3's rule; S3-compatible services follow it).
  if (!match || !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new InvalidArgumentError(`Expected s3://bucket/prefix/ with a valid bucket name but got '${value}'`);
  }
  const prefix = match[2] ?? '';
  if (
    prefix
      .split('/')
      .some((segment, i, all) => (segment === '' && i < all.length - 1) || segment === '.' || segment === '..')
  ) {
    throw new InvalidArgumentError(
      `Expected s3://bucket/prefix/ without empty, '.' or '..' segments but got '${value}'`,
    );
  }
  return { bucket, prefix: prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/` };
}

export const s3Url = (bucket: string, prefix: string): string => `s3://${bucket}/${prefix}`;

/** True when the `s3://` location or object `inner` is `outer` or below it (same bucket, within its prefix). */
export function isBelow(inner: string, outer: string): boolean {
  const a = /^s3:\/\/([^/]+)\/?(.*)$/i.exec(inner);
  const b = parseS3Url(outer);
  return a !== null && a[1] === b.bucket && `${a[2]}/`.startsWith(b.prefix);
}
