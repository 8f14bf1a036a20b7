/**
 * The writer of a job's result record to Redis (`collectBatch` reads it): one script per write,
 * so that the record, the queue's counters, the rate window and the batch's count change together.
 */
import type { QueueConnection } from './connection.js';
import { PROTOCOL, RESULT_TTL_SECONDS, type ResultRecord, TICK_MS, UNKNOWN_BATCH } from './protocol.js';

/**
 * Writes a job's result for its batch, the counters and the rate window in one step, stamped
 * with Redis's clock. A result its batch has already (the job ran twice: its worker's lock
 * lapsed) is kept, and counted once.
 */
export function resultWriter(queue: QueueConnection) {
  queue.redis.defineCommand('contentApiResult', {
    numberOfKeys: 6,
    // KEYS: result, stats, rate window prefix, batch counter, queue mark, denial count;
    // ARGV: record, ttl, window ms, mark, rendered, skipped, failed, finished, batch, unknown batch.
    lua: `
      local t = redis.call('TIME')
      local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      local unknown = ARGV[9] == ARGV[10]
      -- A refusal whose batch is unknown: the latest stands, for whichever batch lists the job now.
      if unknown then redis.call('HDEL', KEYS[1], ARGV[9]) end
      local first = redis.call('HSETNX', KEYS[1], ARGV[9], ms .. ' ' .. ARGV[1])
      redis.call('EXPIRE', KEYS[1], ARGV[2])
      -- Each write keeps the hash another week: older batches' entries go, or it would grow
      -- by one for every batch that runs the job (a daily run of an archive).
      local cutoff = ms - tonumber(ARGV[2]) * 1000
      local runs = redis.call('HGETALL', KEYS[1])
      for i = 1, #runs, 2 do
        local written = tonumber(string.match(runs[i + 1], '^(%d+) '))
        if written == nil or written < cutoff then redis.call('HDEL', KEYS[1], runs[i]) end
      end
      -- Kept even if Redis lost it (restarted empty): this queue stays recognisably content-api's.
      redis.call('SET', KEYS[5], ARGV[4], 'NX')
      redis.call('DEL', KEYS[6])
      if first == 0 then return ms end
      redis.call('HINCRBY', KEYS[2], 'rendered', ARGV[5])
      redis.call('HINCRBY', KEYS[2], 'skipped', ARGV[6])
      redis.call('HINCRBY', KEYS[2], 'failed', ARGV[7])
      local tick = KEYS[3] .. math.floor(ms / tonumber(ARGV[3]))
      redis.call('INCRBY', tick, ARGV[8])
      redis.call('EXPIRE', tick, 900)
      if not unknown then
        redis.call('INCRBY', KEYS[4], ARGV[8])
        redis.call('EXPIRE', KEYS[4], ARGV[2])
      end
      return ms`,
  });
  const run = (
    queue.redis as unknown as Record<string, (...args: Array<string | number>) => Promise<number>>
  ).contentApiResult!.bind(queue.redis);
  return {
    /** `batch` is UNKNOWN_BATCH for a job refused before its batch could be read (counted as one failure). */
    write(id: string, batch: string, record: ResultRecord): Promise<number> {
      const count = (status: string) => record.results.filter((result) => result.status === status).length;
      const failed = record.refused === undefined ? record.failures.length : 1;
      const { result, stats, tick, batchDone, marker, denied } = queue.keys;
      const keys = [result(id), stats, tick(''), batchDone(batch), marker, denied(id)];
      return run(
        ...keys,
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
      );
    },
    retried: () => queue.redis.hincrby(queue.keys.stats, 'retried', 1).then(() => undefined),
  };
}
