/**
 * `content-api queue status`: jobs, workers, what has finished, the rate and the time left.
 */
import type { QueueOptions } from '../../../queue/connection.js';
import { type QueueStatus, queueStatus } from '../../../queue/status.js';
import { printData } from '../../output.js';
import { connect } from './connect.js';

export async function runQueueStatus(options: { queue: QueueOptions; json: boolean }): Promise<number> {
  const queue = await connect(options.queue, 'look');
  try {
    const status = await queueStatus(queue);
    printData(options.json ? JSON.stringify(status, null, 2) : statusText(status));
    return 0;
  } finally {
    await queue.close();
  }
}

function statusText(status: QueueStatus): string {
  const n = (value: number) => value.toLocaleString('en-US');
  const { jobs, finished } = status;
  const lines = [
    `queue '${status.queue}' on ${status.redis}`,
    `jobs:      ${n(jobs.waiting)} waiting, ${n(jobs.active)} active, ${n(jobs.delayed)} retrying later`,
    `workers:   ${status.workers ?? 'unknown (CLIENT LIST not allowed)'}`,
    `finished:  ${n(finished.rendered)} rendered, ${n(finished.skipped)} up to date, ${n(finished.failed)} failed ` +
      `(${n(finished.retried)} retries)`,
    `rate:      ${status.rate.toFixed(2)} originals/s over the last minute; ${eta(status.eta)}`,
  ];
  if (status.batches.length > 0) lines.push('batches:');
  for (const batch of status.batches) {
    const line = `  ${batch.id}  ${batch.created}  ${n(batch.finished)} of ${n(batch.originals)} original(s) finished`;
    const interrupted =
      batch.cancelled > 0
        ? `; interrupted: ${n(batch.cancelled)} image(s) taken out of the queue unstarted ` +
          `(queue results ${batch.id} names them)`
        : '';
    lines.push(line + interrupted);
  }
  return lines.join('\n');
}

function eta(seconds: number | null): string {
  if (seconds === 0) return 'nothing left';
  if (seconds === null) return 'ETA unknown (nothing finished in the last minute)';
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return `ETA ${h > 0 ? `${h} h ` : ''}${m} min ${seconds % 60} s`;
}
