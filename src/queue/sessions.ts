/**
 * The worker's render sessions, kept per output location and settings for the jobs that follow,
 * and the buckets its originals are read from.
 */
import { oneLine, SourceError, StorageError } from '../errors.js';
import { ScorePool } from '../quality/score-pool.js';
import type { Original } from '../renditions/discover.js';
import { type Batch, openRenderSession, type RenderSession } from '../renditions/session.js';
import { qualityTarget, resolveSettings } from '../renditions/settings.js';
import { openStore } from '../storage/location.js';
import { isS3Url, type S3Options, splitS3Object } from '../storage/s3-url.js';
import type { MediaStore } from '../storage/store.js';
import { type JobData, templateOf } from './protocol.js';

/**
 * Output locations open for rendering, one per location and settings; buckets of originals,
 * one each. Their S3 stores look objects up one by one (HEAD), never from a listing kept since
 * an earlier job: other machines write to the same buckets meanwhile.
 */
export class Sessions {
  readonly #sessions = new Map<string, Promise<RenderSession>>();
  readonly #buckets = new Map<string, Promise<MediaStore>>();
  readonly #s3: S3Options;
  /** Where every session's `--quality auto` scores, made for the first that searches: the worker's, for its life. */
  #scores: ScorePool | undefined;

  constructor(s3: S3Options) {
    this.#s3 = s3;
  }

  async render(data: JobData): Promise<Batch> {
    const failures: SourceError[] = [];
    const originals: Original[] = [];
    for (const { source, stem } of data.originals) {
      if (!isS3Url(source)) {
        originals.push({ source, stem });
        continue;
      }
      const { location, key } = splitS3Object(source);
      const bucket = await this.#bucket(location);
      // Its stamp now (one HEAD), not as listed when it was enqueued, maybe days ago.
      const found = await bucket.stat(key).catch((error: unknown) => {
        if (!(error instanceof StorageError)) throw error;
        failures.push(new SourceError('CONTENT_API_UNREADABLE', source, oneLine(error), { cause: error }));
        return undefined;
      });
      if (found) originals.push({ source, stem, object: { store: bucket, key, stamp: found.stamp } });
      else if (found === null)
        failures.push(
          new SourceError('CONTENT_API_UNREADABLE', source, 'no such object (removed since it was enqueued)'),
        );
    }
    const session = await this.#session(data);
    return session.render(originals, failures);
  }

  async close(): Promise<void> {
    const open = [...this.#sessions.values(), ...this.#buckets.values()];
    this.#sessions.clear();
    this.#buckets.clear();
    await Promise.all(
      open.map((opening) =>
        opening.then(
          (open) => open.close(),
          () => undefined,
        ),
      ),
    );
    await this.#scores?.close();
    this.#scores = undefined;
  }

  #session(data: JobData): Promise<RenderSession> {
    const template = templateOf(data);
    return this.#cached(this.#sessions, JSON.stringify(template), async () => {
      const options = {
        ...template.settings,
        outDir: template.outDir,
        // The submitter made it: a folder missing here is one this machine does not share.
        createOutDir: false,
        s3: this.#s3,
        force: template.force,
        concurrency: 1,
      };
      const settings = resolveSettings(options);
      if (qualityTarget(settings.quality.mode) !== null) this.#scores ??= new ScorePool();
      return openRenderSession({ ...options, scorePool: this.#scores }, settings);
    });
  }

  #bucket(location: string): Promise<MediaStore> {
    return this.#cached(this.#buckets, location, async () => {
      const store = await openStore(location, this.#s3);
      await store.open({ write: false, create: false });
      return store;
    });
  }

  /** Opened once; an opening that failed is forgotten, so the next job tries again. */
  #cached<T>(map: Map<string, Promise<T>>, id: string, open: () => Promise<T>): Promise<T> {
    let opening = map.get(id);
    if (!opening) {
      opening = open();
      map.set(id, opening);
      opening.catch(() => map.delete(id));
    }
    return opening;
  }
}
