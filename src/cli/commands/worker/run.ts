/**
 * `content-api worker`: render the queue's jobs on this machine until SIGTERM or SIGINT.
 */
import { escapeText, someOf } from '../../../errors.js';
import type { QueueOptions } from '../../../queue/connection.js';
import { startWorker } from '../../../queue/worker.js';
import type { S3Options } from '../../../storage/s3-url.js';
import { printMessage, stderrStyles } from '../../output.js';
import { setRenderThreads } from '../../threads.js';

export interface WorkerCommandOptions {
  queue: QueueOptions;
  concurrency: number;
  lockMs: number;
  s3: S3Options;
  quiet: boolean;
}

/** Runs until SIGTERM or SIGINT, then finishes the jobs under way; a second signal stops at once. */
export async function runWorker(options: WorkerCommandOptions): Promise<number> {
  const { red, yellow } = stderrStyles();
  setRenderThreads();
  // Listening before the worker starts: it may take a job before it says it is ready, and a signal
  // then must let that job finish, not end the process under it.
  let stop = () => {};
  const stopped = new Promise<void>((resolve) => {
    stop = () => {
      process.once('SIGINT', () => process.exit(130)).once('SIGTERM', () => process.exit(143));
      printMessage('stopping: finishing the jobs under way (signal again to stop now)');
      resolve();
    };
  });
  process.once('SIGINT', stop).once('SIGTERM', stop);
  const worker = await startWorker({
    ...options.queue,
    concurrency: options.concurrency,
    lockMs: options.lockMs,
    s3: options.s3,
    onError: (message) => printMessage(`${yellow('warning')}: Redis: ${escapeText(message)}; retrying`),
    // Job data is anyone's who can write to Redis: every name and reason from it is escaped.
    onJob: (event) => {
      const { status, attempt, ms } = event;
      // A refused job is said even with --quiet: nothing else tells why its batch lists it failed.
      if (status === 'started' || (options.quiet && status !== 'refused')) return;
      const [id, sources, detail] = [event.id, someOf(event.sources, 10, ' '), event.detail].map(escapeText);
      const tries = attempt > 1 ? ` (attempt ${attempt})` : '';
      const took = `${(ms / 1000).toFixed(1)} s`;
      if (status === 'done') printMessage(`${detail}\t${sources}\t${took}${tries}`);
      else if (status === 'paused') printMessage(`${yellow('paused')}\t${sources}\t${detail}`);
      else if (status === 'refused') printMessage(`${red('refused')}\tjob ${id}\t${detail}`);
      else printMessage(`${status === 'failed' ? red('failed') : status}\t${sources}\t${detail}\t${took}${tries}`);
    },
  }).catch((error: unknown) => {
    // Never started: the signals are the process's again (one that runs the command line in-process goes on).
    process.off('SIGINT', stop).off('SIGTERM', stop);
    throw error;
  });
  for (const warning of worker.warnings) printMessage(`${yellow('warning')}: ${warning}`);
  printMessage(
    `worker ${process.pid}: ${options.concurrency} job(s) at once from ${worker.description}; ` +
      'SIGTERM or Ctrl-C to stop',
  );
  await stopped;
  await worker.close();
  printMessage('worker stopped');
  // Closed while Redis is away, BullMQ's fetch watchdog and ioredis' hang-up timers would hold
  // the process for up to 6 s more; there is nothing left to do, so it ends with them pending.
  setTimeout(() => process.exit(), 100).unref();
  return 0;
}
