/**
 * The queue's commands: `render --queue` (enqueue, then gather the report as workers finish),
 * `worker`, `queue status` and `queue results`.
 */

import { InvalidArgumentError } from '../../errors.js';
import { collectBatch } from '../../queue/collect.js';
import { connectQueue, type QueueConnection, type QueueOptions } from '../../queue/connection.js';
import { enqueueRender } from '../../queue/enqueue.js';
import { DEFAULT_QUEUE_NAME } from '../../queue/protocol.js';
import { type QueueStatus, queueStatus, workersConnected } from '../../queue/status.js';
import { startWorker } from '../../queue/worker.js';
import type { S3Options } from '../../storage/location.js';
import { printData, printMessage, stderrStyles } from '../output.js';
import { loadAltText, printReport, type RenderCommandOptions, withProgress } from './render.js';

export interface QueueRenderOptions extends RenderCommandOptions {
  queue: QueueOptions;
  /** Enqueue, print the batch id, and exit. */
  detach: boolean;
}

export async function runQueueRender(inputs: string[], options: QueueRenderOptions): Promise<number> {
  const { altTextFile, json, queue: target, detach, ...renderOptions } = options;
  if (detach && altTextFile)
    throw new InvalidArgumentError('--alt-text goes with the report: give it to queue results');
  const altText = altTextFile ? await loadAltText(altTextFile) : undefined;
  const queue = await connect(target, true);
  try {
    // Ctrl-C from the first write on: no more jobs are added, and those added are taken out.
    const done = await withProgress(async ({ onDownload, ...hooks }) => {
      const batch = await enqueueRender(inputs, renderOptions, queue, hooks.signal);
      const jobs = `${batch.originals} original(s) in ${batch.jobs} job(s)`;
      const what = `batch ${batch.id}: ${jobs} on ${queue.where} (queue '${queue.name}')`;
      if (detach && !hooks.signal?.aborted) {
        printData(
          json ? JSON.stringify({ batch: batch.id, originals: batch.originals, jobs: batch.jobs }, null, 2) : batch.id,
        );
        printMessage(`${what}; read the report with: content-api queue results ${batch.id}${queueFlags(queue)}`);
        return null;
      }
      if (batch.jobs > 0) printMessage(`${what}; waiting for workers`);
      if (batch.jobs > 0 && !hooks.signal?.aborted && (await workersConnected(queue)) === 0) {
        printMessage(`no worker is connected yet; start one: content-api worker${queueFlags(queue)}`);
      }
      return collectBatch(queue, batch.id, { ...hooks, cancel: true, altText: altText?.lookup });
    }).catch((error: unknown) => {
      if (!(error instanceof Error && error.name === 'AbortError')) throw error;
      printMessage('interrupted: nothing was enqueued');
      return null;
    });
    if (!done) return 130;
    return done.report ? printReport(done.report, done.seconds, options, altText) : 0;
  } finally {
    await queue.close();
  }
}

export interface QueueResultsOptions extends Pick<RenderCommandOptions, 'altTextFile' | 'json'> {
  queue: QueueOptions;
  wait: boolean;
}

export async function runQueueResults(batchId: string, options: QueueResultsOptions): Promise<number> {
  const altText = options.altTextFile ? await loadAltText(options.altTextFile) : undefined;
  const queue = await connect(options.queue, false);
  try {
    const started = performance.now();
    // Ctrl-C stops waiting; the batch's jobs stay queued (reported as still queued).
    const { report } = await withProgress(({ onDownload, ...hooks }) =>
      collectBatch(queue, batchId, { ...hooks, wait: options.wait, altText: altText?.lookup }),
    );
    return printReport(
      report,
      (performance.now() - started) / 1000,
      { ...options, outDir: report.out, shard: report.shard },
      altText,
    );
  } finally {
    await queue.close();
  }
}

export async function runQueueStatus(options: { queue: QueueOptions; json: boolean }): Promise<number> {
  const queue = await connect(options.queue, false);
  try {
    const status = await queueStatus(queue);
    printData(options.json ? JSON.stringify(status, null, 2) : statusText(status));
    return 0;
  } finally {
    await queue.close();
  }
}

export interface WorkerCommandOptions {
  queue: QueueOptions;
  concurrency: number;
  s3: S3Options;
  quiet: boolean;
}

/** Runs until SIGTERM or SIGINT, then finishes the jobs under way; a second signal stops at once. */
export async function runWorker(options: WorkerCommandOptions): Promise<number> {
  const { red, yellow } = stderrStyles();
  const worker = await startWorker({
    ...options.queue,
    concurrency: options.concurrency,
    s3: options.s3,
    onError: (message) => printMessage(`${yellow('warning')}: Redis: ${message}; retrying`),
    onJob: options.quiet
      ? undefined
      : ({ status, sources, detail, attempt, ms }) => {
          if (status === 'started') return;
          const tries = attempt > 1 ? ` (attempt ${attempt})` : '';
          const took = `${(ms / 1000).toFixed(1)} s`;
          if (status === 'done') printMessage(`${detail}\t${sources.join(' ')}\t${took}${tries}`);
          else if (status === 'paused') printMessage(`${yellow('paused')}\t${sources.join(' ')}\t${detail}`);
          else
            printMessage(
              `${status === 'failed' ? red('failed') : status}\t${sources.join(' ')}\t${detail}\t${took}${tries}`,
            );
        },
  });
  for (const warning of worker.warnings) printMessage(`${yellow('warning')}: ${warning}`);
  printMessage(
    `worker ${process.pid}: ${options.concurrency} job(s) at once from ${worker.description}; ` +
      'SIGTERM or Ctrl-C to stop',
  );
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.once('SIGINT', () => process.exit(130)).once('SIGTERM', () => process.exit(143));
      printMessage('stopping: finishing the jobs under way (signal again to stop now)');
      resolve();
    };
    process.once('SIGINT', stop).once('SIGTERM', stop);
  });
  await worker.close();
  printMessage('worker stopped');
  // Closed while Redis is away, BullMQ's fetch watchdog and ioredis' hang-up timers would hold
  // the process for up to 6 s more; there is nothing left to do, so it ends with them pending.
  setTimeout(() => process.exit(), 100).unref();
  return 0;
}

async function connect(target: QueueOptions, claim: boolean): Promise<QueueConnection> {
  const queue = await connectQueue(target, claim);
  for (const warning of queue.warnings) printMessage(`${stderrStyles().yellow('warning')}: ${warning}`);
  return queue;
}

/** ` --queue <url> [--queue-name <name>]`, for a command to copy. */
const queueFlags = (queue: QueueConnection) =>
  ` --queue ${queue.where}${queue.name === DEFAULT_QUEUE_NAME ? '' : ` --queue-name ${queue.name}`}`;

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
    lines.push(`  ${batch.id}  ${batch.created}  ${n(batch.finished)} of ${n(batch.originals)} original(s) finished`);
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
