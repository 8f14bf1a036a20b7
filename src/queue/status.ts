/**
 * `queue status`: what the queue holds and how fast it drains. Counts come from BullMQ; the
 * originals finished, the rate and the recent batches from the keys workers and submitters
 * keep beside it.
 */
import type { Queue } from 'bullmq';
import { readBatch } from './collect.js';
import { type QueueConnection, redisNow, withBull } from './connection.js';
import { RESULT_TTL_SECONDS, TICK_MS } from './protocol.js';

export interface QueueStatus {
  queue: string;
  redis: string;
  /** Jobs (one per image) by state; finished jobs are removed, so none is counted as completed. */
  jobs: { waiting: number; active: number; delayed: number };
  /** Worker processes connected now (null when Redis does not allow CLIENT LIST). */
  workers: number | null;
  /** Originals finished since the queue was made. */
  finished: { rendered: number; skipped: number; failed: number; retried: number };
  /** Originals finished per second over the last minute. */
  rate: number;
  /** Seconds until the queue is empty at that rate (null when nothing moves). */
  eta: number | null;
  /**
   * The latest batches (at most 5), each with its originals finished: by the jobs it added (a
   * job it shared with an earlier batch, enqueued while that one was queued, counts there), and its
   * images (jobs) taken out of the queue unstarted when it was interrupted (Ctrl-C, a failed enqueue).
   */
  batches: Array<{ id: string; created: string; originals: number; finished: number; cancelled: number }>;
}

export async function queueStatus(queue: QueueConnection): Promise<QueueStatus> {
  return withBull(
    queue,
    async (bull) => {
      const counts = await bull.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
      const workers = await workerCount(bull);
      const stats = await queue.redis.hgetall(queue.keys.stats);
      const now = await redisNow(queue);
      const window = Math.floor(now / TICK_MS);
      const ticks = await queue.redis.mget(...Array.from({ length: 6 }, (_, i) => queue.keys.tick(window - i)));
      const rate = ticks.reduce((sum, tick) => sum + Number(tick ?? 0), 0) / 60;
      const jobs = {
        waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0) + (counts['waiting-children'] ?? 0),
        active: counts.active ?? 0,
        delayed: counts.delayed ?? 0,
      };
      const left = jobs.waiting + jobs.active + jobs.delayed;
      return {
        queue: queue.name,
        redis: queue.where,
        jobs,
        workers,
        finished: {
          rendered: Number(stats.rendered ?? 0),
          skipped: Number(stats.skipped ?? 0),
          failed: Number(stats.failed ?? 0),
          retried: Number(stats.retried ?? 0),
        },
        rate,
        eta: left === 0 ? 0 : rate > 0 ? Math.round(left / rate) : null,
        batches: await recentBatches(queue, now),
      };
    },
    true,
  );
}

/** Worker processes connected to the queue now; null when Redis does not allow CLIENT LIST. */
export function workersConnected(queue: QueueConnection): Promise<number | null> {
  return withBull(queue, workerCount);
}

const workerCount = (bull: Queue) => bull.getWorkersCount().catch(() => null);

async function recentBatches(queue: QueueConnection, now: number): Promise<QueueStatus['batches']> {
  const { keys, redis } = queue;
  await redis.zremrangebyscore(keys.batches, '-inf', now - RESULT_TTL_SECONDS * 1000);
  const ids = (await redis.zrange(keys.batches, -5, -1)).reverse();
  const batches: QueueStatus['batches'] = [];
  for (const id of ids) {
    const record = await readBatch(queue, id).catch(() => undefined); // expired, or another version's
    if (!record) continue;
    const finished = Number((await redis.get(keys.batchDone(id))) ?? 0);
    const cancelled = await redis.scard(keys.batchCancelled(id));
    const created = new Date(record.created).toISOString();
    batches.push({ id, created, originals: record.originals, finished, cancelled });
  }
  return batches;
}
