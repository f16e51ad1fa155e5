import type { RedisScript } from './redis-sync-client.js';

/**
 * The Lua scripts of the Redis run store: each runs atomically on the server.
 * ARGV[1] is always the key prefix (see redis-keys.ts for the names built from it).
 */
export const REDIS_SCRIPTS: RedisScript[] = [
  {
    // Deletes the items of one step from index ARGV[3] on, and their large values.
    name: 'runnerTrimItems',
    numberOfKeys: 0,
    lua: `
local prefix, run, step, count = ARGV[1], ARGV[2], ARGV[4], tonumber(ARGV[3])
local items = prefix .. 'items:' .. run .. ':' .. step
for _, index in ipairs(redis.call('HKEYS', items)) do
  if tonumber(index) >= count then redis.call('HDEL', items, index) end
end
local large = prefix .. 'large:' .. run
local owners = redis.call('HGETALL', large)
for i = 1, #owners, 2 do
  local owner = owners[i + 1]
  local colon = string.find(owner, ':', 1, true)
  local item, ownerStep = tonumber(string.sub(owner, 1, colon - 1)), string.sub(owner, colon + 1)
  if ownerStep == step and item >= count then
    redis.call('HDEL', large, owners[i])
    redis.call('DEL', prefix .. 'chunks:' .. run .. ':' .. owners[i])
  end
end
return 1`,
  },
  {
    // Sets the owner when the current one is still ARGV[3] ('' = none); 0 when it changed meanwhile.
    name: 'runnerClaim',
    numberOfKeys: 0,
    lua: `
local key = ARGV[1] .. 'run:' .. ARGV[2]
if redis.call('EXISTS', key) == 0 then return 1 end
local current = redis.call('HGET', key, 'owner') or ''
if current ~= ARGV[3] then return 0 end
redis.call('HSET', key, 'owner', ARGV[4], 'ownerId', ARGV[5], 'heartbeatMs', ARGV[6])
return 1`,
  },
  {
    // Clears the owner if it is ARGV[3] (`host\\npid`).
    name: 'runnerRelease',
    numberOfKeys: 0,
    lua: `
local key = ARGV[1] .. 'run:' .. ARGV[2]
if redis.call('HGET', key, 'ownerId') == ARGV[3] then redis.call('HDEL', key, 'owner', 'ownerId') end
return 1`,
  },
  {
    // Sets heartbeatMs = ARGV[3] on the runs ARGV[4..] that owner ARGV[2] holds.
    name: 'runnerHeartbeat',
    numberOfKeys: 0,
    lua: `
for i = 4, #ARGV do
  local key = ARGV[1] .. 'run:' .. ARGV[i]
  if redis.call('HGET', key, 'ownerId') == ARGV[2] then redis.call('HSET', key, 'heartbeatMs', ARGV[3]) end
end
return 1`,
  },
  {
    // Summaries of the runs in sorted set ARGV[2], newest first, with start time between ARGV[3] and ARGV[4] (score bounds),
    // status ARGV[5] and workflow ARGV[6] ('' = any), skipping ARGV[7], at most ARGV[8] (-1 = all).
    // Walks the set in pages, so a limit of 20 reads about 20 runs whatever the total.
    name: 'runnerListRuns',
    numberOfKeys: 0,
    lua: `
local prefix, set, status, workflow = ARGV[1], ARGV[2], ARGV[5], ARGV[6]
local skip, limit = tonumber(ARGV[7]), tonumber(ARGV[8])
local out, page, offset = {}, 500, 0
while limit < 0 or #out < limit do
  local ids = redis.call('ZREVRANGEBYSCORE', set, ARGV[4], ARGV[3], 'LIMIT', offset, page)
  for _, id in ipairs(ids) do
    local row = redis.call('HMGET', prefix .. 'run:' .. id, 'workflow', 'status', 'trigger', 'startedAt', 'endedAt', 'durationMs')
    if row[1] and (status == '' or row[2] == status) and (workflow == '' or row[1] == workflow) then
      if skip > 0 then skip = skip - 1
      else
        table.insert(out, { id, row[1], row[2], row[3], row[4], row[5], row[6] })
        if limit >= 0 and #out >= limit then break end
      end
    end
  end
  if #ids < page then break end
  offset = offset + page
end
return out`,
  },
  {
    // The whole run: its hash, steps, items per step and large value index, read at one instant.
    name: 'runnerGetRun',
    numberOfKeys: 0,
    lua: `
local prefix, run = ARGV[1], ARGV[2]
if redis.call('HEXISTS', prefix .. 'run:' .. run, 'workflow') == 0 then return false end
local row = redis.call('HGETALL', prefix .. 'run:' .. run)
local items = {}
for _, step in ipairs(redis.call('SMEMBERS', prefix .. 'itemsteps:' .. run)) do
  table.insert(items, { step, redis.call('HGETALL', prefix .. 'items:' .. run .. ':' .. step) })
end
return { row, redis.call('HGETALL', prefix .. 'steps:' .. run), items, redis.call('HGETALL', prefix .. 'large:' .. run) }`,
  },
  {
    // Deletes a run and every key and index entry it has (also a run written after it was deleted: no workflow).
    name: 'runnerDeleteRun',
    numberOfKeys: 0,
    lua: `
local prefix, run = ARGV[1], ARGV[2]
local key = prefix .. 'run:' .. run
local row = redis.call('HMGET', key, 'workflow', 'triggerHash')
for _, step in ipairs(redis.call('SMEMBERS', prefix .. 'itemsteps:' .. run)) do redis.call('DEL', prefix .. 'items:' .. run .. ':' .. step) end
for _, value in ipairs(redis.call('HKEYS', prefix .. 'large:' .. run)) do redis.call('DEL', prefix .. 'chunks:' .. run .. ':' .. value) end
redis.call('DEL', key, prefix .. 'steps:' .. run, prefix .. 'itemsteps:' .. run, prefix .. 'journal:' .. run, prefix .. 'open:' .. run,
  prefix .. 'outcomes:' .. run, prefix .. 'large:' .. run)
redis.call('ZREM', prefix .. 'runs', run)
redis.call('ZREM', prefix .. 'ids', run)
for _, status in ipairs({ 'running', 'waiting', 'succeeded', 'failed', 'cancelled' }) do redis.call('ZREM', prefix .. 'runs:status:' .. status, run) end
if not row[1] then return 0 end
local byWorkflow = prefix .. 'runs:wf:' .. row[1]
redis.call('ZREM', byWorkflow, run)
if redis.call('ZCARD', byWorkflow) == 0 then redis.call('SREM', prefix .. 'workflows', row[1]) end
if row[2] then redis.call('ZREM', prefix .. 'runs:hash:' .. row[1] .. ':' .. row[2], run) end
return 1`,
  },
  {
    // Sets step ARGV[3] of run ARGV[2] to ARGV[5] if the run is still waiting and the step still ARGV[4]; 0 when either changed.
    name: 'runnerSetIfSame',
    numberOfKeys: 0,
    lua: `
local prefix, run = ARGV[1], ARGV[2]
if redis.call('HGET', prefix .. 'run:' .. run, 'status') ~= 'waiting' then return 0 end
local steps = prefix .. 'steps:' .. run
if redis.call('HGET', steps, ARGV[3]) ~= ARGV[4] then return 0 end
redis.call('HSET', steps, ARGV[3], ARGV[5])
return 1`,
  },
  {
    // Claims meta field ARGV[2] for ARGV[3] at time ARGV[4] unless another holder claimed it less than ARGV[5] ms ago.
    name: 'runnerClaimMeta',
    numberOfKeys: 0,
    lua: `
local key = ARGV[1] .. 'meta'
local current = redis.call('HGET', key, ARGV[2])
if current then
  local newline = string.find(current, '\\n', 1, true)
  local holder, at = string.sub(current, 1, newline - 1), tonumber(string.sub(current, newline + 1))
  if holder ~= ARGV[3] and tonumber(ARGV[4]) - at < tonumber(ARGV[5]) then return 0 end
end
redis.call('HSET', key, ARGV[2], ARGV[3] .. '\\n' .. ARGV[4])
return 1`,
  },
];
