/**
 * An S3-compatible bucket prefix as a media store, through the official AWS SDK. Credentials,
 * region and endpoint come from the SDK's own provider chain (environment variables, shared
 * config and credentials files, `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL`). Every object
 * is written with one PUT, which S3 makes visible whole or not at all; no multipart upload is
 * ever started (a rendition is far below the 5 GB a PUT takes), so none is left dangling.
 * Loaded only for `s3://` locations, so local runs never load the SDK.
 */

import type { Readable } from 'node:stream';
import type { ListObjectsV2CommandOutput, S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { escapeText, InvalidArgumentError, StorageError, type StorageErrorKind } from '../errors.js';
import { awsS3 } from '../packages/aws-s3.js';
import { type S3Location, type S3Options, s3Url } from './s3-url.js';
import { assertKey, type MediaStore, type Staged, type Stamp, type StoredObject, type WriteOptions } from './store.js';

export class S3Store implements MediaStore {
  readonly location: string;
  readonly #bucket: string;
  /** The key prefix, `''` or ending in `/`. */
  readonly #prefix: string;
  readonly #client: S3Client;
  /** Folder listings (key of the folder -> its objects), each read once: a listing, not a request per file. */
  readonly #folders = new Map<string, Promise<Map<string, StoredObject>>>();
  readonly #lookups: 'listing' | 'head';
  /** The endpoint requests go to, as messages name it. */
  readonly #endpoint: string;

  constructor(where: S3Location, options: S3Options = {}) {
    this.#bucket = where.bucket;
    this.#prefix = where.prefix;
    this.location = s3Url(where.bucket, where.prefix);
    this.#client = new awsS3.S3Client(clientConfig(options));
    this.#endpoint = endpointName(options);
    this.#lookups = options.lookups ?? 'listing';
  }

  describe(key: string): string {
    return `${this.location}${key}`;
  }

  localPath(): null {
    return null;
  }

  async open({ write }: { write: boolean; create: boolean }): Promise<void> {
    // One listing proves the endpoint answers, the credentials are good and the bucket exists;
    // for writing, one small object written and removed proves the credentials may write.
    await this.#call(this.location, () =>
      this.#client.send(new awsS3.ListObjectsV2Command({ Bucket: this.#bucket, Prefix: this.#prefix, MaxKeys: 1 })),
    );
    if (!write) return;
    const probe = `.content-api-write-check-${process.pid}-${Date.now()}`;
    await this.put(probe, Buffer.from('content-api write check\n'), { contentType: 'text/plain' });
    await this.remove(probe);
  }

  async stat(key: string): Promise<StoredObject | null> {
    if (this.#lookups === 'head') return this.#head(key);
    assertKey(this.location, key);
    const slash = key.lastIndexOf('/');
    const folder = key.slice(0, slash + 1);
    return (await this.#folder(folder)).get(key) ?? null;
  }

  async *list(prefix = '', { shallow = false } = {}): AsyncIterable<StoredObject> {
    let token: string | undefined;
    do {
      const request = {
        Bucket: this.#bucket,
        Prefix: this.#prefix + prefix,
        ContinuationToken: token,
        ...(shallow && { Delimiter: '/' }),
      };
      const page: ListObjectsV2CommandOutput = await this.#call(this.describe(prefix), () =>
        this.#client.send(new awsS3.ListObjectsV2Command(request)),
      );
      for (const item of page.Contents ?? []) {
        const found = this.#object(item.Key, item.Size, item.ETag, item.LastModified);
        if (found) yield found;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async readHead(key: string, length: number): Promise<Buffer | null> {
    const command = new awsS3.GetObjectCommand({
      Bucket: this.#bucket,
      Key: this.#key(key),
      Range: `bytes=0-${length - 1}`,
    });
    let body: Readable;
    try {
      body = (await this.#client.send(command)).Body as Readable;
    } catch (error) {
      if (isMissingObject(error)) return null;
      throw storageError(this.describe(key), error, this.#bucket, this.#endpoint);
    }
    // A server that ignores Range sends it all: read no further than asked.
    const chunks: Buffer[] = [];
    let read = 0;
    try {
      for await (const chunk of body) {
        chunks.push(chunk as Buffer);
        read += (chunk as Buffer).length;
        if (read >= length) break;
      }
    } catch (error) {
      throw storageError(this.describe(key), error, this.#bucket, this.#endpoint);
    } finally {
      body.destroy();
    }
    return Buffer.concat(chunks).subarray(0, length);
  }

  async read(key: string): Promise<{ body: Readable; stamp: Stamp }> {
    const response = await this.#call(this.describe(key), () =>
      this.#client.send(new awsS3.GetObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) })),
    );
    const stamp = objectStamp(response.ContentLength ?? 0, response.ETag, response.LastModified);
    return { body: response.Body as Readable, stamp };
  }

  async stage(key: string, data: Uint8Array, options: WriteOptions = {}): Promise<Staged> {
    this.#key(key);
    return { commit: () => this.put(key, data, options), discard: async () => {} };
  }

  async put(key: string, data: Uint8Array, options: WriteOptions = {}): Promise<void> {
    const command = new awsS3.PutObjectCommand({
      Bucket: this.#bucket,
      Key: this.#key(key),
      Body: data,
      ContentLength: data.byteLength,
      ContentType: options.contentType,
      CacheControl: options.cacheControl,
    });
    const response = await this.#call(this.describe(key), () => this.#client.send(command));
    this.#remember(key, this.#object(this.#prefix + key, data.byteLength, response.ETag, new Date()));
  }

  async remove(key: string): Promise<void> {
    await this.#call(this.describe(key), () =>
      this.#client.send(new awsS3.DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) })),
    );
    this.#remember(key, null);
  }

  async sweep(): Promise<number> {
    return 0; // nothing temporary is ever written to a bucket
  }

  async close(): Promise<void> {
    this.#client.destroy();
  }

  #key(key: string): string {
    return this.#prefix + assertKey(this.location, key);
  }

  #object(
    fullKey: string | undefined,
    size: number | undefined,
    etag: string | undefined,
    modified: Date | undefined,
  ): StoredObject | null {
    if (!fullKey?.startsWith(this.#prefix) || fullKey.endsWith('/')) return null;
    return { key: fullKey.slice(this.#prefix.length), size: size ?? 0, stamp: objectStamp(size ?? 0, etag, modified) };
  }

  #folder(folder: string): Promise<Map<string, StoredObject>> {
    let listing = this.#folders.get(folder);
    if (!listing) {
      listing = (async () => {
        const found = new Map<string, StoredObject>();
        for await (const item of this.list(folder, { shallow: true })) found.set(item.key, item);
        return found;
      })();
      this.#folders.set(folder, listing);
      listing.catch(() => this.#folders.delete(folder));
    }
    return listing;
  }

  /** One object, as it is now (HEAD): what a long-lived store needs to see other machines' changes. */
  async #head(key: string): Promise<StoredObject | null> {
    try {
      const found = await this.#client.send(new awsS3.HeadObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }));
      return this.#object(this.#key(key), found.ContentLength, found.ETag, found.LastModified);
    } catch (error) {
      if (isMissingObject(error)) return null;
      throw storageError(this.describe(key), error, this.#bucket, this.#endpoint);
    }
  }

  /** Keeps a folder listing already read true to what this process wrote or removed. */
  #remember(key: string, found: StoredObject | null): void {
    const listing = this.#folders.get(key.slice(0, key.lastIndexOf('/') + 1));
    void listing?.then(
      (objects) => (found ? objects.set(key, found) : objects.delete(key)),
      () => undefined,
    );
  }

  async #call<T>(what: string, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      throw storageError(what, error, this.#bucket, this.#endpoint);
    }
  }
}

function clientConfig(options: S3Options): S3ClientConfig {
  const timeout = options.timeoutMs ?? 10_000;
  for (const variable of ['AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL'] as const) {
    const value = process.env[variable];
    if (value && !/^https?:\/\/[^/]/i.test(value)) {
      throw new InvalidArgumentError(
        `Expected an http(s) URL such as http://127.0.0.1:9000 in ${variable} but got '${value}'`,
      );
    }
  }
  const endpoint = options.endpoint ?? process.env.AWS_ENDPOINT_URL_S3 ?? process.env.AWS_ENDPOINT_URL;
  // Virtual-hosted addressing (bucket.host) cannot work on an IP address or localhost.
  const local =
    endpoint !== undefined &&
    URL.canParse(endpoint) &&
    /^(localhost|\[[0-9a-f:]+\]|[\d.]+)$/i.test(new URL(endpoint).hostname);
  return {
    ...(options.endpoint && { endpoint: options.endpoint }),
    forcePathStyle: options.pathStyle || local,
    // S3-compatible services (and s3rver) do not all know the newer default checksums.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // Most S3-compatible services ignore the region, but the SDK needs one to sign.
    ...(endpoint &&
      !process.env.AWS_REGION &&
      !process.env.AWS_DEFAULT_REGION &&
      !process.env.AWS_PROFILE && { region: 'us-east-1' }),
    maxAttempts: options.maxAttempts ?? 4,
    // Connecting, waiting for the response's headers, and any silence after: each bounded, and
    // an error when exceeded (the SDK only warns by default, and a stalled server hangs the run).
    requestHandler: {
      connectionTimeout: timeout,
      requestTimeout: timeout,
      throwOnRequestTimeout: true,
      socketTimeout: timeout,
    },
  };
}

function objectStamp(size: number, etag: string | undefined, modified: Date | undefined): Stamp {
  return { size, etag: etag ?? '', lastModifiedMs: modified?.getTime() ?? 0 };
}

interface AwsError {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number; attempts?: number };
  $retryable?: unknown;
}

/** No such object (in a bucket that exists: NoSuchBucket is another answer). */
function isMissingObject(error: unknown): boolean {
  const { name, $metadata } = error as AwsError;
  return name === 'NoSuchKey' || name === 'NotFound' || ($metadata?.httpStatusCode === 404 && name !== 'NoSuchBucket');
}

/**
 * The endpoint a client made with `options` sends to: the one given or set in the environment,
 * else AWS's for the region (the SDK's own default).
 */
function endpointName(options: S3Options): string {
  const given = options.endpoint ?? process.env.AWS_ENDPOINT_URL_S3 ?? process.env.AWS_ENDPOINT_URL;
  if (given) return escapeText(given);
  const region = process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
  return region ? `https://s3.${escapeText(region)}.amazonaws.com` : 'AWS S3';
}

/** `what: reason`, of the kind the reason says (`bucket`: the one `what` is in, at `endpoint`). */
function storageError(what: string, error: unknown, bucket: string, endpoint: string): StorageError {
  const { kind, reason } = s3Failure(error, bucket, endpoint);
  return new StorageError(`${what}: ${reason}`, kind, { cause: error });
}

const UNREACHABLE =
  /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNRESET|EHOSTUNREACH|ENETUNREACH|TimeoutError|socket hang up/;

/** Why an S3 request failed, in a few words a person can act on, and of what kind. */
function s3Failure(error: unknown, bucket: string, endpoint: string): { kind: StorageErrorKind; reason: string } {
  const { name = '', code = '', message = String(error), $metadata } = (error ?? {}) as AwsError;
  const status = $metadata?.httpStatusCode;
  const attempts = $metadata?.attempts && $metadata.attempts > 1 ? ` after ${$metadata.attempts} attempts` : '';
  if (name === 'CredentialsProviderError' || (/credentials/i.test(message) && !status)) {
    return {
      kind: 'credentials',
      reason: 'no AWS credentials (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)',
    };
  }
  if (/region is missing/i.test(message)) return { kind: 'credentials', reason: 'no AWS region (set AWS_REGION)' };
  if (name === 'InvalidAccessKeyId')
    return { kind: 'denied', reason: 'access denied: the access key is not known here (InvalidAccessKeyId)' };
  if (name === 'SignatureDoesNotMatch')
    return { kind: 'denied', reason: 'access denied: wrong secret key (SignatureDoesNotMatch)' };
  if (name === 'AccessDenied' || status === 403)
    return { kind: 'denied', reason: `access denied (${name || 'HTTP 403'})` };
  if (name === 'NoSuchBucket')
    return { kind: 'no-bucket', reason: `no such bucket (NoSuchBucket: the bucket '${bucket}' does not exist)` };
  if (name === 'NoSuchKey' || status === 404) return { kind: 'missing', reason: 'no such object' };
  if (UNREACHABLE.test(`${name} ${code} ${message}`))
    return {
      kind: 'unreachable',
      reason: `endpoint ${endpoint} unreachable (${escapeText(code || name || message)})${attempts}`,
    };
  if (['SlowDown', 'Throttling', 'ThrottlingException'].includes(name) || status === 503) {
    return { kind: 'throttled', reason: `throttled${attempts || ' (HTTP 503)'}` };
  }
  if (status && status >= 500)
    return { kind: 'server', reason: `server error (HTTP ${status}${name ? ` ${name}` : ''})${attempts}` };
  return { kind: 'other', reason: escapeText(name && name !== 'Error' ? `${name}: ${message}` : message) };
}
