//! [`AuditLog`]: the hash-chained log in memory, and its [`Entry`].

use crate::canonical;
use crate::chain::Checker;
use crate::error::Broken;
use crate::hash::Hash;
use crate::record::{Event, Record};
use crate::seal::Seal;

/// One entry of a log: its position, its record and its hash.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    seq: u64,
    record: Record,
    hash: Hash,
}

impl Entry {
    /// An entry as stored elsewhere (a database, another format), to be put in
    /// an [`AuditLog`] with [`AuditLog::from_entries`] and verified. Nothing is
    /// checked here.
    pub const fn new(seq: u64, record: Record, hash: Hash) -> Entry {
        Entry { seq, record, hash }
    }

    /// The entry's position in the log, 0-based, as it was written.
    pub const fn seq(&self) -> u64 {
        self.seq
    }

    /// What the entry records.
    pub const fn record(&self) -> &Record {
        &self.record
    }

    /// The hash stored with the entry: SHA-256 over the previous entry's hash and
    /// this entry's canonical form.
    pub const fn hash(&self) -> Hash {
        self.hash
    }

    /// The entry's parts.
    pub fn into_parts(self) -> (u64, Record, Hash) {
        (self.seq, self.record, self.hash)
    }
}

/// An append-only, SHA-256 hash-chained log of records, in memory.
///
/// Each entry's hash covers the previous entry's hash and the entry's canonical
/// form (`docs/SPEC.md`, "Audit log"), so changing, inserting, deleting or moving
/// any entry breaks every hash after it. [`verify`](AuditLog::verify) finds the
/// first broken entry; [`seal`](AuditLog::seal) gives the head to keep elsewhere,
/// which [`verify_against`](AuditLog::verify_against) also checks for entries cut
/// from the end or a chain rewritten from some point on.
///
/// For a log on disk, use a [`JsonlWriter`](crate::JsonlWriter) and the streaming
/// [`Verifier`](crate::Verifier); to log a policy's decisions, an
/// [`AuditTrail`](crate::AuditTrail).
///
/// ```
/// use bayesretry_audit::{AuditLog, Break, Event, Record};
///
/// let mut log = AuditLog::new();
/// for count in 1..=3 {
///     log.append(Record::new(1_000 * count, Event::Dropped { count }));
/// }
/// let seal = log.seal();
/// assert_eq!(seal.entries(), 3);
/// assert_eq!(log.verify_against(&seal), Ok(()));
///
/// // cut the last entry: the chain alone still holds, the seal does not
/// let mut entries = log.into_entries();
/// entries.pop();
/// let cut = AuditLog::from_entries(entries);
/// assert_eq!(cut.verify(), Ok(()));
/// let broken = cut.verify_against(&seal).unwrap_err();
/// assert_eq!(broken.index(), 2);
/// assert!(matches!(broken.why(), Break::Truncated { entries: 2, sealed: 3 }));
/// ```
#[derive(Clone, Debug, Default)]
pub struct AuditLog {
    entries: Vec<Entry>,
    /// Reused for each entry's canonical form.
    scratch: Vec<u8>,
}

impl AuditLog {
    /// An empty log.
    pub const fn new() -> AuditLog {
        AuditLog {
            entries: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// A log of entries stored elsewhere, taken as they are: call
    /// [`verify`](AuditLog::verify) (or [`verify_against`](AuditLog::verify_against))
    /// before trusting them. [`append`](AuditLog::append) continues from the last
    /// entry's stored hash.
    pub const fn from_entries(entries: Vec<Entry>) -> AuditLog {
        AuditLog {
            entries,
            scratch: Vec::new(),
        }
    }

    /// Appends `record` as the next entry and returns its hash.
    pub fn append(&mut self, record: Record) -> Hash {
        let seq = self.entries.len() as u64;
        let prev = self.head();
        self.scratch.clear();
        canonical::write(seq, &record.view(), &mut self.scratch);
        let hash = Hash::chain(&prev, &self.scratch);
        self.entries.push(Entry { seq, record, hash });
        hash
    }

    /// The entries, oldest first.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entries, given up.
    pub fn into_entries(self) -> Vec<Entry> {
        self.entries
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the log has no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The hash of the last entry ([`Hash::GENESIS`] when empty), as stored.
    pub fn head(&self) -> Hash {
        self.entries.last().map_or(Hash::GENESIS, Entry::hash)
    }

    /// The seal of the log as it is now: its length and head hash, to keep
    /// elsewhere. It is taken from the stored hashes, without verifying them.
    pub fn seal(&self) -> Seal {
        Seal::new(self.entries.len() as u64, self.head())
    }

    /// Recomputes the chain: `Ok` if every entry is in its place with the hash its
    /// content and the previous hash give, otherwise the first that is not, and
    /// why.
    ///
    /// Entries cut from the end, or a chain rewritten and rehashed from some
    /// entry on, verify: only a [`Seal`] kept elsewhere shows those
    /// ([`verify_against`](AuditLog::verify_against)).
    pub fn verify(&self) -> Result<(), Broken> {
        self.check(None).map(drop)
    }

    /// [`verify`](AuditLog::verify), and checks that the log still holds the
    /// entries `seal` commits to, unchanged. Entries appended after the seal are
    /// verified as part of the chain.
    pub fn verify_against(&self, seal: &Seal) -> Result<(), Broken> {
        self.check(Some(*seal)).map(drop)
    }

    fn check(&self, seal: Option<Seal>) -> Result<Seal, Broken> {
        let mut checker = Checker::new(seal);
        let mut scratch = Vec::with_capacity(256);
        for entry in &self.entries {
            scratch.clear();
            canonical::write(entry.seq, &entry.record.view(), &mut scratch);
            let link = match entry.record.event() {
                Event::Continues { prev } => Some(*prev),
                _ => None,
            };
            checker.step(entry.seq, &scratch, &entry.hash, link)?;
        }
        checker.finish()
    }
}
