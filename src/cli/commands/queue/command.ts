/**
 * `content-api queue status` and `content-api queue results <batch>`: their flags and help;
 * the work is in status.ts and results.ts.
 */
import type { Command } from 'commander';
import { epilogue } from '../../help.js';
import { addHttpOptions, addQueueOptions, type Flags, queueFrom } from '../../options.js';

const STATUS_DESCRIPTION =
  'Jobs waiting, active and retrying, workers connected, originals finished, the rate over the last minute ' +
  'and the time left, and the latest batches.';
const STATUS_EXAMPLES = [
  'content-api queue status --queue redis://redis.internal:6379',
  'watch -n 5 content-api queue status --queue redis://redis.internal:6379',
];
const STATUS_EXIT_CODES = {
  0: 'the status was printed',
  2: 'Redis unreachable, no content-api queue of that name, bad flags',
};

const RESULTS_DESCRIPTION =
  'The report of a batch (render --queue --detach printed its id), as render prints it: waits until every job ' +
  'has finished, unless --no-wait. Batches are kept 7 days.';
const RESULTS_EXAMPLES = [
  'batch=$(content-api render s3://gallery-originals/ --out s3://gallery-media/media/ ' +
    '--queue redis://redis.internal:6379 --detach)',
  'content-api queue results "$batch" --queue redis://redis.internal:6379 --json > images.json',
];
const RESULTS_EXIT_CODES = {
  0: 'every original rendered or up to date',
  1: 'some originals failed, or (--no-wait) are still queued',
  2: 'Redis unreachable, no such batch, bad flags',
};

export function queueCommand(program: Command): Command {
  const queue = program
    .command('queue')
    .summary('what a render queue holds; the report of a batch')
    .description(
      'Look at a render queue (render --queue, content-api worker): its jobs, workers and rate, ' +
        'or the report of one batch.',
    );

  const status = queue.command('status').description(STATUS_DESCRIPTION);
  addHttpOptions(addQueueOptions(status, 'the queue'), { timeout: 'connecting to Redis' })
    .option('--json', 'print the status as one JSON document')
    .addHelpText('after', epilogue(STATUS_EXAMPLES, STATUS_EXIT_CODES))
    .action(async (flags: Flags, command: Command) => {
      const { runQueueStatus } = await import('./status.js');
      process.exitCode = await runQueueStatus({ queue: queueFrom(flags, command), json: Boolean(flags.json) });
    });

  const results = queue.command('results').description(RESULTS_DESCRIPTION).argument('<batch>', 'the batch id');
  addHttpOptions(addQueueOptions(results, 'the queue'), { timeout: 'connecting to Redis' })
    .option('--no-wait', 'report what has finished now; the rest is listed as still queued')
    .option('--alt-text <file>', 'JSON object mapping originals (path or file name) to alt text, for the Image objects')
    .option('--json', 'print one JSON document with every result and failure on stdout')
    .addHelpText('after', epilogue(RESULTS_EXAMPLES, RESULTS_EXIT_CODES))
    .action(async (batch: string, flags: Flags, command: Command) => {
      const { runQueueResults } = await import('./results.js');
      process.exitCode = await runQueueResults(batch, {
        queue: queueFrom(flags, command),
        wait: flags.wait as boolean,
        json: Boolean(flags.json),
        altTextFile: flags.altText as string | undefined,
      });
    });
  return queue;
}
