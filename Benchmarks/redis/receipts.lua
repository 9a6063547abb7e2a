-- The receipt rules of docs/events.md as one Redis script: what a backend team would
-- build on Redis instead of the bus. Benchmarks/redis/redis_receipts.c loads it and
-- calls it once per ingress event (EVALSHA sha 0 EVENT_JSON), pipelined.
--
-- Returns "ok" (state changed), "ign" (nothing to change: a late or repeated ack, a
-- repeated message), "dup" (an event id seen before) or "rej:REASON" (the reducer's
-- receipt.rejected). Out events are PUBLISHed on the topics the bus uses
-- (out/<cid>/message.read, out/@<user>/notification.mark_read, diag/<cid>/…).
--
-- Keys, per channel C and user U:
--   dedup              set of source|id                     (deduplication)
--   c:C                hash: n = messages so far            (the channel exists)
--   c:C:mem            set of members now;  u:U:ch  set of U's channels now
--   c:C:mi / c:C:im    message id -> position / position -> message id
--   c:C:ms             message id -> sender;  c:C:del  set of deleted message ids
--   c:C:cnt            zset of the messages that count as unread (regular, not
--                      silent, not deleted), scored by position
--   c:C:own:U          the same, U's own messages only
--   c:C:r / c:C:d      zsets member -> read / delivered position: the watermarks, and
--                      the group read and delivered counts of any message (ZCOUNT)
--   c:C:t              hash r:U / d:U -> the watermark's time
--   c:C:gone           hash U -> "r d rt dt": watermarks of a removed member
--   p:U                hash read / delivery -> "0" when U turned receipts off
--   ct:TYPE            hash read / delivery -> "0" when the channel type turned them off

local ev = cjson.decode(ARGV[1])
if redis.call('SADD', 'dedup', ev.source .. '|' .. ev.id) == 0 then return 'dup' end
local seq = redis.call('INCR', 'seq')
local kind, data, time = ev.type, ev.data, ev.time or ''
local emitted = 0

local function emit(topic, etype, subject, body)
  redis.call('PUBLISH', topic, '{"specversion":"1.0","id":"redis-receipts:' .. seq .. ':' .. emitted ..
    '","source":"/redis/receipts","type":"' .. etype .. '","subject":"' .. subject .. '","time":"' .. time ..
    '","data":' .. body .. '}')
  emitted = emitted + 1
end

local function quoted(value)
  if value == nil then return 'null' end
  return '"' .. value .. '"'
end

local function reject(reason, cid, user, message)
  local body = '{"seq":' .. seq .. ',"type":"' .. kind .. '","cid":"' .. cid .. '"'
  if user then body = body .. ',"user_id":"' .. user .. '"' end
  if message then body = body .. ',"message_id":"' .. message .. '"' end
  emit('diag/' .. cid .. '/receipt.rejected', 'receipt.rejected', cid, body .. ',"reason":"' .. reason .. '"}')
  return 'rej:' .. reason
end

-- Whether U's receipts of this kind ("read" / "delivery") may go to the channel.
local function allowed(cid, user, what, etype)
  local reason
  if redis.call('HGET', 'p:' .. user, what) == '0' then
    reason = 'user_setting'
  elseif redis.call('HGET', 'ct:' .. string.match(cid, '^[^:]+'), what) == '0' then
    reason = 'channel_type'
  end
  if reason == nil then return true end
  emit('diag/' .. cid .. '/receipt.suppressed', 'receipt.suppressed', cid, '{"seq":' .. seq .. ',"type":"' .. etype ..
    '","reason":"' .. reason .. '","policy":"' .. what .. '-privacy"}')
  return false
end

local function unread_in(cid, user)
  local read = redis.call('ZSCORE', 'c:' .. cid .. ':r', user)
  local after = '(' .. (read or '0')
  return redis.call('ZCOUNT', 'c:' .. cid .. ':cnt', after, '+inf')
    - redis.call('ZCOUNT', 'c:' .. cid .. ':own:' .. user, after, '+inf')
end

-- The counts of a notification: unread here, channels with unread, unread in all.
local function counts(cid, user)
  local here, channels, total = unread_in(cid, user), 0, 0
  for _, other in ipairs(redis.call('SMEMBERS', 'u:' .. user .. ':ch')) do
    local n = other == cid and here or unread_in(other, user)
    if n > 0 then
      channels = channels + 1
      total = total + n
    end
  end
  return ',"unread_messages":' .. here .. ',"unread_channels":' .. channels .. ',"total_unread_count":' .. total .. '}'
end

local function add_member(cid, user)
  if redis.call('SADD', 'c:' .. cid .. ':mem', user) == 0 then return end
  redis.call('SADD', 'u:' .. user .. ':ch', cid)
  local gone = redis.call('HGET', 'c:' .. cid .. ':gone', user)
  if gone then
    local r, d, rt, dt = string.match(gone, '^(%S+) (%S+) (%S+) (%S+)$')
    if r ~= '-' then
      redis.call('ZADD', 'c:' .. cid .. ':r', r, user)
      redis.call('HSET', 'c:' .. cid .. ':t', 'r:' .. user, rt)
    end
    if d ~= '-' then
      redis.call('ZADD', 'c:' .. cid .. ':d', d, user)
      redis.call('HSET', 'c:' .. cid .. ':t', 'd:' .. user, dt)
    end
    redis.call('HDEL', 'c:' .. cid .. ':gone', user)
    return
  end
  -- History is not unread to a new member: both watermarks at the latest message.
  local latest = tonumber(redis.call('HGET', 'c:' .. cid, 'n'))
  if latest > 0 then
    redis.call('ZADD', 'c:' .. cid .. ':r', latest, user)
    redis.call('ZADD', 'c:' .. cid .. ':d', latest, user)
    redis.call('HSET', 'c:' .. cid .. ':t', 'r:' .. user, time, 'd:' .. user, time)
  end
end

-- Moves the read watermark forward to POSITION (and delivered with it), then emits
-- message.read to the channel (unless private) and notification.mark_read to the reader.
local function read_up_to(cid, user, position, message, at)
  local current = tonumber(redis.call('ZSCORE', 'c:' .. cid .. ':r', user))
  if current and position <= current then return 'ign' end
  redis.call('ZADD', 'c:' .. cid .. ':r', position, user)
  redis.call('HSET', 'c:' .. cid .. ':t', 'r:' .. user, at)
  local delivered = tonumber(redis.call('ZSCORE', 'c:' .. cid .. ':d', user))
  if not delivered or delivered < position then
    redis.call('ZADD', 'c:' .. cid .. ':d', position, user)
    redis.call('HSET', 'c:' .. cid .. ':t', 'd:' .. user, at)
  end
  local body = '{"cid":"' .. cid .. '","user_id":"' .. user .. '","last_read_message_id":"' .. message .. '","last_read":"' .. at .. '"'
  if allowed(cid, user, 'read', 'message.read') then
    emit('out/' .. cid .. '/message.read', 'message.read', cid, body .. '}')
  end
  emit('out/@' .. user .. '/notification.mark_read', 'notification.mark_read', '@' .. user, body .. counts(cid, user))
  return 'ok'
end

if kind == 'user.updated' then
  local user, settings = data.user.id, data.user.privacy_settings
  if type(settings) == 'table' then
    if type(settings.read_receipts) == 'table' then
      redis.call('HSET', 'p:' .. user, 'read', settings.read_receipts.enabled and '1' or '0')
    end
    if type(settings.delivery_receipts) == 'table' then
      redis.call('HSET', 'p:' .. user, 'delivery', settings.delivery_receipts.enabled and '1' or '0')
    end
  end
  return 'ok'
elseif kind == 'channel_type.updated' then
  if data.read_events ~= nil then redis.call('HSET', 'ct:' .. data.name, 'read', data.read_events and '1' or '0') end
  if data.delivery_events ~= nil then redis.call('HSET', 'ct:' .. data.name, 'delivery', data.delivery_events and '1' or '0') end
  return 'ok'
end

local cid = data.cid
local channel = 'c:' .. cid

if kind == 'channel.created' then
  redis.call('HSETNX', channel, 'n', 0)
  for _, user in ipairs(data.members) do add_member(cid, user) end
  return 'ok'
end

if kind == 'message.new' then
  local message = data.message
  if redis.call('EXISTS', channel) == 0 then return reject('unknown_channel', cid, message.user_id, message.id) end
  if redis.call('HEXISTS', channel .. ':mi', message.id) == 1 then return 'ign' end
  local position = redis.call('HINCRBY', channel, 'n', 1)
  local sender = message.user_id
  redis.call('HSET', channel .. ':mi', message.id, position)
  redis.call('HSET', channel .. ':im', position, message.id)
  redis.call('HSET', channel .. ':ms', message.id, sender)
  if message.type ~= 'system' and message.silent ~= true then
    redis.call('ZADD', channel .. ':cnt', position, message.id)
    redis.call('ZADD', channel .. ':own:' .. sender, position, message.id)
  end
  -- Sending is not reading: no watermark of the sender moves.
  emit('out/' .. cid .. '/message.new', 'message.new', cid, cjson.encode(data))
  return 'ok'
end

local user = data.user_id
local message = data.message_id
if redis.call('EXISTS', channel) == 0 then return reject('unknown_channel', cid, user, message) end

if kind == 'member.added' then
  add_member(cid, user)
  return 'ok'
elseif kind == 'member.removed' then
  if redis.call('SREM', channel .. ':mem', user) == 0 then return 'ign' end
  redis.call('SREM', 'u:' .. user .. ':ch', cid)
  local r = redis.call('ZSCORE', channel .. ':r', user)
  local d = redis.call('ZSCORE', channel .. ':d', user)
  local times = redis.call('HMGET', channel .. ':t', 'r:' .. user, 'd:' .. user)
  redis.call('HSET', channel .. ':gone', user, (r or '-') .. ' ' .. (d or '-') .. ' ' .. (times[1] or '-') .. ' ' .. (times[2] or '-'))
  redis.call('ZREM', channel .. ':r', user)
  redis.call('ZREM', channel .. ':d', user)
  return 'ok'
elseif kind == 'message.deleted' then
  if redis.call('HEXISTS', channel .. ':mi', message) == 0 then return reject('unknown_message', cid, nil, message) end
  if redis.call('SADD', channel .. ':del', message) == 0 then return 'ign' end
  redis.call('ZREM', channel .. ':cnt', message)
  redis.call('ZREM', channel .. ':own:' .. redis.call('HGET', channel .. ':ms', message), message)
  emit('out/' .. cid .. '/message.deleted', 'message.deleted', cid, cjson.encode(data))
  return 'ok'
end

-- The acks.
if redis.call('SISMEMBER', channel .. ':mem', user) == 0 then return reject('not_member', cid, user, message) end

if kind == 'notification.mark_read' then
  local latest = tonumber(redis.call('HGET', channel, 'n'))
  if latest == 0 then return 'ign' end
  return read_up_to(cid, user, latest, redis.call('HGET', channel .. ':im', latest), data.read_at or time)
end

local position = tonumber(redis.call('HGET', channel .. ':mi', message))
if not position then return reject('unknown_message', cid, user, message) end

if kind == 'message.read' then
  return read_up_to(cid, user, position, message, data.read_at or time)
elseif kind == 'message.delivered' then
  local current = tonumber(redis.call('ZSCORE', channel .. ':d', user))
  if current and position <= current then return 'ign' end
  local at = data.delivered_at or time
  redis.call('ZADD', channel .. ':d', position, user)
  redis.call('HSET', channel .. ':t', 'd:' .. user, at)
  if allowed(cid, user, 'delivery', 'message.delivered') then
    emit('out/' .. cid .. '/message.delivered', 'message.delivered', cid, '{"cid":"' .. cid .. '","user_id":"' .. user ..
      '","last_delivered_message_id":"' .. message .. '","last_delivered_at":"' .. at .. '"}')
  end
  return 'ok'
elseif kind == 'notification.mark_unread' then
  if redis.call('HGET', channel .. ':ms', message) == user then return reject('own_message', cid, user, message) end
  -- Read goes back to the message before, if that is earlier than read now.
  local target = position - 1
  local current = tonumber(redis.call('ZSCORE', channel .. ':r', user))
  if not current or target >= current then return 'ign' end
  redis.call('ZADD', channel .. ':r', target, user)
  redis.call('HSET', channel .. ':t', 'r:' .. user, time)
  local before = target > 0 and redis.call('HGET', channel .. ':im', target) or nil
  emit('out/@' .. user .. '/notification.mark_unread', 'notification.mark_unread', '@' .. user,
    '{"cid":"' .. cid .. '","user_id":"' .. user .. '","first_unread_message_id":"' .. message .. '","last_read_message_id":' ..
    quoted(before) .. ',"last_read":"' .. time .. '"' .. counts(cid, user))
  return 'ok'
end
return 'ign'
