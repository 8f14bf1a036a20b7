/**
 * The writer of a job's result record to Redis (`collectBatch` reads it): one script per write
 * (commands/writeResult-6.lua), so that the record, the queue's counters, the rate window and the
 * batch's count change together.
 */
import { commandsOn } from './commands.js';
import type { QueueConnection } from './connection.js';
import { PROTOCOL, RESULT_TTL_SECONDS, type ResultRecord, TICK_MS, UNKNOWN_BATCH } from './protocol.js';

/**
 * Writes a job's result for its batch, the counters and the rate window in one step, stamped
 * with Redis's clock. A result its batch has already (the job ran twice: its worker's lock
 * lapsed) is kept, and counted once.
 */
export function resultWriter(queue: QueueConnection) {
  const run = commandsOn(queue.redis);
  return {
    /** `batch` is UNKNOWN_BATCH for a job refused before its batch could be read (counted as one failure). */
    write(id: string, batch: string, record: ResultRecord): Promise<number> {
      const count = (status: string) => record.results.filter((result) => result.status === status).length;
      const failed = record.refused === undefined ? record.failures.length : 1;
      const { result, stats, tick, batchDone, marker, denied } = queue.keys;
      return run(
        'writeResult',
        [result(id), stats, tick(''), batchDone(batch), marker, denied(id)],
        [
          JSON.stringify(record),
          RESULT_TTL_SECONDS,
          TICK_MS,
          JSON.stringify({ protocol: PROTOCOL }),
          count('rendered'),
          count('skipped'),
          failed,
          record.results.length + failed,
          batch,
          UNKNOWN_BATCH,
        ],
      );
    },
    retried: () => queue.redis.hincrby(queue.keys.stats, 'retried', 1).then(() => undefined),
  };
}
