//! The Lua scripts that make every fleet-wide change atomic on the server.
//!
//! Each script runs alone on the Redis server, so a read-compare-write inside
//! one is never interleaved with another process's. Keys are built inside the
//! scripts from the namespace prefix `{ns}` (with its braces, so every key of a
//! fleet is in one Redis Cluster hash slot). Numbers go out as strings, since
//! Lua would print a large one in exponent form.

use redis::Script;

/// Every script, loaded once per fleet (`EVALSHA`, with `EVAL` when the
/// server lost its script cache, as after a restart).
#[derive(Debug)]
pub(crate) struct Scripts {
    pub(crate) push: Script,
    pub(crate) pull: Script,
    pub(crate) lease: Script,
    pub(crate) members: Script,
    pub(crate) lease_return: Script,
    pub(crate) breaker_open: Script,
    pub(crate) breaker_result: Script,
    pub(crate) breaker_claim: Script,
    pub(crate) breaker_release: Script,
    pub(crate) breaker_state: Script,
    pub(crate) breaker_hold: Script,
    pub(crate) breaker_holds: Script,
}

impl Scripts {
    pub(crate) fn new() -> Scripts {
        Scripts {
            push: Script::new(&[NUMBERS, PUSH].concat()),
            pull: Script::new(&[NUMBERS, PULL].concat()),
            lease: Script::new(&[NUMBERS, LEASE].concat()),
            members: Script::new(MEMBERS),
            lease_return: Script::new(&[NUMBERS, LEASE_RETURN].concat()),
            breaker_open: Script::new(&[NUMBERS, BREAKER_OPEN].concat()),
            breaker_result: Script::new(&[NUMBERS, BREAKER_RESULT].concat()),
            breaker_claim: Script::new(&[NUMBERS, CUT_OPENING, BREAKER_CLAIM].concat()),
            breaker_release: Script::new(&[NUMBERS, BREAKER_RELEASE].concat()),
            breaker_state: Script::new(&[NUMBERS, CUT_OPENING, BREAKER_STATE].concat()),
            breaker_hold: Script::new(&[NUMBERS, BREAKER_HOLD].concat()),
            breaker_holds: Script::new(&[NUMBERS, BREAKER_HOLDS].concat()),
        }
    }
}

/// How every script reads a number it finds stored in Redis, which anything
/// sharing the namespace may have written: one reading per kind of number,
/// each site picking out its field and reading it here.
///
/// - `whole`: a count or a time in ms the scripts write (a budget window's
///   grants and first attempts, a batch number, an opening's end, a probe
///   round's name and its count of successes): a whole number of at most
///   fifteen digits, so exact in a Lua number with room to add to it (one
///   more round, a grant), and written back by `%.0f` as it was read. Past
///   that (`inf`, `1e300`, twenty digits, `-1`, text), none: each site says
///   what it takes instead. Nor is one with a leading zero (`007`), which
///   no script writes: `tonumber` reads it, but `HINCRBY` refuses it, so a
///   count that passed for sound failed every lease (a window's grants) or
///   every push (a writer's `#sum`, below) that added to it, and it would
///   not be written back as it was read.
/// - `exact`: a count the push keeps (a writer's `#sum`, the change counter
///   `{ns}:ver`): up to 2⁵³, sixteen digits, as the sums of the largest
///   writers and a counter that follows the server's clock in µs reach.
///   No leading zero either, as for `whole`. The bound is compared as
///   digits, not as a Lua number: `tonumber` rounds 2⁵³ + 1 to 2⁵³, which
///   passed for a sound counter, read as one number by the push and passed
///   on as another by the pull.
/// - `cooldown_ms`: a held cooldown, read with no limit on its digits and
///   cut to the reader's longest, as the claim's docs say why: a cooldown
///   too long to be exact is still the fleet's word that the endpoint was
///   down for long, not none.
///
/// A sequence number of an entry is no such number: it is a `u64` compared
/// as a decimal string, exactly, by the push, which reads it on its own.
const NUMBERS: &str = r"
-- digits as `%.0f` writes them, and as HINCRBY takes them: no leading zero
local function digits(v)
  return v and (v == '0' or string.match(v, '^[1-9]%d*$'))
end
local function whole(v)
  if digits(v) and #v <= 15 then return tonumber(v) end
  return nil
end
local function exact(v)
  if digits(v) and (#v < 16 or (#v == 16 and v <= '9007199254740992')) then
    return tonumber(v)
  end
  return nil
end
local function cooldown_ms(v, longest)
  if v and string.match(v, '^%d+$') and tonumber(v) >= 1 then
    return math.min(tonumber(v), longest)
  end
  return nil
end
";

/// What the claim and the state scripts share: cutting an opening whose end
/// is further off than the longest cooldown.
///
/// No process of this version writes an `open until` more than its longest
/// cooldown (at most [`FleetBreaker::MAX_COOLDOWN_MS`]) past the server's
/// clock. One further off — fifteen digits that parse, written by hand, by
/// a tool sharing the namespace, or by a process of an earlier version that
/// took a longest cooldown of centuries — is not garbled, and was kept: the
/// endpoint stayed open for the whole fleet for as long as it said, never
/// stale, and every later opening kept it as the later end. It is cut to
/// `now + longest` (the reading process's), written back with its current
/// round's end (a round is current only while its end is the opening's), so
/// that it ends: cut only in what a process is told, it would be cut anew
/// from each round's `now`, and never end.
///
/// [`FleetBreaker::MAX_COOLDOWN_MS`]: crate::FleetBreaker::MAX_COOLDOWN_MS
const CUT_OPENING: &str = r"
-- ends the opening of `ep` at `till`: its value `v` begins with its end
-- `held`; its round, if current (its end is `held`), ends at `till` too
local function cut_opening(key, ep, v, held, till)
  local at = string.format('%.0f', till)
  redis.call('HSET', key, ep, at .. string.sub(v, #held + 1))
  local rounds = key .. ':rounds'
  local round, round_at = string.match(redis.call('HGET', rounds, ep) or '', '^(%S+) (%S+)$')
  if round_at == held then redis.call('HSET', rounds, ep, round .. ' ' .. at) end
  return till
end
";

/// Merges a batch of (writer, context) entries into the fleet's evidence.
///
/// ARGV: prefix, ttl ms, a candidate epoch, the number `k` of writers the
/// pusher writes for, those `k` writers each followed by the sum the pusher
/// knows Redis holds of it, the number `f` of entries to forget, those `f`
/// entries as writer, field, seq, then six values per entry: writer, field,
/// seq, updated_at_ms, successes, failures.
///
/// An entry to forget is one its writer's store let go of (evidence 64
/// half-lives old, or a context pushed out of a full store): deleted, with
/// its log member, if the hash still holds that version, and taken off the
/// hash's `#sum`. Without it, a writer's hash would keep every context the
/// writer ever wrote for as long as it lives. A hash left with no entry is
/// deleted, `#sum` and all: kept, it would read as entries outliving a lost
/// change log (below), and every push of its writer would offer a new epoch
/// to a fleet whose stores, and log, hold nothing.
///
/// Per writer, a hash `{ns}:w:{writer}` maps a context's field to the
/// writer's latest version of it. An incoming entry replaces the held one only
/// if it is newer — larger `seq`, ties broken by the later update, then the
/// counts, exactly as `Snapshot::merge` orders versions — so pushing a batch
/// twice, or an old batch after a new one, changes nothing: the join of the
/// store's merge, computed on the server. Each applied entry takes the next
/// number of the counter `{ns}:ver` and is filed under it in the sorted set
/// `{ns}:log`, which is how readers find what changed since they last looked.
/// Entries are handled per writer in chunks of 500 (one `HMGET`, `HSET` and
/// `ZADD` each), which keeps a batch of thousands to a few commands. Sequence
/// numbers are compared exactly, as decimal strings, over the whole `u64`
/// range; every argument is checked before the script writes anything.
///
/// The counter never runs behind the server's clock in microseconds: a
/// failover to a replica that missed the last writes (replication is
/// asynchronous) takes the counter back, and numbers counted on from there
/// would be ones readers have already read past. Counted from the clock,
/// they are past those (unless more than a million entries a second ran the
/// counter ahead of it, or the new primary's clock is behind). A counter that
/// is not a whole number (edited by hand, written by a tool) is taken for a
/// missing one and written anew: numbered from `nan` or `inf`, the log's
/// entries would fail every push, or every pull, of every process. One
/// with no room left up to 2⁵³ for the batch's entries (a whole number
/// just short of it, edited by hand: the clock reaches it in the year
/// 2255) is taken for a lost log, below: counted on, it stopped at 2⁵³,
/// whose one more is the same number in Lua, and every entry after was
/// logged under the number every reader had read up to, and never read.
///
/// The hash's field `#sum` (no context's field starts with `#`) holds the sum
/// of its entries' sequence numbers, each counted up to 2³² (so the sum is
/// exact in a Lua number and a Redis integer for any 2²¹ entries, whatever
/// their sequence numbers: a loss of versions all past 2³² goes unseen),
/// kept up to date here. It is counted
/// anew from the hash's entries (`HGETALL`) when it is missing — a hash
/// written before it existed — or not a whole number `HINCRBY` can add to
/// (edited by hand: the push would fail after its first writes, every
/// round), and when it is less than the sum the pusher
/// knows Redis holds: a process of the previous version, which writes
/// entries without keeping `#sum` (a rolling deploy, a rollback), leaves it
/// short, and a hash that did lose entries is recounted once, as its writer
/// then forgets what it knew and pushes everything again. A recount reads
/// the whole hash in one step: about 180 ms, during which Redis serves
/// nobody else, for a writer of 200 000 contexts.
///
/// The pusher's writers' hashes get their time to live renewed on every push
/// (every round is a push, empty or not: the heartbeat), so a writer that
/// stops syncing ages out `ttl` later. Another writer's hash that a push
/// recreates (re-pushed after Redis lost its data) gets a time to live but
/// no renewal. For each of the pusher's writers the push returns its `#sum`
/// as it was before the batch's writes (0 for a missing hash), so that what
/// the batch adds cannot hide what was lost: a process that counts more than
/// that in what it knows Redis holds knows Redis lost some of it, though the
/// fleet's data
/// (and its epoch) lived on — its hash expired while the process was cut
/// off, or a failover lost its last writes — and pushes all of it again.
///
/// `{ns}:epoch` names this incarnation of the fleet's data: created by the
/// first push that finds it missing, with the pusher's candidate. A client
/// that sees it change knows Redis lost everything (a restart without
/// persistence, a flush, a fleet idle past the ttl) and pushes all it knows
/// again.
///
/// The change log can be lost on its own while the entries it indexes live
/// on: evicted (every key here has a time to live, so a `volatile-*` memory
/// policy may take it), deleted by hand. Readers, newcomers above all, would
/// no longer find entries that do not change again. A push that finds the
/// log missing while the counter `{ns}:ver` or a hash of its writers is
/// still there takes it for a loss of the fleet's data: it offers a new
/// epoch (and drops the counter, so that a log emptied by its writers aging
/// out is taken for one once only), every process pushes all it holds
/// again, and entries a push finds held already are logged again if the log
/// lacks them (`ZADD NX`). So does a push that finds the counter with no
/// room left up to 2⁵³ for its entries, dropping the log with the counter.
///
/// Every key the push writes has its type checked before anything is
/// written, as its arguments are: a key of the wrong type (written by hand,
/// or by a tool sharing the namespace) met halfway left what the push had
/// written so far — the epoch it created, a writer's new hash, a new log —
/// without the time to live it gives them at its end, and a hash of another
/// writer recreated that way kept none even after.
///
/// Returns `{epoch, applied, sum of the 1st writer, ..., of the k-th}`.
const PUSH: &str = r"
local ns = ARGV[1]
local ttl = ARGV[2]
local own = tonumber(ARGV[4])
-- a u64 in decimal, as the client prints it
local function u64(s)
  return string.match(s, '^%d+$') and (#s < 20 or (#s == 20 and s <= '18446744073709551615'))
end
-- `exact(v)` (the prelude): a value this script wrote as a count (a sum,
-- the change counter), a whole number exact in a Lua number, at most 2^53
-- (sixteen digits), or nil for anything else, missing included
-- every argument is checked before anything is written: a script that
-- fails halfway keeps what it wrote
local forgets = own and tonumber(ARGV[5 + 2 * own] or '')
local first = forgets and 6 + 2 * own + 3 * forgets
if not first or #ARGV < first - 1 or (#ARGV - first + 1) % 6 ~= 0 then
  return redis.error_reply('push: malformed arguments')
end
for i = 6, 4 + 2 * own, 2 do
  if not u64(ARGV[i]) then return redis.error_reply('push: a known sum is not a u64') end
end
for i = 6 + 2 * own, first - 1, 3 do
  if not u64(ARGV[i + 2]) then return redis.error_reply('push: an entry to forget is malformed') end
end
for i = first, #ARGV - 5, 6 do
  if not (u64(ARGV[i + 2]) and u64(ARGV[i + 3]) and tonumber(ARGV[i + 4]) and tonumber(ARGV[i + 5])) then
    return redis.error_reply('push: an entry of ' .. ARGV[i] .. ' is malformed')
  end
end
-- every key the push writes is of its type, or missing, before anything is
-- written: refused halfway (WRONGTYPE), the push would leave what it wrote
-- so far, the epoch, a writer's new hash or a new log among it, without
-- the time to live it gives them at its end
local function typed(k, want)
  local found = redis.call('TYPE', k)['ok']
  return found == 'none' or found == want
end
local function wrong(k, want)
  return redis.error_reply('WRONGTYPE push: ' .. k .. ' is not a ' .. want)
end
for _, k in ipairs({ns .. ':epoch', ns .. ':ver'}) do
  if not typed(k, 'string') then return wrong(k, 'string') end
end
if not typed(ns .. ':log', 'zset') then return wrong(ns .. ':log', 'sorted set') end
-- each writer once: a batch is mostly one writer's entries
local checked = {}
local function writers_typed(from, to, step)
  for i = from, to, step do
    if not checked[ARGV[i]] then
      checked[ARGV[i]] = true
      local k = ns .. ':w:' .. ARGV[i]
      if not typed(k, 'hash') then return k end
    end
  end
  return nil
end
local untyped = writers_typed(5, 3 + 2 * own, 2)
  or writers_typed(6 + 2 * own, first - 1, 3)
  or writers_typed(first, #ARGV - 5, 6)
if untyped then return wrong(untyped, 'hash') end
-- whether the change log is gone while entries it indexed may live on
-- (evicted, deleted): the counter, or a hash of the pusher's, outlived it
local function log_lost()
  if redis.call('EXISTS', ns .. ':log') == 1 then return false end
  if redis.call('EXISTS', ns .. ':ver') == 1 then return true end
  for i = 5, 3 + 2 * own, 2 do
    if redis.call('EXISTS', ns .. ':w:' .. ARGV[i]) == 1 then return true end
  end
  return false
end
-- whether the counter, sound, has no room left up to 2^53 for a number per
-- entry of this batch: past 2^53 one more is the same number, and every
-- entry from then on would be logged under the number every reader has
-- read up to, and never read. The room is counted down from 2^53, which is
-- exact: counted up, 2^53 + 1 is 2^53, and never past it
local function counter_full()
  local held = exact(redis.call('GET', ns .. ':ver'))
  return held ~= nil and (#ARGV - first + 1) / 6 > 9007199254740992 - held
end
local epoch = redis.call('GET', ns .. ':epoch')
if epoch and (log_lost() or counter_full()) then
  -- a new epoch makes every process push all it holds again, and the
  -- pushes log the entries they find held already. The counter goes with
  -- it, so that a log emptied by its writers aging out is taken for a loss
  -- once only, and a full one is counted anew from the clock, with a log
  -- of its own: numbered past the new counter, the old log's entries would
  -- take every reader past it.
  epoch = nil
  redis.call('DEL', ns .. ':ver', ns .. ':log')
end
if not epoch then
  epoch = ARGV[3]
  redis.call('SET', ns .. ':epoch', epoch)
end
-- what a sequence number counts for in `#sum`: itself, up to 2^32, so a sum
-- stays exact in a Lua number and in a Redis integer
local CAP = 4294967296
local function counted(seq)
  return math.min(tonumber(seq) or 0, CAP)
end
-- two u64 in decimal compared exactly (a Lua number is not exact past 2^53)
local function cmp(a, b)
  if #a ~= #b then return #a < #b and -1 or 1 end
  if a == b then return 0 end
  return a < b and -1 or 1
end
-- a hash's `#sum`, or nil if it has none this script could add to: missing,
-- or not a whole number HINCRBY takes (edited by hand, written by a tool),
-- which would fail the push after its first writes. A sum is exact up to
-- 2^53 (any 2^21 entries at CAP each), sixteen digits: one that long is the
-- writer's, not garbled, and counted again it would cost a whole read of
-- the hash at every push of the largest writers.
local function held_sum(key)
  return exact(redis.call('HGET', key, '#sum'))
end
-- the sum of a hash's sequence numbers, for a hash without a usable `#sum`
local function total(key)
  local all = redis.call('HGETALL', key)
  local sum = 0
  for j = 1, #all, 2 do
    if all[j] ~= '#sum' then sum = sum + counted(string.match(all[j + 1], '^%d+')) end
  end
  redis.call('HSET', key, '#sum', string.format('%.0f', sum))
  return sum
end
-- the entries, grouped by writer: each writer's hash is read and written in
-- chunks, a few commands per chunk rather than per entry
local groups, order = {}, {}
for i = first, #ARGV - 5, 6 do
  local w = ARGV[i]
  local group = groups[w]
  if not group then
    group = {}
    groups[w] = group
    order[#order + 1] = w
  end
  group[#group + 1] = i
end
local function newer(i, old)
  if not old then return true end
  -- the sequence number decides all but ties: read it alone first
  local held_seq = string.match(old, '^%d+')
  if not held_seq then return true end
  local order = cmp(ARGV[i + 2], held_seq)
  if order ~= 0 then return order > 0 end
  local held = {}
  for x in string.gmatch(old, '%S+') do held[#held + 1] = tonumber(x) end
  if #held ~= 4 then return true end
  for k = 2, 4 do
    local a = tonumber(ARGV[i + 1 + k])
    if a ~= held[k] then return a > held[k] end
  end
  return false
end
-- what Redis holds of each of the pusher's writers, before this batch
-- writes: what the batch adds would hide what a failover took
-- (recounted if it is less than the pusher knows it held: a previous
-- version's script wrote entries without keeping it)
local out = {epoch, '0'}
for i = 5, 3 + 2 * own, 2 do
  local key = ns .. ':w:' .. ARGV[i]
  local sum = held_sum(key)
  if not sum or sum < (tonumber(ARGV[i + 1]) or 0) then
    if redis.call('EXISTS', key) == 1 then sum = total(key) else sum = 0 end
  end
  out[#out + 1] = string.format('%.0f', sum)
end
-- entries the writer's store let go of, if Redis holds those versions
for i = 6 + 2 * own, first - 1, 3 do
  local key = ns .. ':w:' .. ARGV[i]
  local held = redis.call('HGET', key, ARGV[i + 1])
  if held and string.match(held, '^%d+') == ARGV[i + 2] then
    redis.call('HDEL', key, ARGV[i + 1])
    if held_sum(key) then
      redis.call('HINCRBY', key, '#sum', string.format('%.0f', -counted(ARGV[i + 2])))
    end
    redis.call('ZREM', ns .. ':log', ARGV[i] .. '\t' .. ARGV[i + 1])
    -- a hash left with its `#sum` alone holds no entry: gone, as a writer
    -- that never wrote, rather than taken for entries a lost log indexed
    if redis.call('HLEN', key) == redis.call('HEXISTS', key, '#sum') then
      redis.call('DEL', key)
    end
  end
end
local CHUNK = 500
local t = redis.call('TIME')
local clock = tonumber(t[1]) * 1000000 + tonumber(t[2])
-- the counter as pushes write it: a whole number, exact in a Lua number.
-- Anything else (edited by hand, written by a tool: `nan`, `inf`, `1e300`)
-- is taken for a missing counter, counted on from the clock and written
-- anew below: numbered from it, the log's entries would get scores no
-- reader can read (written back into the counter, round after round), or
-- none at all (`nan` fails every push).
local held_ver = redis.call('GET', ns .. ':ver')
local version = exact(held_ver)
local sound_ver = not held_ver or version ~= nil
version = version or 0
if version < clock then version = clock end
local applied, relogged = 0, 0
for _, w in ipairs(order) do
  local key = ns .. ':w:' .. w
  local group = groups[w]
  local fresh = redis.call('EXISTS', key) == 0
  if not fresh and not held_sum(key) then total(key) end
  local wrote = false
  for start = 1, #group, CHUNK do
    local stop = math.min(start + CHUNK - 1, #group)
    local fields = {}
    for g = start, stop do fields[#fields + 1] = ARGV[group[g] + 1] end
    local held = redis.call('HMGET', key, unpack(fields))
    local writes, log, relog, added = {}, {}, {}, 0
    for g = start, stop do
      local i = group[g]
      local old = held[g - start + 1]
      if newer(i, old) then
        writes[#writes + 1] = ARGV[i + 1]
        writes[#writes + 1] = ARGV[i + 2] .. ' ' .. ARGV[i + 3] .. ' ' .. ARGV[i + 4] .. ' ' .. ARGV[i + 5]
        added = added + counted(ARGV[i + 2])
        if old then added = added - counted(string.match(old, '^%d+')) end
        version = version + 1
        log[#log + 1] = string.format('%.0f', version)
        log[#log + 1] = w .. '\t' .. ARGV[i + 1]
      else
        -- held already: logged again only if the log lost it (ZADD NX)
        version = version + 1
        relog[#relog + 1] = string.format('%.0f', version)
        relog[#relog + 1] = w .. '\t' .. ARGV[i + 1]
      end
    end
    if #writes > 0 then
      redis.call('HSET', key, unpack(writes))
      redis.call('HINCRBY', key, '#sum', string.format('%.0f', added))
      redis.call('ZADD', ns .. ':log', unpack(log))
      applied = applied + #writes / 2
      wrote = true
    end
    if #relog > 0 then
      relogged = relogged + redis.call('ZADD', ns .. ':log', 'NX', unpack(relog))
    end
  end
  if wrote and fresh then redis.call('PEXPIRE', key, ttl) end
end
if applied + relogged > 0 or not sound_ver then redis.call('SET', ns .. ':ver', string.format('%.0f', version)) end
out[2] = tostring(applied)
for i = 5, 3 + 2 * own, 2 do
  redis.call('PEXPIRE', ns .. ':w:' .. ARGV[i], ttl)
end
redis.call('PEXPIRE', ns .. ':epoch', ttl)
redis.call('PEXPIRE', ns .. ':ver', ttl)
redis.call('PEXPIRE', ns .. ':log', ttl)
return out
";

/// Reads what changed since version `since`, at most `max` log entries.
///
/// ARGV: prefix, since, max. Returns `{epoch, version, scanned, last score,
/// member, value, member, value, ...}`. Log members whose writer has aged out
/// are removed as they are met (and still count as scanned, so the reader
/// moves past them), and so are those whose writer's key is not a hash
/// (written by hand, or by a tool sharing the namespace), which would fail
/// every pull that came to them, of every process. A version the push does
/// not read as a count (not a whole number, or past 2⁵³: see the push) is
/// reported as `since`: nothing known past what the reader read, until the
/// next push writes the counter anew.
const PULL: &str = r"
local ns = ARGV[1]
local epoch = redis.call('GET', ns .. ':epoch') or ''
local ver = redis.call('GET', ns .. ':ver') or '0'
-- a counter the push does not read as one (see the push; past 2^53 in
-- sixteen digits among them): no version known past what the reader read,
-- until the next push writes it anew. Read as a version, it would take the
-- reader past every number the push counts on from, and the reader would
-- take the next for a failover's loss, and read the whole log again
if not exact(ver) then ver = ARGV[2] end
local members = redis.call('ZRANGEBYSCORE', ns .. ':log', '(' .. ARGV[2], '+inf', 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[3]))
local out = {epoch, ver, tostring(#members / 2), ''}
for i = 1, #members, 2 do
  local m = members[i]
  out[4] = members[i + 1]
  local tab = string.find(m, '\t', 1, true)
  local value = false
  if tab then
    value = redis.pcall('HGET', ns .. ':w:' .. string.sub(m, 1, tab - 1), string.sub(m, tab + 1))
  end
  -- a writer's key that is not a hash answers with an error: no entry
  if type(value) == 'string' then
    out[#out + 1] = m
    out[#out + 1] = value
  else
    redis.call('ZREM', ns .. ':log', m)
  end
end
return out
";

/// Leases up to `want` units of a fleet budget's current window.
///
/// ARGV: budget key, window ms, mode (`w` fixed window, `r` ratio), the
/// window's allowance (fixed) or floor (ratio), the ratio, want, deposits
/// made in window `of`, all-of (0 for none), `of` (empty for none), deposits
/// made in the window after `of`, the process's budget id and the number of
/// this batch of deposits.
///
/// Windows are aligned on the Redis server's clock (`TIME`), the one clock
/// the whole fleet shares. The window's hash holds what has been granted
/// (`s`) and, for a ratio budget, the first attempts deposited (`d`). A grant
/// is all-of if the window has that much left (a lease large enough for a
/// spend that was refused), else `min(want, allowance − granted)`, recorded
/// in the same step, so the sum of every grant in a window never exceeds its
/// allowance, however many processes ask at once. All-of is all or nothing:
/// part of it would not make the spend, and would leave the other processes
/// short for the rest of the window.
///
/// A count of the hash that is not a whole number (edited by hand) is
/// replaced before anything else is written: first attempts by none, grants
/// by more than any allowance, so that the window grants nothing more rather
/// than fail every lease (which the fleet would take for Redis being away,
/// and spend from its fallbacks).
///
/// Deposits (first attempts) count only in the window they were made in:
/// those of `of` if it is the current window (and those the process took
/// for the next one's, made within a round trip of its end), those of the
/// window after `of` if that is the current one; any others are of a window
/// that has ended, and raise no later one's allowance.
///
/// Deposits count once, however often they are sent. A process whose
/// request failed cannot tell whether Redis ran it (a reply lost to a
/// response timeout, or a connection cut, after the script ran), and sends
/// the same batch again: counted twice, its first attempts would raise the
/// allowance twice, and the fleet would retry more than its ratio allows.
/// So each process numbers its batches, and the window's hash keeps, in
/// field `q:{id}`, the number of the last batch of process `id` it counted;
/// a batch numbered no higher, in this window's hash or the previous one's
/// (a batch counted just before the window rolled, sent again just after),
/// is not counted again. One field per process and window, which lives as
/// long as the window's hash.
///
/// Returns `{granted, ms until the window ends, window index}`.
const LEASE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[2])
local index = math.floor(now / window)
local key = ARGV[1] .. ':' .. string.format('%.0f', index)
local of = tonumber(ARGV[9] or '')
local made = 0
if of == index then
  made = (tonumber(ARGV[7]) or 0) + (tonumber(ARGV[10] or '0') or 0)
elseif of and of + 1 == index then
  made = tonumber(ARGV[10] or '0') or 0
end
-- a count of the window's hash, nil if it is not a whole number HINCRBY
-- takes (edited by hand, written by a tool): the lease would fail on it,
-- every time, and the fleet's processes spend from their fallbacks
local function count(field)
  local v = redis.call('HGET', key, field)
  if not v then return 0 end
  return whole(v)
end
-- first attempts unknown: none; grants unknown: the whole allowance, so the
-- window refuses retries for the rest of it rather than grant any twice
if not count('d') then redis.call('HSET', key, 'd', '0') end
if not count('s') then redis.call('HSET', key, 's', '999999999999999') end
-- a batch of deposits counted already (its reply was lost: it came again)
-- counts for none
local who, batch = ARGV[11], tonumber(ARGV[12] or '')
if made > 0 and who and who ~= '' and batch then
  local field = 'q:' .. who
  local function counted(k)
    return whole(redis.call('HGET', k, field)) or 0
  end
  local previous = ARGV[1] .. ':' .. string.format('%.0f', index - 1)
  if batch <= math.max(counted(key), counted(previous)) then
    made = 0
  else
    redis.call('HSET', key, field, string.format('%.0f', batch))
  end
end
local deposits = tonumber(redis.call('HINCRBY', key, 'd', string.format('%.0f', made)))
local granted = count('s')
local allowance = tonumber(ARGV[4])
if ARGV[3] == 'r' then allowance = allowance + math.floor(tonumber(ARGV[5]) * deposits) end
local all_of = tonumber(ARGV[8] or '0') or 0
local grant
if all_of > 0 and all_of <= allowance - granted then
  grant = all_of
else
  grant = math.min(tonumber(ARGV[6]), allowance - granted)
end
if grant < 0 then grant = 0 end
if grant > 0 then redis.call('HINCRBY', key, 's', grant) end
redis.call('PEXPIRE', key, string.format('%.0f', window * 2))
return {string.format('%.0f', grant), string.format('%.0f', (index + 1) * window - now), string.format('%.0f', index)}
";

/// Counts the processes sharing a fleet budget: the fallback's fair share
/// (see `FleetBudgetConfig`) divides the allowance by it.
///
/// ARGV: the key `{ns}:bp:<budget name>`, the process's budget id, the
/// fleet's `ttl` in ms.
///
/// The key is a sorted set of budget ids, each scored with the server's time
/// (ms) of its process's last round: every round of a process that holds
/// the budget adds it, or moves it on. Ids not moved on for `ttl` (a process
/// that stopped, or was cut off from Redis that long) are dropped, and so
/// are ids scored further than `ttl` ahead of the server's clock (written
/// by hand, or before the clock was set back), which would never be; the
/// key itself lives `ttl` past the last round of any process. Returns how
/// many ids are left, this process's among them.
///
/// A key of another type (written by hand, or by a tool sharing the
/// namespace) is replaced by the set: it would fail every count of every
/// process for good (nothing gives it a time to live), and no process would
/// learn its fair share. Any other error of the `ZADD` (`OOM`: see the
/// claim) fails the count, which has written nothing.
const MEMBERS: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
local key = ARGV[1]
local score = string.format('%.0f', now)
local added = redis.pcall('ZADD', key, score, ARGV[2])
if type(added) ~= 'number' then
  local err = type(added) == 'table' and added.err or ''
  if not string.find(err, 'WRONGTYPE', 1, true) then return redis.error_reply(err) end
  redis.call('DEL', key)
  redis.call('ZADD', key, score, ARGV[2])
end
redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. string.format('%.0f', now - ttl))
redis.call('ZREMRANGEBYSCORE', key, '(' .. string.format('%.0f', now + ttl), '+inf')
redis.call('PEXPIRE', key, string.format('%.0f', ttl))
return redis.call('ZCARD', key)
";

/// Gives a process's unspent lease back to its window, when the process
/// shuts down.
///
/// ARGV: the key prefix `{ns}:budget:<name>`, the window index the units
/// were granted in, the units. The window's grants (`s`) go down by the
/// units, never below zero, so the other processes can lease them before
/// the window ends; without this, what a stopping process held stayed
/// granted until then, and a rolling deploy left the new processes short of
/// retries for the rest of the window. A window that has ended (its hash
/// expired) or whose grants are not a whole number (see the lease) is left
/// as it is. Returns the units given back.
///
/// It is sent once and never again, even when its reply is lost: sent
/// twice, the units would be given back twice, and the fleet could spend
/// more than its allowance. A reply lost leaves the units with the window or
/// stranded in the stopped process, as before: never counted twice.
const LEASE_RETURN: &str = r"
local key = ARGV[1] .. ':' .. ARGV[2]
local units = whole(ARGV[3])
if not units or units == 0 then return 0 end
local granted = whole(redis.call('HGET', key, 's'))
if not granted then return 0 end
local back = math.min(units, granted)
if back > 0 then redis.call('HINCRBY', key, 's', string.format('%.0f', -back)) end
return back
";

/// Gives back probes a process claimed and never handed to a call, when the
/// process shuts down.
///
/// ARGV: prefix, endpoint, the round the probes were claimed in, how many,
/// the process's `max_probes`. The round's counter counts every claim, those
/// that got no probe too, so the probes handed out are the least of it and
/// `max_probes`: the counter is set to that less the probes given back, so
/// that as many later claims of the round get one. Without this, a probe a
/// stopping process held counted until the counter lapsed, a cooldown
/// later, and with one probe a round every process refused the endpoint
/// meanwhile. Nothing is given back unless the round is the endpoint's
/// current one (its name and its opening's end in `{ns}:br:rounds` match the
/// opening in `{ns}:br`): the probes of an ended round free nothing of the
/// next. A counter that is not a whole number is left to the claim, which
/// replaces it. Returns the probes given back.
///
/// Sent once and never again, even when its reply is lost, as the lease's
/// return: sent twice, the probes would be given back twice, and the round
/// would let more than `max_probes` through.
const BREAKER_RELEASE: &str = r"
local key = ARGV[1] .. ':br'
local ep = ARGV[2]
local old = redis.call('HGET', key, ep)
if not old then return 0 end
local held = string.match(old, '^(%S+) ')
local current = redis.call('HGET', key .. ':rounds', ep)
if not held or current ~= ARGV[3] .. ' ' .. held then return 0 end
local probes = key .. ':p:' .. ep
local n = redis.pcall('GET', probes)
if type(n) ~= 'string' then return 0 end
n = whole(n)
local units, max = whole(ARGV[4]), whole(ARGV[5])
if not n or not units or not max then return 0 end
local handed = math.min(n, max)
local back = math.min(units, handed)
if n - handed + back > 0 then
  redis.call('DECRBY', probes, string.format('%.0f', n - handed + back))
end
return back
";

/// Opens an endpoint's breaker for the whole fleet.
///
/// ARGV: prefix, endpoint, ms the opening has left, its full cooldown ms
/// (the time left when absent), the opener's longest cooldown ms, the
/// longest cooldown ms of the opener's process (its breakers share the
/// namespace's endpoints; the opener's own when absent). The hash
/// `{ns}:br` maps an endpoint to `{open until (server ms)} {cooldown} {probe
/// successes}`; opening keeps the later of two cooldown ends and the longer
/// of two cooldowns, and starts a new probe round. A held cooldown that is
/// not a whole number of ms is none (see the claim), and one longer than the
/// opener's longest is cut to it: kept as the longer, `inf` would be written
/// back, and go on ending no probe round. A held `open until` that is not a
/// whole number of ms is none either (see the state): kept as the later,
/// `inf` would keep the endpoint open for good, and every process would go
/// on reading it as closed; one further off than the longest cooldown of
/// the opener's process counts for that much (see `CUT_OPENING`): not the
/// opener's own longest, which would cut a longer opening of another of the
/// process's breakers. An opening published late (queued while Redis was
/// away, or published again after Redis lost it) has less time left than
/// its cooldown: the cooldown, not the time left, is what a failed probe
/// backs off from.
///
/// The round is kept apart, in the hash `{ns}:br:rounds`, as `{round} {open
/// until}`: the value of `{ns}:br` keeps the three fields the previous
/// version's scripts parse, so processes of both versions can share a
/// namespace during a rolling deploy. A round is named by the server's time
/// when it began (one more than the last, if that is not later), so a
/// round's name is never reused while the endpoint is open, nor soon after
/// it closes. It is the current round only while its `open until` is the
/// endpoint's: a previous version's script that opens the endpoint again
/// (it knows no rounds) ends the round, and the next probe claimed begins
/// another.
const BREAKER_OPEN: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local key = ARGV[1] .. ':br'
local rounds = key .. ':rounds'
local ep = ARGV[2]
local till = now + tonumber(ARGV[3])
local cooldown = tonumber(ARGV[4] or ARGV[3])
local longest = tonumber(ARGV[5] or '') or cooldown
local process_longest = tonumber(ARGV[6] or '') or longest
local round = now
local old = redis.call('HGET', key, ep)
if old then
  -- nil for a value that does not begin with a field (empty, a space)
  local held, held_cooldown = string.match(old, '^(%S+) ?(%S*)')
  -- an end that is not a whole number of ms is none (see the state), and
  -- one further off than the longest cooldown of the opener's process is
  -- cut to it (see the state)
  local held_till = whole(held)
  if held_till then
    held_till = math.min(held_till, now + process_longest)
    if held_till > till then till = held_till end
  end
  -- a whole number of ms, or no cooldown at all (inf, nan, -1, text); 0
  -- is none too, as for the claim: it is never the longer
  held_cooldown = cooldown_ms(held_cooldown, longest)
  if held_cooldown and held_cooldown > cooldown then cooldown = held_cooldown end
end
-- a round's name is a whole number of at most fifteen digits (see the
-- claim): anything else (inf, 1e300, 0x10, twenty digits) counts for none.
-- The digits the held round begins with, not its whole field as the claim
-- reads it: the opening only needs a name past the held one, which those
-- digits bound as well ('12x' is past no round of the server's clock), and
-- a round that is not a whole number is replaced by the next claim anyway
local held_round = whole(string.match(redis.call('HGET', rounds, ep) or '', '^(%d+)'))
if held_round and held_round >= round then
  round = held_round + 1
end
redis.call('HSET', key, ep, string.format('%.0f %.0f 0', till, cooldown))
redis.call('HSET', rounds, ep, string.format('%.0f %.0f', round, till))
redis.call('DEL', key .. ':p:' .. ep, key .. ':ok:' .. ep)
return 1
";

/// Reports a probe's outcome.
///
/// ARGV: prefix, endpoint, `1` for a success, probes to close, cooldown
/// factor, max cooldown, the round the probe was claimed in, base cooldown,
/// the report's token, and how long (ms) to remember it. A failure opens the
/// endpoint again with the cooldown backed off (a new round); enough
/// successes close it for the fleet. The held cooldown is read as the claim
/// reads it: backed off from `inf`, `nan` or `-1`, the next opening would
/// last forever, end nowhere, or be over already. A held count of successes
/// that is not a whole number is taken for none: `inf` closed the endpoint
/// at the first success, `nan` never, `-5` five successes late. The outcome
/// of a probe of another round than the current one is ignored: a late
/// success of a round that a failure already ended does not close the
/// endpoint. Returns `closed`, `probing`, `open` or `stale`.
///
/// A report can arrive twice: when its reply is lost (a response timeout, a
/// connection cut after the script ran), the process sends it again at its
/// next round. A failure sent again is of a round it ended itself, and
/// ignored as stale; a success is not, since a success leaves the round
/// current. So each report carries a token, and the successes counted in a
/// round are remembered, as `{round}:{token}`, in the set `{ns}:br:ok:{ep}`:
/// a token met again is not counted again. Counted twice, one success would
/// close an endpoint that `probes_to_close` successes should, and the fleet
/// would send it all its calls on the word of fewer probes than it asked
/// for. The tokens are kept apart from `{ns}:br`, whose value the previous
/// version's scripts parse as three fields exactly; the set lives `stale` ms
/// past its last success, as long as the round can (an entry half-open for
/// longer is forgotten, and its late reports find it closed), and goes when
/// the round ends. A set of another type (written by hand) is replaced; any
/// other error of its `SADD` (`OOM`: see the claim) fails the report, which
/// has written nothing and is sent again, rather than let the replacement
/// through and forget the round's counted successes.
const BREAKER_RESULT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local key = ARGV[1] .. ':br'
local rounds = key .. ':rounds'
local ep = ARGV[2]
local old = redis.call('HGET', key, ep)
if not old then return 'closed' end
local held, cooldown, successes = string.match(old, '^(%S+) (%S+) (%S+)')
-- an end that is not a whole number of ms is no opening (see the state)
if not whole(held) then
  redis.call('HDEL', key, ep)
  redis.call('HDEL', rounds, ep)
  return 'closed'
end
-- a count of successes that is not a whole number (inf would close at the
-- first success, nan never, -5 five too late): none counted yet
successes = whole(successes) or 0
local round, at = string.match(redis.call('HGET', rounds, ep) or '', '^(%S+) (%S+)$')
if at ~= held or ARGV[7] ~= round then return 'stale' end
local longest = tonumber(ARGV[6])
-- as the claim reads it: a whole number of ms, at least 1, at most the
-- longest; anything else the base cooldown
local base = tonumber(ARGV[8] or '') or longest
cooldown = cooldown_ms(cooldown, longest) or base
local counted = key .. ':ok:' .. ep
if ARGV[3] == '1' then
  local token = ARGV[9]
  if token and token ~= '' then
    -- a set, or no key at all: a key of another type (written by hand) is
    -- replaced. Any other error is the outcome's own: a server at its
    -- memory limit refuses the SADD, the script's first write, and would
    -- let the DEL, and every write after it, through: the round's counted
    -- successes forgotten, and this one counted again.
    local added = redis.pcall('SADD', counted, round .. ':' .. token)
    if type(added) ~= 'number' then
      local err = type(added) == 'table' and added.err or ''
      if not string.find(err, 'WRONGTYPE', 1, true) then return redis.error_reply(err) end
      redis.call('DEL', counted)
      added = redis.call('SADD', counted, round .. ':' .. token)
    end
    -- this report's success is counted already: it came again
    if added == 0 then return 'probing' end
    redis.call('PEXPIRE', counted, ARGV[10])
  end
  successes = successes + 1
  if successes >= tonumber(ARGV[4]) then
    redis.call('HDEL', key, ep)
    redis.call('HDEL', rounds, ep)
    redis.call('DEL', key .. ':p:' .. ep, counted)
    return 'closed'
  end
  redis.call('HSET', key, ep, string.format('%s %.0f %.0f', held, cooldown, successes))
  return 'probing'
end
local next_round = now
-- a round is named by a whole number of at most fifteen digits (see the
-- claim), one more than which is another
local held_round = whole(round)
if held_round and held_round >= next_round then next_round = held_round + 1 end
cooldown = math.min(cooldown * tonumber(ARGV[5]), longest)
redis.call('HSET', key, ep, string.format('%.0f %.0f 0', now + cooldown, cooldown))
redis.call('HSET', rounds, ep, string.format('%.0f %.0f', next_round, now + cooldown))
redis.call('DEL', key .. ':p:' .. ep, counted)
return 'open'
";

/// Claims one of an endpoint's half-open probes for the fleet.
///
/// ARGV: prefix, endpoint, max probes, base cooldown, longest cooldown, the
/// longest cooldown of the claimer's process (the claimer's own when
/// absent). An end further off than the process's longest cooldown is cut
/// to it first (see `CUT_OPENING`): not the claimer's own, which would cut a
/// longer opening of another of the process's breakers, made since the
/// claimer last pulled the state. Returns `{1, round}` for a probe of that
/// round (its outcome is reported with it), `{0, ms}` for none (still open,
/// or every probe of this round taken), with the time until that may change
/// (the cooldown's end, the probe counter's), and `{-1}` when the endpoint
/// is closed.
/// A round lasts one cooldown: probes that never report back are given up
/// on, as the local breaker does. The round's probe counter gets that
/// cooldown as its time to live, and must: a counter without one ends no
/// round, and the fleet gets no probe (it refuses every call to the
/// endpoint) until the entry goes stale. So a held cooldown that is not a
/// whole number of ms at least 1 (`inf`, `nan`, `1e400`, `-1`, text: written
/// by hand, or by a tool sharing the namespace) is read as the claiming
/// process's base cooldown, and one longer than its longest is cut to it
/// (`PEXPIRE` takes no `inf`, nor a number past 2⁶³). The base cooldown
/// rather than the entry taken for absent: the opening is still the fleet's
/// word that the endpoint was down, which a garbled cooldown does not undo,
/// and the base cooldown is what the endpoint's first opening would have
/// waited. A counter found without a time to live (left by a process of an
/// earlier version, whose claim failed on such a cooldown after counting)
/// gets one here too, and a counter `INCR` cannot add to (text, or a key
/// of another type: every claim failed on it), or one below zero (each
/// claim got a probe until it had counted past zero), is replaced by a new
/// one. Only then: any other error of the `INCR` fails the claim, which has
/// written nothing. A server at its memory limit (`maxmemory`, under the
/// default `noeviction`) refuses a script's first write and lets every later
/// one through, so replacing the counter on its `OOM` went through, and
/// every claim made while Redis was full counted the round anew and got a
/// probe, however many the round had handed out. An
/// `open until` that is not a whole number is no opening (see the state):
/// the entry is deleted, and the endpoint reported closed. An opening
/// without a current round (a previous version's script wrote it) gets one
/// here, and so does one whose round is not a whole number (written by
/// hand, or by a tool sharing the namespace): returned, a name that is not
/// UTF-8 would come back from the process as another, which no probe's
/// outcome then matches, and one that is not a number would fail the
/// outcome script at every round of the process holding it. So does a
/// round of more than fifteen digits (a round is named by the server's
/// time in ms): past 2⁵³ one more is the same number in Lua, so every
/// round begun after it, by a failed probe or an opening, bore its name,
/// and a late success of a round a failure had ended counted in the next.
const BREAKER_CLAIM: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local key = ARGV[1] .. ':br'
local rounds = key .. ':rounds'
local ep = ARGV[2]
local old = redis.call('HGET', key, ep)
if not old then return {'-1'} end
local held, cooldown = string.match(old, '^(%S+) (%S+) %S+')
-- an end that is not a whole number of ms is no opening (see the state)
local till = whole(held)
if not till then
  redis.call('HDEL', key, ep)
  redis.call('HDEL', rounds, ep)
  return {'-1'}
end
local base, longest = tonumber(ARGV[4]), tonumber(ARGV[5])
local process_longest = tonumber(ARGV[6] or '') or longest
-- an end further off than the process's longest cooldown is cut to it (see
-- the state)
if till - now > process_longest then
  till = cut_opening(key, ep, old, held, now + process_longest)
end
if till > now then return {'0', string.format('%.0f', till - now)} end
cooldown = cooldown_ms(cooldown, longest) or base
local probes = key .. ':p:' .. ep
-- a counter INCR cannot add to (written by hand, or of another type) would
-- fail every claim: taken for none, the round's count starts again. Any
-- other error is the claim's own: a server at its memory limit refuses a
-- script's first write (the INCR) and lets every later one through, so the
-- DEL and the INCR after it would count the round anew at every claim.
local n = redis.pcall('INCR', probes)
if type(n) ~= 'number' then
  local err = type(n) == 'table' and n.err or ''
  if not (string.find(err, 'WRONGTYPE', 1, true)
      or string.find(err, 'not an integer', 1, true)
      or string.find(err, 'overflow', 1, true)) then
    return redis.error_reply(err)
  end
  redis.call('DEL', probes)
  n = redis.call('INCR', probes)
end
-- a counter below zero (written by hand) is one INCR adds to: kept, it
-- would hand out that many probes more than the round's
if n < 1 then
  redis.call('DEL', probes)
  n = redis.call('INCR', probes)
end
if n == 1 or redis.call('PTTL', probes) < 0 then
  redis.call('PEXPIRE', probes, string.format('%.0f', cooldown))
end
if n > tonumber(ARGV[3]) then return {'0', tostring(redis.call('PTTL', probes))} end
local round, at = string.match(redis.call('HGET', rounds, ep) or '', '^(%S+) (%S+)$')
-- a round's name is a whole number; anything else (written by hand, by a
-- tool) is no round, and one begins; so is one of more than fifteen
-- digits (past the year 30 000), past which one more is the same number in
-- Lua, and every round after it would bear its name
if round and not whole(round) then round = nil end
if at ~= held or not round then
  local next_round = now
  if round and tonumber(round) >= next_round then next_round = tonumber(round) + 1 end
  round = string.format('%.0f', next_round)
  redis.call('HSET', rounds, ep, round .. ' ' .. held)
end
return {'1', round}
";

/// Lists the endpoints open or half-open fleet-wide.
///
/// ARGV: prefix, stale ms, the longest cooldown of the process's breakers.
/// Returns `{endpoint, ms until the cooldown ends (negative once it has:
/// half-open), ...}`. An endpoint whose cooldown ended more than `stale` ago
/// with no probe closing it (nobody calls it any more) is forgotten, and so
/// is the round of an endpoint no longer listed. An end further off than
/// the longest cooldown is cut to it (see `CUT_OPENING`).
///
/// So is an endpoint whose `open until` is not a whole number of ms of at
/// most fifteen digits (past the year 30 000): written by hand, or by a tool
/// sharing the namespace, an end such as `inf` never goes stale, and the
/// hash has no time to live; listed, it comes back as a time left that no
/// process reads, so every process took the endpoint for closed, while each
/// later opening kept the garbled end as the later one: the fleet's breaker
/// of that endpoint was off for good. Forgotten, it is an opening Redis
/// lost: each process whose own breaker holds the endpoint open publishes
/// its opening again.
const BREAKER_STATE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local key = ARGV[1] .. ':br'
local stale = tonumber(ARGV[2])
local longest = tonumber(ARGV[3] or '')
local all = redis.call('HGETALL', key)
local out, live = {}, {}
for i = 1, #all, 2 do
  local held = string.match(all[i + 1], '^(%d+) ')
  local till = whole(held)
  if till and longest and till - now > longest then
    till = cut_opening(key, all[i], all[i + 1], held, now + longest)
  end
  if (not till) or now - till > stale then
    redis.call('HDEL', key, all[i])
  else
    live[all[i]] = true
    out[#out + 1] = all[i]
    out[#out + 1] = string.format('%.0f', till - now)
  end
end
-- rounds of endpoints closed or forgotten (by either version's scripts)
for _, ep in ipairs(redis.call('HKEYS', key .. ':rounds')) do
  if not live[ep] then redis.call('HDEL', key .. ':rounds', ep) end
end
return out
";

/// Holds an endpoint for the fleet: a server asked a process to send it
/// nothing for a while (its Retry-After).
///
/// ARGV: prefix, endpoint, ms the hold has left. The hash `{ns}:br:holds`
/// maps an endpoint to the end of its hold on the server's clock (a whole
/// number of ms, as an opening's end): a later end than the one held wins, an
/// earlier one changes nothing. The hash's time to live is raised to the
/// hold's when it is shorter, so it ends with the last hold in it: nothing is
/// left behind once every hold has run out, whether or not a process reads
/// it again. A key of another type (written by hand, or by a tool sharing
/// the namespace) is left alone, and the hold is not shared (`0`): the
/// process that was told keeps it, and nothing of the round fails.
///
/// Returns 1 if the hold was written, 0 if not.
const BREAKER_HOLD: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local key = ARGV[1] .. ':br:holds'
local ep = ARGV[2]
local left = whole(ARGV[3])
if not left or left < 1 then return 0 end
local found = redis.call('TYPE', key)['ok']
if found ~= 'none' and found ~= 'hash' then return 0 end
local till = now + left
local held = whole(redis.call('HGET', key, ep))
if held and held >= till then return 0 end
redis.call('HSET', key, ep, string.format('%.0f', till))
if redis.call('PTTL', key) < left then redis.call('PEXPIRE', key, left) end
return 1
";

/// Lists the endpoints the fleet holds (see `BREAKER_HOLD`).
///
/// ARGV: prefix, the longest hold a process takes. Returns `{endpoint, ms
/// the hold has left, ...}`, each time left cut to the longest. A hold that
/// has ended, or whose end is not a whole number of ms (garbled), is
/// deleted. A key of another type lists nothing.
const BREAKER_HOLDS: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local key = ARGV[1] .. ':br:holds'
local longest = tonumber(ARGV[2])
if redis.call('TYPE', key)['ok'] ~= 'hash' then return {} end
local all = redis.call('HGETALL', key)
local out = {}
for i = 1, #all, 2 do
  local till = whole(all[i + 1])
  if (not till) or till <= now then
    redis.call('HDEL', key, all[i])
  else
    out[#out + 1] = all[i]
    out[#out + 1] = string.format('%.0f', math.min(till - now, longest))
  end
end
return out
";
