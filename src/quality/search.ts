/**
 * `--quality auto` over a render's renditions: each size's reference made once in the pool, for
 * every format searched on the same pixels, and released when the last search is done with it; each
 * search started next to its answer, from where a smaller size's ended; a sample of tiles that ends
 * far above what the sizes scored whole needed replaced by an exact search of the whole rendition.
 * The encoder and the probe are the caller's: nothing here encodes or decodes a file.
 */
import pLimit from 'p-limit';
import { aimOf, isSampled, type Measured, type Probe, SLOPE, samplePixels, searchQuality, slopeOf } from './auto.js';
import type { RawPixels } from './linear.js';
import type { PooledReference, ScorePool } from './score-pool.js';

/** What a search encodes with: one format's encoder at a quality, its files decoded as the metric scores them. */
export interface SearchEncoder {
  /** `pixels` encoded at `quality`. */
  encode(pixels: RawPixels, quality: number): Promise<Buffer>;
  /** An encoded file's pixels, 8-bit sRGB, as scored. */
  decode(data: Buffer): Promise<RawPixels>;
}

/** What one format's searches aim at. */
export interface SearchGoal {
  /** The SSIMULACRA2 score to reach. */
  target: number;
  /** Where a search starts without a smaller size's to start from: the format's fixed quality. */
  start: number;
}

/** Each lossy encoder's quality range, for the search. */
const QUALITY_RANGE = { min: 10, max: 100 };

/** A rendition's search: its file and what was measured, and what a neighbouring size's search starts from. */
export interface Searched {
  data: Buffer;
  measured: Measured;
  /** The score aimed at (`aimOf` the target). */
  aim: number;
  /** Score points per quality step between its trials, when they measured one. */
  slope: number | undefined;
}

/** What every search on one size's pixels scores against: the pixels or their sample, prepared in the pool. */
interface Reference {
  sample: RawPixels;
  sampled: boolean;
  pooled: PooledReference;
}

/** One search's hold on a size's pixels and their reference: `done` (once or more) when it needs them no more. */
export interface Lease {
  pixels: RawPixels;
  /** The pool its reference is prepared in. */
  scores: ScorePool;
  /** Whether the search is exact: every size scored whole, by choice (`--no-quality-sample`). */
  exact: boolean;
  take(): Promise<Reference>;
  done(): void;
  /** Runs `work` when no other lease of the same render runs work this way (`searchWhole`). */
  alone<T>(work: () => Promise<T>): Promise<T>;
}

/** How a render's references are made. */
export interface ReferenceOptions {
  /** Whether a rendition over WHOLE_PIXELS is scored on a sample of its tiles (`--no-quality-sample`: never). */
  sample: boolean;
  scores: ScorePool;
  /** How a JPEG of the pixels looks, block by block (`jpegProbe`): for a sample's tiles. */
  probe: (pixels: RawPixels) => Promise<Probe>;
}

/**
 * The references of a render's pixels, each made once (the sample chosen, the metric's reference
 * half done in the pool) for every format searched on the same pixels, and released when the last
 * of those searches is done with it. `searched` lists the pixels once per search that will lease them.
 */
export class References {
  /** Per pixels: the searches counted, those not done yet, and the reference once one asked for it. */
  readonly #entries = new Map<RawPixels, { searches: number; users: number; made?: Promise<Reference> }>();

  /** Whether a rendition over WHOLE_PIXELS is scored on a sample of its tiles (`--no-quality-sample`: never). */
  readonly #sample: boolean;

  /** Work its leases run one at a time (`Lease.alone`). */
  readonly #alone = pLimit(1);

  /** Where references are prepared and scored. */
  readonly #scores: ScorePool;

  /** A sample's probe: how a JPEG of the pixels looks, block by block (`jpegProbe`), to choose tiles. */
  readonly #probe: (pixels: RawPixels) => Promise<Probe>;

  constructor(searched: readonly RawPixels[], { sample, scores, probe }: ReferenceOptions) {
    this.#sample = sample;
    this.#scores = scores;
    this.#probe = probe;
    for (const pixels of searched) {
      const entry = this.#entries.get(pixels) ?? { searches: 0, users: 0 };
      entry.searches++;
      entry.users++;
      this.#entries.set(pixels, entry);
    }
  }

  /** True when `pixels` are scored on a sample of their tiles. */
  sampled(pixels: RawPixels): boolean {
    return this.#sample && isSampled(pixels.info);
  }

  lease(pixels: RawPixels): Lease {
    const entry = this.#entries.get(pixels);
    if (!entry) throw new Error('pixels leased that no search was counted for');
    let held = true;
    return {
      pixels,
      scores: this.#scores,
      exact: !this.#sample,
      alone: (work) => this.#alone(work),
      take: () => {
        entry.made ??= this.#make(pixels, entry.searches);
        return entry.made;
      },
      done: () => {
        if (!held) return;
        held = false;
        if (--entry.users > 0) return;
        entry.made?.then(
          (reference) => reference.pooled.release(),
          () => undefined,
        );
      },
    };
  }

  async #make(pixels: RawPixels, searches: number): Promise<Reference> {
    const sampled = this.sampled(pixels);
    const sample = sampled ? samplePixels(pixels, await this.#probe(pixels)) : pixels;
    return { sample, sampled, pooled: await this.#scores.prepare(sample, searches) };
  }
}

/** `searchRendition` for one search on pixels of its own (each size decoded for one format). */
export async function searchAlone(
  pixels: RawPixels,
  goal: SearchGoal,
  encoder: SearchEncoder,
  options: ReferenceOptions,
  neighbour?: Searched,
): Promise<Searched> {
  const lease = new References([pixels], options).lease(pixels);
  return searchRendition(lease, goal, encoder, neighbour).finally(lease.done);
}

/**
 * The lowest quality whose SSIMULACRA2 score against the leased pixels reaches the goal's target,
 * searched from where a neighbouring size's search ended, else from the goal's start, with the
 * rendition encoded at it. Done with the lease once the search ends (the caller makes sure of it
 * should this throw first).
 */
export async function searchRendition(
  lease: Lease,
  goal: SearchGoal,
  encoder: SearchEncoder,
  neighbour?: Searched,
): Promise<Searched> {
  const { pixels } = lease;
  // The sample and the reference's half of the metric, done once for every quality (and format) tried.
  const { sample, sampled, pooled } = await lease.take();
  const scored = sampled ? 'tiles' : 'rendition';
  const aim = aimOf(goal.target, scored);
  const slope = neighbour?.slope ?? SLOPE;
  const start = neighbour ? neighbour.measured.quality + (aim - neighbour.aim) / slope : goal.start;
  const { best, trials } = await searchQuality(
    trialOn(sample, pooled, encoder),
    // Scored whole by choice (--no-quality-sample): the lowest quality reaching the target, the one below tried.
    { target: aim, start, slope, exact: lease.exact, ...QUALITY_RANGE },
  ).finally(lease.done);
  // A sample far above what the picture needed where it was scored whole says more of its tiles than of
  // the picture (a few that no quality brings to the aim, say): the whole rendition decides.
  const whole = neighbour?.measured.scored === 'rendition' ? neighbour.measured.quality : undefined;
  if (sampled && whole !== undefined && best.quality > whole + SAMPLE_DOUBT) {
    // One such search at a time for an original: each holds the reference of a whole large rendition.
    return lease.alone(() => searchWhole(lease.scores, pixels, encoder, goal.target, { start: whole, slope }));
  }
  // A sample's encode is not the rendition's: encode the whole of it at the quality found.
  const data = sampled ? await encoder.encode(pixels, best.quality) : best.result;
  const measured: Measured = {
    quality: best.quality,
    score: round(best.score),
    scored,
  };
  return { data, measured, aim, slope: slopeOf(trials) ?? neighbour?.slope };
}

/**
 * Qualities a sample's search may end above the quality the largest size scored whole needed, before
 * the whole rendition is searched instead. A sample aims TILE_MARGIN over the target, about 3 steps at
 * the usual slope, and a larger size needs a few more or fewer. On the bundled samples and the bench
 * corpus (the md, lg and xl of 28 JPEG and WebP originals), searches on tiles ended from 12 below to 15
 * above it, and three ended more than 10 above (ladybird's lg by 11, kleiber's lg and xl by 12 and 15):
 * searched whole, they took 4, 4 and 2 qualities less. A picture whose tiles no quality brings to the
 * aim (fine saturated stripes under 4:2:0; the test's) ended 16 above, 5 over what its whole needs.
 */
export const SAMPLE_DOUBT = 10;

/**
 * The lowest quality whose score, on the whole rendition, reaches `target` (an exact search from
 * `start`): what a sample that disagrees too much with the sizes scored whole is replaced by. Its
 * reference is the whole rendition's, held for this search alone.
 */
async function searchWhole(
  scores: ScorePool,
  pixels: RawPixels,
  encoder: SearchEncoder,
  target: number,
  { start, slope }: { start: number; slope: number },
): Promise<Searched> {
  const pooled = await scores.prepare(pixels, 1);
  try {
    const { best, trials } = await searchQuality(trialOn(pixels, pooled, encoder), {
      target,
      start,
      slope,
      exact: true,
      ...QUALITY_RANGE,
    });
    const measured: Measured = { quality: best.quality, score: round(best.score), scored: 'rendition' };
    return { data: best.result, measured, aim: target, slope: slopeOf(trials) ?? slope };
  } finally {
    pooled.release();
  }
}

/** A search's trial: `pixels` encoded at a quality, and scored against their reference, `pooled`. */
const trialOn =
  (pixels: RawPixels, pooled: PooledReference, encoder: SearchEncoder) =>
  async (quality: number): Promise<{ score: number; result: Buffer }> => {
    const data = await encoder.encode(pixels, quality);
    return { score: await pooled.score(await encoder.decode(data)), result: data };
  };

const round = (score: number) => Math.round(score * 100) / 100;
