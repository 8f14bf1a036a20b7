--[[
  Takes a job BullMQ cannot read out of the queue, only while it is still active (no stalled
  check has put it back in the meantime): its hash, lock and logs go.

  Input:
    KEYS[1] active list
    KEYS[2] stalled set
    KEYS[3] the job's hash

    ARGV[1] the job's id

  Output:
    1 dropped, 0 no longer active (left alone)
]]
if redis.call('LREM', KEYS[1], -1, ARGV[1]) == 0 then return 0 end
redis.call('SREM', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[3], KEYS[3] .. ':lock', KEYS[3] .. ':logs')
return 1
