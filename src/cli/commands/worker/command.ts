/**
 * `content-api worker`: its flags and help; the work is in run.ts.
 */
import { availableParallelism } from 'node:os';
import type { Command } from 'commander';
import { LOCK_MS, MIN_LOCK_MS } from '../../../queue/protocol.js';
import { epilogue } from '../../help.js';
import {
  addHttpOptions,
  addQueueOptions,
  addS3Options,
  concurrencyOption,
  type Flags,
  queueFrom,
  s3From,
} from '../../options.js';
import { integerIn } from '../../parse.js';

const DESCRIPTION =
  'Take render jobs from a BullMQ queue on Redis, one per original, and render them with the same pipeline ' +
  'as a local render, --concurrency at a time, into the output location each job names (an s3:// bucket, or ' +
  'a folder this machine shares). Run as many workers, on as many machines, as you like. SIGTERM finishes ' +
  'the jobs under way and exits; a worker killed outright loses nothing: its jobs run again elsewhere within ' +
  "15 s. Credentials for S3 come from this machine's environment.";

const EXAMPLES = [
  'content-api worker --queue redis://redis.internal:6379 --concurrency 2',
  'CONTENT_API_QUEUE=redis://redis.internal:6379 content-api worker --quiet',
];

const EXIT_CODES = {
  0: 'stopped by SIGTERM or SIGINT, the jobs under way finished',
  2: 'could not start: Redis unreachable, a queue name of another application, bad flags',
};

export function workerCommand(program: Command): Command {
  const command = program
    .command('worker')
    .summary('render the jobs of a queue (render --queue), on this machine, until stopped')
    .description(DESCRIPTION);
  addQueueOptions(command, 'the queue to work for').addOption(
    concurrencyOption('originals rendered at once (default: the number of cores)'),
  );
  addHttpOptions(command, { timeout: 'connecting to Redis at start, and S3 timeouts: connecting, waiting, silence' });
  command.option(
    '--lock-ms <ms>',
    'how long a job stays locked to a worker that stops answering (killed, frozen, cut off) before another ' +
      'worker takes it over; renewed every half of it while the job runs',
    integerIn('--lock-ms', MIN_LOCK_MS),
    LOCK_MS,
  );
  command.option('-q, --quiet', 'no line per job (a refused job is still said)');
  return addS3Options(command)
    .addHelpText('after', epilogue(EXAMPLES, EXIT_CODES))
    .action(async (flags: Flags, command: Command) => {
      const { runWorker } = await import('./run.js');
      process.exitCode = await runWorker({
        queue: queueFrom(flags, command),
        concurrency: (flags.concurrency as number | undefined) ?? availableParallelism(),
        lockMs: flags.lockMs as number,
        s3: s3From(flags),
        quiet: Boolean(flags.quiet),
      });
    });
}
