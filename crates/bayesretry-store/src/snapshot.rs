//! [`Snapshot`]: a store's evidence as versioned JSON, and the merge of two.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cmp::Ordering;

use bayesretry_decay::Evidence;
use serde::{Deserialize, Serialize};

use crate::class::ClassRef;
use crate::error::Error;
use crate::error_class::ErrorClass;
use crate::writer::{WriterId, cmp_versions};

/// The version of the snapshot format this crate writes and reads; see
/// [`Snapshot::VERSION`].
const VERSION: u32 = 1;

/// How a custom class is written: this prefix, then its name, so that a custom
/// class named like a built-in one (`"timeout"`) reads back as custom.
pub(crate) const CUSTOM_PREFIX: &str = "custom:";

/// Every writer's evidence for every context of a store, as versioned JSON.
///
/// A snapshot is a set of entries, one per (context, writer), each carrying the
/// writer's evidence *as of its last update* (not decayed), that update's time,
/// and the writer's sequence number for the context. Entries are kept sorted
/// and unique, so two snapshots with the same entries are equal, and their JSON
/// is byte for byte the same.
///
/// # Merging
///
/// [`merge`](Snapshot::merge) keeps, for every (context, writer), the entry
/// with the larger sequence number (ties broken by the later update, then the
/// counts), and every other entry as it is. That is a *join*: commutative,
/// associative and idempotent, so processes can exchange snapshots in any order,
/// any number of times, and all end up with the same entries — merging a
/// snapshot twice counts it once. A context's evidence is the sum over its
/// writers, each decayed from its own last update, so merging with decay stays
/// correct too.
///
/// # Format
///
/// ```json
/// {"version":1,"taken_at_ms":5000,"entries":[
///   {"endpoint":"api.example.com","attempt":1,"class":"http-429","writer":7,
///    "seq":12,"successes":9.5,"failures":2.0,"updated_at_ms":4900}]}
/// ```
///
/// Classes are written as their [`Display`](ErrorClass#impl-Display-for-ErrorClass)
/// form (`http-429`, `timeout`, …), custom ones as `custom:` and the name. Every
/// `f64` is written in its shortest round-trip form and read back exactly.
/// Reading checks the version, that counts are finite and not negative, that
/// sequence numbers are at least 1 and that classes are known; unknown fields
/// are ignored.
///
/// ```
/// use bayesretry_store::{Context, ErrorClass, MemoryStore, PosteriorStore, Snapshot, StoreConfig, WriterId};
///
/// let a = StoreConfig::new().with_writer(WriterId::new(1)).build()?;
/// let b = StoreConfig::new().with_writer(WriterId::new(2)).build()?;
/// let ctx = Context::new("api", 1, ErrorClass::Http(429));
/// a.observe(&ctx, true, 10);
/// b.observe(&ctx, false, 20);
///
/// let mut shared = a.snapshot(30);
/// shared.merge(&b.snapshot(30));
/// let json = shared.to_json();
/// assert_eq!(Snapshot::from_json(&json)?, shared);
///
/// // Merging twice counts once: one success and one failure.
/// let c = MemoryStore::new();
/// c.merge(&shared);
/// c.merge(&shared);
/// assert_eq!(c.evidence(&ctx, 30).strength(), 2.0);
/// # Ok::<(), bayesretry_store::Error>(())
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(try_from = "RawSnapshot")]
pub struct Snapshot {
    version: u32,
    taken_at_ms: u64,
    entries: Vec<SnapshotEntry>,
    /// The writer of the store that took the snapshot; not written to JSON.
    #[serde(skip)]
    taken_by: Option<WriterId>,
    /// Entries updated before this were dropped as forgotten; not written to
    /// JSON.
    #[serde(skip)]
    forgotten_before: Option<u64>,
}

/// Snapshots are equal when their entries and times are: who took them is not
/// part of what they hold.
impl PartialEq for Snapshot {
    fn eq(&self, other: &Snapshot) -> bool {
        self.version == other.version
            && self.taken_at_ms == other.taken_at_ms
            && self.entries == other.entries
    }
}

/// One writer's evidence for one context, in a [`Snapshot`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawEntry")]
pub struct SnapshotEntry {
    endpoint: String,
    attempt: u32,
    class: String,
    writer: WriterId,
    seq: u64,
    successes: f64,
    failures: f64,
    updated_at_ms: u64,
}

impl Snapshot {
    /// The format version this crate writes, and the only one
    /// [`from_json`](Snapshot::from_json) reads. A reader of older files (the
    /// file store) migrates them up to this version before reading them.
    pub const VERSION: u32 = VERSION;

    /// A snapshot with no entries, taken at time 0.
    pub const fn new() -> Snapshot {
        Snapshot {
            version: VERSION,
            taken_at_ms: 0,
            entries: Vec::new(),
            taken_by: None,
            forgotten_before: None,
        }
    }

    /// A snapshot of `entries` taken at `taken_at_ms`, sorted and made unique
    /// (the winning version of each (context, writer) kept, as a
    /// [merge](Snapshot#merging) would): how a store that carries entries
    /// some other way than JSON (a Redis hash, a message bus) rebuilds one.
    ///
    /// ```
    /// use bayesretry_store::{Evidence, Snapshot, SnapshotEntry, WriterId};
    ///
    /// let entry = |seq, successes| {
    ///     let evidence = Evidence::new(successes, 1.0).unwrap();
    ///     SnapshotEntry::new("db", 1, "timeout", WriterId::new(7), seq, evidence, 100).unwrap()
    /// };
    /// let snapshot = Snapshot::from_entries(100, vec![entry(2, 5.0), entry(1, 3.0)]);
    /// assert_eq!(snapshot.len(), 1);
    /// assert_eq!(snapshot.entries()[0].seq(), 2);
    /// ```
    pub fn from_entries(taken_at_ms: u64, entries: Vec<SnapshotEntry>) -> Snapshot {
        let mut snapshot = Snapshot {
            version: VERSION,
            taken_at_ms,
            entries,
            taken_by: None,
            forgotten_before: None,
        };
        snapshot.normalise();
        snapshot
    }

    /// The format version of the snapshot, [`Snapshot::VERSION`].
    pub const fn version(&self) -> u32 {
        self.version
    }

    /// When the snapshot was taken (the latest of the merged ones'), on the
    /// writers' clock.
    pub const fn taken_at_ms(&self) -> u64 {
        self.taken_at_ms
    }

    /// The writer of the store that took the snapshot
    /// ([`MemoryStore::snapshot`](crate::MemoryStore::snapshot)), whose own
    /// evidence it carries; `None` for a snapshot read from JSON, built from
    /// entries or new. A merge keeps the receiving snapshot's. It is not
    /// written to JSON and not compared by `==`.
    ///
    /// A file store uses it to notice a writer whose saved entries are newer
    /// than the ones it is saving: a store started again under the same id
    /// without loading its last snapshot.
    pub const fn taken_by(&self) -> Option<WriterId> {
        self.taken_by
    }

    /// The snapshot, marked as taken by `writer`'s store.
    #[cfg(feature = "std")]
    pub(crate) fn taken_by_writer(mut self, writer: WriterId) -> Snapshot {
        self.taken_by = Some(writer);
        self
    }

    /// Drops every entry last updated before `cutoff_ms`, and records the
    /// cutoff as [`forgotten_before`](Snapshot::forgotten_before) (the later
    /// of it and one recorded before).
    ///
    /// A store with a half-life does this to the snapshots it takes, with the
    /// cutoff of [`Decay::forgotten_before`](bayesretry_decay::Decay::forgotten_before):
    /// evidence 64 half-lives old counts for nothing, and keeping it would
    /// grow a shared file by an entry per context at each restart of a
    /// process under a new writer id.
    ///
    /// ```
    /// use bayesretry_store::{Evidence, Snapshot, SnapshotEntry, WriterId};
    ///
    /// let entry = |writer, at| {
    ///     let evidence = Evidence::new(1.0, 0.0).unwrap();
    ///     SnapshotEntry::new("db", 1, "timeout", WriterId::new(writer), 1, evidence, at).unwrap()
    /// };
    /// let mut snapshot = Snapshot::from_entries(9_000, vec![entry(1, 100), entry(2, 5_000)]);
    /// snapshot.forget_before(5_000);
    /// assert_eq!(snapshot.len(), 1);
    /// assert_eq!(snapshot.entries()[0].writer(), WriterId::new(2));
    /// assert_eq!(snapshot.forgotten_before(), Some(5_000));
    /// ```
    pub fn forget_before(&mut self, cutoff_ms: u64) {
        self.entries.retain(|e| e.updated_at_ms >= cutoff_ms);
        self.forgotten_before = Some(
            self.forgotten_before
                .map_or(cutoff_ms, |c| c.max(cutoff_ms)),
        );
    }

    /// Keeps only the entries for which `keep` returns `true`, in their order:
    /// for a merger with a rule of its own about what to drop.
    pub fn retain(&mut self, keep: impl FnMut(&SnapshotEntry) -> bool) {
        self.entries.retain(keep);
    }

    /// The cutoff of the last [`forget_before`](Snapshot::forget_before): the
    /// snapshot holds no entry updated before it. `None` if nothing was
    /// forgotten: a snapshot read from JSON, built from entries, or taken by a
    /// store without decay. A merge keeps the receiving snapshot's. It is not
    /// written to JSON and not compared by `==`.
    ///
    /// A file store forgets the entries of its file that the saving store has
    /// forgotten when it merges the snapshot into it (`FileStore::save_merged`
    /// in `bayesretry-fs`), so the file sheds what no store would count any
    /// more.
    pub const fn forgotten_before(&self) -> Option<u64> {
        self.forgotten_before
    }

    /// The entries, sorted by endpoint, attempt, class and writer.
    pub fn entries(&self) -> &[SnapshotEntry] {
        &self.entries
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Merges `other` into `self`; see [merging](Snapshot#merging).
    ///
    /// Both snapshots keep their entries sorted by key with one entry per key, so
    /// this is one linear pass over the two lists, not a sort: merging a snapshot
    /// of 100 000 contexts into a file of the same size costs two walks, not
    /// `n log n` comparisons.
    pub fn merge(&mut self, other: &Snapshot) {
        self.taken_at_ms = self.taken_at_ms.max(other.taken_at_ms);
        if other.entries.is_empty() {
            return;
        }
        let mine = core::mem::take(&mut self.entries);
        let mut merged = Vec::with_capacity(mine.len() + other.entries.len());
        let mut left = mine.into_iter().peekable();
        let mut right = other.entries.iter().peekable();
        loop {
            let order = match (left.peek(), right.peek()) {
                (Some(a), Some(b)) => a.cmp_key(b),
                (Some(_), None) => {
                    merged.extend(left);
                    break;
                }
                (None, _) => {
                    merged.extend(right.cloned());
                    break;
                }
            };
            match order {
                Ordering::Less => merged.extend(left.next()),
                Ordering::Greater => merged.extend(right.next().cloned()),
                Ordering::Equal => {
                    if let (Some(a), Some(b)) = (left.next(), right.next()) {
                        // The better version of the key wins; equal versions
                        // are the same entry.
                        if cmp_versions(a.version(), b.version()) == Ordering::Less {
                            merged.push(b.clone());
                        } else {
                            merged.push(a);
                        }
                    }
                }
            }
        }
        self.entries = merged;
    }

    /// `self` merged with `other`, as a new snapshot.
    #[must_use]
    pub fn merged(mut self, other: &Snapshot) -> Snapshot {
        self.merge(other);
        self
    }

    /// The snapshot as JSON.
    pub fn to_json(&self) -> String {
        // Serialising plain strings, integers and finite floats into a String
        // cannot fail; an empty string would be rejected by `from_json`.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A snapshot read from JSON, checked; see [the format](Snapshot#format).
    pub fn from_json(json: &str) -> Result<Snapshot, Error> {
        let raw: RawSnapshot =
            serde_json::from_str(json).map_err(|e| Error::InvalidSnapshot(e.to_string()))?;
        Snapshot::try_from(raw)
    }

    /// Sorts by key and, within a key, best version first; keeps the first.
    fn normalise(&mut self) {
        self.entries.sort_by(|a, b| {
            a.cmp_key(b)
                .then_with(|| cmp_versions(b.version(), a.version()))
        });
        self.entries
            .dedup_by(|later, first| later.cmp_key(first) == Ordering::Equal);
    }
}

impl Default for Snapshot {
    fn default() -> Self {
        Self::new()
    }
}

impl SnapshotEntry {
    /// One writer's entry for one context, checked as [`Snapshot::from_json`]
    /// checks the entries it reads: `class` as a snapshot writes it
    /// (`http-429`, `timeout`, `custom:quota`, …), `seq` at least 1, and
    /// `evidence` finite and non-negative.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidSnapshot`] naming the class, sequence number or counts
    /// that were rejected.
    pub fn new(
        endpoint: &str,
        attempt: u32,
        class: &str,
        writer: WriterId,
        seq: u64,
        evidence: Evidence,
        updated_at_ms: u64,
    ) -> Result<SnapshotEntry, Error> {
        SnapshotEntry::try_from(RawEntry {
            endpoint: endpoint.into(),
            attempt,
            class: class.into(),
            writer,
            seq,
            successes: evidence.successes(),
            failures: evidence.failures(),
            updated_at_ms,
        })
    }

    #[cfg(feature = "std")]
    pub(crate) fn from_parts(
        endpoint: &str,
        attempt: u32,
        class: String,
        writer: WriterId,
        seq: u64,
        evidence: Evidence,
        updated_at_ms: u64,
    ) -> SnapshotEntry {
        SnapshotEntry {
            endpoint: endpoint.into(),
            attempt,
            class,
            writer,
            seq,
            successes: evidence.successes(),
            failures: evidence.failures(),
            updated_at_ms,
        }
    }

    /// The endpoint.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The attempt number.
    pub const fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The class, as written in the snapshot (`http-429`, `custom:quota`, …).
    pub fn class(&self) -> &str {
        &self.class
    }

    /// The class as an [`ErrorClass`], for every class but a custom one (whose
    /// name a snapshot cannot lend for `'static`).
    pub fn error_class(&self) -> Option<ErrorClass> {
        match parse_class(&self.class)? {
            ClassRef::Builtin(class) => Some(class),
            ClassRef::Custom(_) => None,
        }
    }

    /// The writer.
    pub const fn writer(&self) -> WriterId {
        self.writer
    }

    /// The writer's sequence number for the context, at least 1.
    pub const fn seq(&self) -> u64 {
        self.seq
    }

    /// The writer's evidence, as of [`updated_at_ms`](SnapshotEntry::updated_at_ms).
    pub fn evidence(&self) -> Evidence {
        Evidence::new_lenient(self.successes, self.failures)
    }

    /// When the writer last updated the context.
    pub const fn updated_at_ms(&self) -> u64 {
        self.updated_at_ms
    }

    /// The class, parsed (always `Some` for an entry that was checked).
    #[cfg(feature = "std")]
    pub(crate) fn class_ref(&self) -> Option<ClassRef<'_>> {
        parse_class(&self.class)
    }

    fn cmp_key(&self, other: &SnapshotEntry) -> Ordering {
        (&self.endpoint, self.attempt, &self.class, self.writer).cmp(&(
            &other.endpoint,
            other.attempt,
            &other.class,
            other.writer,
        ))
    }

    fn version(&self) -> (u64, u64, Evidence) {
        (self.seq, self.updated_at_ms, self.evidence())
    }
}

/// A class from its snapshot form; `None` if it is not one this crate writes.
pub(crate) fn parse_class(name: &str) -> Option<ClassRef<'_>> {
    if let Some(custom) = name.strip_prefix(CUSTOM_PREFIX) {
        return Some(ClassRef::Custom(custom));
    }
    if let Some(status) = name.strip_prefix("http-") {
        // Only the canonical spelling: digits, no sign, no leading zero.
        let canonical = !status.is_empty()
            && status.bytes().all(|b| b.is_ascii_digit())
            && (status == "0" || !status.starts_with('0'));
        return if canonical {
            status
                .parse()
                .ok()
                .map(|s| ClassRef::Builtin(ErrorClass::Http(s)))
        } else {
            None
        };
    }
    let class = match name {
        "timeout" => ErrorClass::Timeout,
        "connection-refused" => ErrorClass::ConnectionRefused,
        "connection-reset" => ErrorClass::ConnectionReset,
        "connect" => ErrorClass::Connect,
        "unknown" => ErrorClass::Unknown,
        _ => return None,
    };
    Some(ClassRef::Builtin(class))
}

/// A snapshot as read, before it is checked.
#[derive(Deserialize)]
struct RawSnapshot {
    version: u32,
    taken_at_ms: u64,
    entries: Vec<SnapshotEntry>,
}

impl TryFrom<RawSnapshot> for Snapshot {
    type Error = Error;

    fn try_from(raw: RawSnapshot) -> Result<Snapshot, Error> {
        if raw.version != VERSION {
            return Err(Error::UnsupportedVersion(raw.version));
        }
        let mut snapshot = Snapshot {
            version: VERSION,
            taken_at_ms: raw.taken_at_ms,
            entries: raw.entries,
            taken_by: None,
            forgotten_before: None,
        };
        snapshot.normalise();
        Ok(snapshot)
    }
}

/// An entry as read, before it is checked.
#[derive(Deserialize)]
struct RawEntry {
    endpoint: String,
    attempt: u32,
    class: String,
    writer: WriterId,
    seq: u64,
    successes: f64,
    failures: f64,
    updated_at_ms: u64,
}

impl TryFrom<RawEntry> for SnapshotEntry {
    type Error = Error;

    fn try_from(raw: RawEntry) -> Result<SnapshotEntry, Error> {
        let invalid = |why: String| Err(Error::InvalidSnapshot(why));
        if parse_class(&raw.class).is_none() {
            return invalid(alloc::format!("unknown class {:?}", raw.class));
        }
        if raw.seq == 0 {
            return invalid(String::from("seq must be at least 1, got 0"));
        }
        if let Err(e) = Evidence::new(raw.successes, raw.failures) {
            return invalid(alloc::format!("{e}"));
        }
        Ok(SnapshotEntry {
            endpoint: raw.endpoint,
            attempt: raw.attempt,
            class: raw.class,
            writer: raw.writer,
            seq: raw.seq,
            successes: raw.successes,
            failures: raw.failures,
            updated_at_ms: raw.updated_at_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::parse_class;
    use crate::class::ClassRef;
    use crate::error_class::ErrorClass;

    #[test]
    fn classes_read_back_as_written() {
        for class in [
            ErrorClass::Http(0),
            ErrorClass::Http(429),
            ErrorClass::Http(65_535),
            ErrorClass::Timeout,
            ErrorClass::ConnectionRefused,
            ErrorClass::ConnectionReset,
            ErrorClass::Connect,
            ErrorClass::Unknown,
        ] {
            let written = alloc::format!("{class}");
            assert_eq!(parse_class(&written), Some(ClassRef::Builtin(class)));
        }
        assert_eq!(
            parse_class("custom:timeout"),
            Some(ClassRef::Custom("timeout"))
        );
        for bad in [
            "http-042",
            "http-",
            "http-+1",
            "http-70000",
            "Timeout",
            "quota",
        ] {
            assert_eq!(parse_class(bad), None, "{bad}");
        }
    }
}
