//! Evidence sync: what goes up to Redis, what comes down, and what waits.
//!
//! Pushes are state, not deltas: each carries a writer's *cumulative* evidence
//! for a context with the writer's sequence number, and the server keeps the
//! newer version (see the push script). So a push that is retried, replayed
//! or duplicated never counts twice, and a version held back while Redis was
//! away is made whole by the next one.

use std::collections::{HashMap, HashSet};

use bayesretry_store::{Snapshot, SnapshotEntry, WriterId};
use redis::aio::MultiplexedConnection;

use crate::codec;
use crate::error::Error;
use crate::scripts::Scripts;

/// A (writer, context field) pair: one entry of the fleet's evidence.
type Key = (WriterId, String);

/// The most pull calls one round makes, so a round ends even if writers keep
/// the log moving faster than it is read.
const MAX_PULLS_PER_ROUND: usize = 1_000;
/// The most log entries one pull call reads.
const PULL_BATCH: usize = 5_000;

/// How many entries the sync may remember beyond twice what the store holds
/// before it lets go of those the store no longer holds (see
/// [`EvidenceSync::prune`]): the pruning pass is then paid for by the growth
/// that called for it.
const PRUNE_SLACK: usize = 1_024;

/// The most a sequence number counts for in a writer's sum, here and in the
/// push script: sums stay exact in a Lua number and a Redis integer, for any
/// 2²¹ entries of a writer, whatever their sequence numbers.
const SEQ_COUNTED_UP_TO: u64 = 1 << 32;

/// What sequence number `seq` counts for in a writer's sum.
fn counted(seq: u64) -> u64 {
    seq.min(SEQ_COUNTED_UP_TO)
}

/// What a round did to the evidence.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Progress {
    /// Versions pushed and acknowledged.
    pub(crate) pushed: u64,
    /// Of those, the ones that changed what Redis held.
    pub(crate) applied: u64,
    /// Versions pulled that were new here.
    pub(crate) pulled: u64,
    /// Whether Redis was found to have lost the fleet's data.
    pub(crate) resynced: bool,
    /// Whether Redis was found to have lost some of the fleet's entries, the
    /// rest of its data (and its epoch) intact: entries of a writer this
    /// process writes for, which are to be pushed again (its hash expired
    /// while the process was cut off, a failover lost its last writes), or
    /// changes the process had already read past (a failover).
    pub(crate) lost: bool,
}

/// The sync state of one fleet's evidence, owned by its sync task.
#[derive(Debug)]
pub(crate) struct EvidenceSync {
    /// The newest version of each entry known to be in Redis (pushed and
    /// acknowledged, or pulled).
    known: HashMap<Key, u64>,
    /// Versions waiting to be pushed, at most `max_buffered`; a newer version
    /// of an entry replaces the older (it carries everything the older did).
    buffer: HashMap<Key, SnapshotEntry>,
    /// Versions that found the buffer full, by entry: left in the store, and
    /// taken by a later collect once the buffer has room. Each version is
    /// counted once, however many rounds it waits.
    deferred: HashMap<Key, u64>,
    max_buffered: usize,
    batch: usize,
    /// The log version read up to.
    since: u64,
    /// The incarnation of Redis's data last seen.
    epoch: Option<String>,
    /// Writers whose entries came from Redis before this process pushed any
    /// of theirs: not this process's own.
    pulled_writers: HashSet<WriterId>,
    /// Per writer, the sum of the sequence numbers in `known`, each counted
    /// up to [`SEQ_COUNTED_UP_TO`]. Redis keeps
    /// the same sum per writer; when it holds less for an authored writer
    /// than this before a push writes (its hash expired while this process
    /// was cut off, a
    /// failover lost its last writes), its entries are forgotten from
    /// `known`, to be pushed again.
    known_sums: HashMap<WriterId, u64>,
    /// Entries of the writers this process pushes for that its store let go
    /// of (see [`prune`](EvidenceSync::prune)), with the version Redis holds:
    /// the next push tells Redis to forget them too, and takes them off the
    /// writer's sum once it has.
    forget: HashMap<Key, u64>,
    /// The writer the replica records its own outcomes under, once a
    /// snapshot has named it (`Snapshot::taken_by`): always authored, never
    /// pulled, even when Redis still holds its entries from before a restart.
    own: Option<WriterId>,
    /// Whether the next collect must look at every entry, other writers'
    /// too: set when Redis lost its data, so that everything this process
    /// knows is pushed again.
    full: bool,
    /// How many entries the last pass of [`prune`](EvidenceSync::prune)
    /// kept: the next waits until twice that many are remembered.
    kept: usize,
    /// Makes every epoch offered unique: offered to a Redis that lost its
    /// data, an epoch seen before would hide the loss.
    offers: u64,
    prefix: String,
    ttl_ms: u64,
}

impl EvidenceSync {
    pub(crate) fn new(
        prefix: String,
        ttl_ms: u64,
        max_buffered: usize,
        batch: usize,
    ) -> EvidenceSync {
        EvidenceSync {
            known: HashMap::new(),
            buffer: HashMap::new(),
            deferred: HashMap::new(),
            max_buffered,
            batch,
            since: 0,
            epoch: None,
            pulled_writers: HashSet::new(),
            known_sums: HashMap::new(),
            forget: HashMap::new(),
            own: None,
            full: false,
            kept: 0,
            offers: 0,
            prefix,
            ttl_ms,
        }
    }

    /// How many versions wait to be pushed.
    pub(crate) fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// Takes every version in `snapshot` newer than what Redis holds into the
    /// buffer; returns how many versions found it full, counting each version
    /// once. Such a version is left in the store, not taken for sent: a later
    /// collect, after a push has emptied the buffer, takes it (or a newer
    /// version of its entry, which carries it). Nothing the store holds is
    /// kept from Redis for good, however many contexts change in one round.
    ///
    /// The writers of new versions that never came from Redis are added to
    /// `authored`: this process writes for them, and renews their time to
    /// live. So is the writer that took the snapshot, the replica's own,
    /// whatever Redis held of it before: a process started again under a
    /// fixed id reads its previous life's entries back, and must still push
    /// its new ones.
    pub(crate) fn collect(&mut self, snapshot: &Snapshot, authored: &mut HashSet<WriterId>) -> u64 {
        if let Some(own) = snapshot.taken_by() {
            self.own = Some(own);
            self.pulled_writers.remove(&own);
            authored.insert(own);
        }
        let mut deferred = 0;
        let full = core::mem::take(&mut self.full);
        for entry in snapshot.entries() {
            let writer = entry.writer();
            if !full && self.pulled_writers.contains(&writer) && !authored.contains(&writer) {
                // another writer's evidence, merged from Redis: already there
                continue;
            }
            let key = (writer, codec::field(entry));
            if let Some(seq) = self.forget.remove(&key) {
                // written again before Redis forgot it: Redis holds that
                // version still, which the new one replaces
                self.known.insert(key.clone(), seq);
            }
            if self.known.get(&key).is_some_and(|&seq| seq >= entry.seq()) {
                continue;
            }
            if !self.pulled_writers.contains(&entry.writer()) {
                authored.insert(entry.writer());
            }
            if let Some(held) = self.buffer.get_mut(&key) {
                if held.seq() < entry.seq() {
                    *held = entry.clone();
                }
                continue;
            }
            if self.buffer.len() < self.max_buffered {
                self.deferred.remove(&key);
                self.buffer.insert(key, entry.clone());
            } else if self.deferred.get(&key).is_none_or(|&seq| seq < entry.seq()) {
                self.deferred.insert(key, entry.seq());
                deferred += 1;
            }
        }
        self.prune(snapshot, authored);
        deferred
    }

    /// Lets go of what the sync remembers of entries `snapshot` no longer
    /// holds: the store forgot them (evidence 64 half-lives old), or never
    /// took them in (a pulled version it had no use for). Without this, a
    /// long-lived process would remember an entry per context of every writer
    /// the fleet ever had — processes restarted under new random ids come and
    /// go — long after Redis let their entries expire.
    ///
    /// Done only when the sync remembers more than twice what the store holds
    /// and twice what the last pass kept (plus [`PRUNE_SLACK`]), so that its
    /// cost, a pass over both, is spread over the rounds that made the
    /// growth. Letting go is safe either way:
    ///
    /// - an entry the store holds again later (a newer version) is new to the
    ///   sync and pushed or merged as such;
    /// - the entries of a writer this process writes for (its own, and any
    ///   other it renews while the store holds some of it) are let go of in
    ///   Redis too: Redis would keep them as long as their time to live is
    ///   renewed, that is as long as the process lives, and a long-lived
    ///   process writing to ever new contexts would grow its hash, the
    ///   change log and every newcomer's first pull without bound. They wait
    ///   in `forget` for the next push, which deletes them from Redis if it
    ///   still holds those versions; the writer's sum counts them until it
    ///   has. One written again meanwhile is taken back, as Redis holds it,
    ///   so the sum stays the one Redis keeps, and no loss is read into it;
    /// - a writer's sum is left as it was: it still counts what Redis was
    ///   given, so a loss there is seen as before;
    /// - a writer the store holds nothing of (its entries under whatever
    ///   name the store keeps them, a long endpoint clipped) is no longer
    ///   taken as pulled, nor, unless it is the replica's own, as authored:
    ///   there is nothing of it to push, nor a time to live worth renewing.
    ///   A writer the store still holds some of stays as it was: a pulled
    ///   one is never pushed as this process's own.
    fn prune(&mut self, snapshot: &Snapshot, authored: &mut HashSet<WriterId>) {
        let remembered = self.known.len().max(self.deferred.len());
        let base = snapshot.len().max(self.kept);
        if remembered <= base.saturating_mul(2).saturating_add(PRUNE_SLACK) {
            return;
        }
        let held: HashSet<Key> = snapshot
            .entries()
            .iter()
            .map(|entry| (entry.writer(), codec::field(entry)))
            .collect();
        let EvidenceSync {
            known,
            known_sums,
            forget,
            buffer,
            deferred,
            pulled_writers,
            own,
            kept,
            ..
        } = self;
        let live: HashSet<WriterId> = snapshot
            .entries()
            .iter()
            .map(SnapshotEntry::writer)
            .chain(buffer.keys().map(|(writer, _)| *writer))
            .collect();
        pulled_writers.retain(|writer| live.contains(writer));
        authored.retain(|writer| *own == Some(*writer) || live.contains(writer));
        known.retain(|key, seq| {
            if held.contains(key) {
                return true;
            }
            if authored.contains(&key.0) {
                forget.insert(key.clone(), *seq);
            }
            false
        });
        deferred.retain(|key, _| held.contains(key));
        known_sums.retain(|writer, _| authored.contains(writer) || live.contains(writer));
        *kept = known.len().max(deferred.len());
    }

    /// Pushes the buffer, a batch per script call, heartbeat included (one
    /// call even when the buffer is empty). Stops at the first error, keeping
    /// what was not acknowledged.
    pub(crate) async fn push(
        &mut self,
        conn: &mut MultiplexedConnection,
        scripts: &Scripts,
        authored: &HashSet<WriterId>,
    ) -> Result<Progress, Error> {
        let mut progress = Progress::default();
        if self.buffer.is_empty() && self.forget.is_empty() {
            let (resynced, lost, _) = self.push_batch(conn, scripts, authored, &[], &[]).await?;
            progress.resynced |= resynced;
            progress.lost |= lost;
            return Ok(progress);
        }
        // Taken out, not copied; whatever is not acknowledged goes back.
        let mut pending: Vec<(Key, SnapshotEntry)> = self.buffer.drain().collect();
        // grouped by writer, so that each batch names few writers
        pending.sort_unstable_by_key(|((writer, _), _)| *writer);
        let mut sent = 0;
        let mut failure = None;
        for chunk in pending.chunks(self.batch) {
            match self.push_batch(conn, scripts, authored, chunk, &[]).await {
                Ok((resynced, lost, applied)) => {
                    progress.resynced |= resynced;
                    progress.lost |= lost;
                    progress.applied += applied;
                    sent += chunk.len();
                }
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        let unsent = pending.split_off(sent.min(pending.len()));
        for (key, entry) in pending {
            self.note_known(key, entry.seq());
            progress.pushed += 1;
        }
        self.buffer.extend(unsent);
        if let Some(e) = failure {
            return Err(e);
        }
        self.push_forgets(conn, scripts, authored, &mut progress)
            .await?;
        Ok(progress)
    }

    /// Tells Redis to forget the entries in `forget`, a batch per script
    /// call, and takes each off its writer's sum once Redis has (or never
    /// held that version: then its sum already lacked it). Stops at the
    /// first error, keeping what was not acknowledged.
    async fn push_forgets(
        &mut self,
        conn: &mut MultiplexedConnection,
        scripts: &Scripts,
        authored: &HashSet<WriterId>,
        progress: &mut Progress,
    ) -> Result<(), Error> {
        if self.forget.is_empty() {
            return Ok(());
        }
        let pending: Vec<(Key, u64)> = self.forget.drain().collect();
        let mut done = 0;
        let mut failure = None;
        for chunk in pending.chunks(self.batch) {
            match self.push_batch(conn, scripts, authored, &[], chunk).await {
                Ok((resynced, lost, _)) => {
                    progress.resynced |= resynced;
                    progress.lost |= lost;
                    for ((writer, _), seq) in chunk {
                        if let Some(sum) = self.known_sums.get_mut(writer) {
                            *sum = sum.saturating_sub(counted(*seq));
                        }
                    }
                    done += chunk.len();
                }
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        self.forget.extend(pending.into_iter().skip(done));
        failure.map_or(Ok(()), Err)
    }

    /// One push call, of `entries` and of entries to forget: whether it
    /// found Redis's data lost (and reset for a full resync), whether it
    /// found an authored writer's entries lost (and forgot them, to be
    /// pushed again), and how many entries changed what Redis held.
    async fn push_batch(
        &mut self,
        conn: &mut MultiplexedConnection,
        scripts: &Scripts,
        authored: &HashSet<WriterId>,
        entries: &[(Key, SnapshotEntry)],
        forgets: &[(Key, u64)],
    ) -> Result<(bool, bool, u64), Error> {
        let writers: Vec<WriterId> = authored.iter().copied().collect();
        let mut invocation = scripts.push.prepare_invoke();
        invocation
            .arg(&self.prefix)
            .arg(self.ttl_ms)
            .arg(self.candidate())
            .arg(writers.len());
        for writer in &writers {
            invocation
                .arg(codec::writer(*writer))
                .arg(self.known_sums.get(writer).copied().unwrap_or(0));
        }
        invocation.arg(forgets.len());
        for ((writer, field), seq) in forgets {
            invocation.arg(codec::writer(*writer)).arg(field).arg(*seq);
        }
        let mut hex: Option<(WriterId, String)> = None;
        for ((writer, field), entry) in entries {
            // batches are mostly one writer's: print its id once
            if hex.as_ref().is_none_or(|(w, _)| w != writer) {
                hex = Some((*writer, codec::writer(*writer)));
            }
            if let Some((_, name)) = &hex {
                invocation.arg(name);
            }
            invocation.arg(field);
            for part in codec::value(entry) {
                invocation.arg(part);
            }
        }
        // bytes, not text, for the epoch: see the pull
        let reply: Vec<Vec<u8>> = invocation.invoke_async(conn).await?;
        let reply: Vec<String> = reply.iter().map(|part| codec::text(part)).collect();
        let [epoch, applied, sums @ ..] = reply.as_slice() else {
            return Err(Error::Reply(format!("push returned {reply:?}")));
        };
        let applied = applied
            .parse()
            .map_err(|_| Error::Reply(format!("push returned {applied:?} as a count")))?;
        if sums.len() != writers.len() {
            return Err(Error::Reply(format!("push returned {reply:?}")));
        }
        let mut held = Vec::with_capacity(sums.len());
        for sum in sums {
            let sum: u64 = sum
                .parse()
                .map_err(|_| Error::Reply(format!("push returned {sum:?} as a sum")))?;
            held.push(sum);
        }
        if self.see_epoch(epoch) {
            // everything is pushed again anyway
            return Ok((true, false, applied));
        }
        let mut lost = false;
        for (writer, held) in writers.into_iter().zip(held) {
            if self
                .known_sums
                .get(&writer)
                .is_some_and(|&known| known > held)
            {
                // Redis lost some of this writer's entries: forget them all,
                // and the next collect takes every one again
                self.known.retain(|(of, _), _| *of != writer);
                self.known_sums.remove(&writer);
                lost = true;
            }
        }
        Ok((false, lost, applied))
    }

    /// Notes that Redis holds version `seq` of the entry `key` (or a newer).
    fn note_known(&mut self, key: Key, seq: u64) {
        let writer = key.0;
        let known = self.known.entry(key).or_insert(0);
        if *known < seq {
            let sum = self.known_sums.entry(writer).or_insert(0);
            *sum = sum.saturating_add(counted(seq) - counted(*known));
            *known = seq;
        }
    }

    /// A new epoch to offer: random, and never offered before by this sync.
    fn candidate(&mut self) -> String {
        use core::hash::BuildHasher;
        self.offers += 1;
        let draw = std::hash::RandomState::new().hash_one(self.offers);
        format!("{draw:016x}-{}", self.offers)
    }

    /// Notes the epoch Redis reports; on a change, forgets what Redis was
    /// known to hold, so everything is pushed and pulled again.
    fn see_epoch(&mut self, epoch: &str) -> bool {
        match &self.epoch {
            Some(seen) if seen == epoch => false,
            Some(_) => {
                self.epoch = Some(epoch.to_owned());
                self.known.clear();
                self.known_sums.clear();
                self.forget.clear();
                self.since = 0;
                self.full = true;
                self.kept = 0;
                true
            }
            None => {
                self.epoch = Some(epoch.to_owned());
                false
            }
        }
    }

    /// Reads every entry changed since the last pull, and the snapshot of
    /// those newer than what this process holds (to be merged).
    pub(crate) async fn pull(
        &mut self,
        conn: &mut MultiplexedConnection,
        scripts: &Scripts,
        now_ms: u64,
    ) -> Result<(Snapshot, Progress), Error> {
        let mut progress = Progress::default();
        let mut entries = Vec::new();
        for _ in 0..MAX_PULLS_PER_ROUND {
            // bytes, not text: a value that is not UTF-8 (written by hand or
            // by a tool sharing the namespace) would fail the whole reply,
            // and with it every pull of every process, until it was written
            // again; read this way it fails its own entry only
            let reply: Vec<Vec<u8>> = scripts
                .pull
                .prepare_invoke()
                .arg(&self.prefix)
                .arg(self.since)
                .arg(PULL_BATCH)
                .invoke_async(conn)
                .await?;
            let [epoch, version, scanned, last, rest @ ..] = reply.as_slice() else {
                return Err(Error::Reply(String::from("pull returned too few values")));
            };
            let (version, scanned, last) = (
                codec::text(version),
                codec::text(scanned),
                codec::text(last),
            );
            if !epoch.is_empty() && self.see_epoch(&codec::text(epoch)) {
                progress.resynced = true;
                entries.clear();
                continue;
            }
            let number = |s: &str| {
                s.parse::<u64>()
                    .map_err(|_| Error::Reply(format!("pull returned {s:?} for a number")))
            };
            let scanned = number(&scanned)?;
            if number(&version)? < self.since {
                // The change log went back past what this process read: a
                // failover lost the last writes. Read it again from the
                // start (what is already here is skipped); the writers of
                // the lost entries push them again, as their pushes find
                // Redis holding less of theirs than they know they pushed.
                self.since = 0;
                progress.lost = true;
                continue;
            }
            for pair in rest.chunks_exact(2) {
                let [member, value] = pair else { continue };
                let Some(entry) = codec::decode(member, value) else {
                    continue;
                };
                let key = (entry.writer(), codec::field(&entry));
                let writer = entry.writer();
                if self
                    .known
                    .get(&key)
                    .is_none_or(|&known| known < entry.seq())
                {
                    if self.own != Some(writer) {
                        self.pulled_writers.insert(writer);
                    }
                    self.note_known(key, entry.seq());
                    entries.push(entry);
                    progress.pulled += 1;
                }
            }
            if scanned < PULL_BATCH as u64 {
                self.since = number(&version)?;
                break;
            }
            self.since = number(&last)?;
        }
        Ok((Snapshot::from_entries(now_ms, entries), progress))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bayesretry_store::{Evidence, MemoryStore};

    fn entry(writer: u64, endpoint: &str, seq: u64) -> SnapshotEntry {
        let evidence = Evidence::new(1.0, 2.0).expect("finite counts");
        SnapshotEntry::new(
            endpoint,
            1,
            "http-503",
            WriterId::new(writer),
            seq,
            evidence,
            1_000,
        )
        .expect("a valid entry")
    }

    fn sync() -> EvidenceSync {
        EvidenceSync::new(String::from("test"), 60_000, 10_000, 100)
    }

    /// Notes `entry` as pulled from Redis, as `pull` does.
    fn pulled(sync: &mut EvidenceSync, entry: &SnapshotEntry) {
        sync.pulled_writers.insert(entry.writer());
        sync.note_known((entry.writer(), codec::field(entry)), entry.seq());
    }

    /// 1 100 entries of 110 writers, ten endpoints each, pulled from Redis
    /// and gone from the store since: writers 1000..1110.
    fn pull_departed_writers(sync: &mut EvidenceSync) {
        for writer in 1_000..1_110 {
            for endpoint in 0..10 {
                pulled(sync, &entry(writer, &format!("api-{endpoint}"), 3));
            }
        }
    }

    #[test]
    fn writers_the_store_no_longer_holds_are_let_go() {
        let mut sync = sync();
        pull_departed_writers(&mut sync);
        // one pulled writer the store still holds, and the replica's own
        let kept: Vec<SnapshotEntry> = (0..10).map(|e| entry(7, &format!("api-{e}"), 4)).collect();
        for held in &kept {
            pulled(&mut sync, held);
        }
        let mut entries = kept.clone();
        entries.extend((0..5).map(|e| entry(1, &format!("own-{e}"), 2)));
        let mut authored = HashSet::from([WriterId::new(1), WriterId::new(1_003)]);

        sync.collect(&Snapshot::from_entries(2_000, entries), &mut authored);

        assert_eq!(
            sync.known.len(),
            10,
            "only writer 7's entries are remembered"
        );
        assert!(
            sync.known
                .keys()
                .all(|(writer, _)| *writer == WriterId::new(7))
        );
        assert_eq!(sync.pulled_writers, HashSet::from([WriterId::new(7)]));
        assert_eq!(sync.buffered(), 5, "the own entries wait to be pushed");
        assert_eq!(
            authored,
            HashSet::from([WriterId::new(1)]),
            "1003 has nothing left to push"
        );
        let summed: HashSet<WriterId> = sync.known_sums.keys().copied().collect();
        assert_eq!(summed, HashSet::from([WriterId::new(7)]));
    }

    #[test]
    fn nothing_is_let_go_until_what_is_remembered_outgrows_the_store() {
        let mut sync = sync();
        for writer in 1_000..1_100 {
            pulled(&mut sync, &entry(writer, "api", 3));
        }
        let mut authored = HashSet::new();
        sync.collect(&Snapshot::from_entries(2_000, Vec::new()), &mut authored);
        assert_eq!(
            sync.known.len(),
            100,
            "within the slack: no pass over the maps"
        );
        assert_eq!(sync.pulled_writers.len(), 100);
    }

    #[test]
    fn an_authored_writer_s_let_go_entries_wait_to_be_forgotten_in_redis() {
        let mut sync = sync();
        pull_departed_writers(&mut sync);
        let writer = WriterId::new(1);
        let old = entry(1, "forgotten", 5);
        let live = entry(1, "live", 3);
        sync.note_known((writer, codec::field(&old)), old.seq());
        sync.note_known((writer, codec::field(&live)), live.seq());
        let mut authored = HashSet::from([writer]);

        sync.collect(
            &Snapshot::from_entries(2_000, vec![live.clone()]),
            &mut authored,
        );

        assert_eq!(
            sync.known.len(),
            1,
            "the departed writers are let go, and so is the writer's forgotten entry"
        );
        assert_eq!(
            sync.forget,
            HashMap::from([((writer, codec::field(&old)), 5)]),
            "to be forgotten in Redis too, at the next push"
        );
        // Redis still holds the forgotten entry until then: a sum of 3 here
        // would hide the loss of the live one's version behind it
        assert_eq!(sync.known_sums.get(&writer), Some(&8));
        assert_eq!(sync.buffered(), 0, "the live entry is already in Redis");
    }

    /// What a push that Redis acknowledged notes: every buffered version.
    fn acknowledge(sync: &mut EvidenceSync) {
        let pushed: Vec<(Key, SnapshotEntry)> = sync.buffer.drain().collect();
        for (key, entry) in pushed {
            sync.note_known(key, entry.seq());
        }
    }

    #[test]
    fn a_writer_whose_entry_the_store_holds_under_a_clipped_name_stays_another_s() {
        let mut sync = sync();
        pull_departed_writers(&mut sync);
        // writer 9's entry for an endpoint longer than the store keeps (256
        // bytes by default): pulled under its full name, held clipped
        let long = entry(9, &"e".repeat(300), 3);
        pulled(&mut sync, &long);
        let store = MemoryStore::new();
        store.merge_at(&Snapshot::from_entries(1_000, vec![long]), 2_000);
        let mut authored = HashSet::new();

        sync.collect(&store.snapshot(2_000), &mut authored);
        sync.collect(&store.snapshot(2_000), &mut authored);

        assert!(
            !authored.contains(&WriterId::new(9)),
            "writer 9 is not this process's to renew"
        );
        assert_eq!(
            sync.buffered(),
            0,
            "writer 9's entry is not pushed from here"
        );
    }

    #[test]
    fn a_context_of_its_own_written_again_after_the_store_forgot_it_is_no_loss() {
        let mut sync = sync();
        let own = WriterId::new(1);
        let idle = entry(1, "idle", 5);
        let busy = entry(1, "busy", 6);
        let mut authored = HashSet::from([own]);
        sync.collect(
            &Snapshot::from_entries(2_000, vec![idle, busy.clone()]),
            &mut authored,
        );
        acknowledge(&mut sync);
        // Redis holds seq 5 and 6 of writer 1: its sum is 11
        pull_departed_writers(&mut sync);

        // the store forgets "idle" (untouched for 64 half-lives) ...
        sync.collect(
            &Snapshot::from_entries(3_000, vec![busy.clone()]),
            &mut authored,
        );
        // ... and a call writes it again, at seq 7, which replaces 5 in Redis
        sync.collect(
            &Snapshot::from_entries(4_000, vec![busy, entry(1, "idle", 7)]),
            &mut authored,
        );
        acknowledge(&mut sync);

        assert_eq!(
            sync.known_sums.get(&own),
            Some(&13),
            "the sum Redis holds of writer 1: more would read as a loss and push all again"
        );
    }

    #[test]
    fn what_the_store_let_go_of_waits_to_be_forgotten_and_is_not_passed_over_again() {
        let mut sync = sync();
        let own: Vec<SnapshotEntry> = (0..1_200)
            .map(|e| entry(1, &format!("api-{e}"), 2))
            .collect();
        let mut authored = HashSet::from([WriterId::new(1)]);
        sync.collect(&Snapshot::from_entries(2_000, own.clone()), &mut authored);
        acknowledge(&mut sync);
        // the store forgets all but one of them; Redis keeps them all, for now
        let left = vec![own[0].clone()];
        pull_departed_writers(&mut sync);
        sync.collect(&Snapshot::from_entries(3_000, left.clone()), &mut authored);
        assert_eq!(sync.known.len(), 1, "the departed and the forgotten let go");
        assert_eq!(sync.forget.len(), 1_199, "to be forgotten in Redis");
        assert_eq!(sync.known_sums.get(&WriterId::new(1)), Some(&2_400));

        pulled(&mut sync, &entry(2_000, "api", 3));
        sync.collect(&Snapshot::from_entries(4_000, left), &mut authored);
        assert_eq!(
            sync.known.len(),
            2,
            "one more entry than the pass kept: no second pass"
        );
    }
}
