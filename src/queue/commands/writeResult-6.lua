--[[
  Writes a job's result for its batch, the queue's counters, the rate window and the batch's
  count in one step, stamped with Redis's clock. A result its batch has already (the job ran
  twice: its worker's lock lapsed) is kept, and counted once.

  Input:
    KEYS[1] the job's results (HASH: batch id -> '<ms> <record JSON>')
    KEYS[2] the queue's counters (HASH)
    KEYS[3] the rate windows' prefix (a window's number is appended)
    KEYS[4] the batch's count of finished originals
    KEYS[5] the queue's mark
    KEYS[6] the job's count of denials

    ARGV[1] the result record (JSON)
    ARGV[2] how long results are kept, s
    ARGV[3] a rate window, ms
    ARGV[4] the queue's mark (JSON)
    ARGV[5] originals rendered
    ARGV[6] originals up to date (skipped)
    ARGV[7] originals failed
    ARGV[8] originals finished
    ARGV[9] the batch's id
    ARGV[10] the id that stands for a batch unknown

  Output:
    Redis's clock, ms
]]
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
return ms
