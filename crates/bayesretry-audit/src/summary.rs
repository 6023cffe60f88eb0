//! [`Summary`]: what a verified log holds, beyond its seal.

use crate::scan::Kind;
use crate::seal::Seal;

/// A verified log's seal, and what its entries record: how many decisions and
/// outcomes, and how many records were lost.
///
/// A valid chain shows that nothing was changed or removed after it was
/// written, not that everything was written. A writer that could not keep up
/// records each loss in a `dropped` entry instead of losing it silently, and
/// those entries chain like any other: a verifier that only says "valid"
/// leaves the reader to find them. [`lost`](Summary::lost) adds them up.
///
/// ```
/// use bayesretry_audit::{Event, Fsync, JsonlWriter, Record, Verifier};
///
/// let mut writer = JsonlWriter::new(Vec::new(), Fsync::Never);
/// writer.append(&Record::new(5, Event::Outcome {
///     endpoint: "api".into(),
///     attempt: 1,
///     error_class: "timeout".into(),
///     success: true,
/// }))?;
/// writer.append(&Record::new(6, Event::Dropped { count: 3 }))?;
/// let bytes = writer.into_inner()?;
///
/// let summary = Verifier::new().summarize_reader(bytes.as_slice())?;
/// assert_eq!(summary.seal().entries(), 2);
/// assert_eq!((summary.decisions(), summary.outcomes()), (0, 1));
/// assert_eq!((summary.dropped_entries(), summary.lost()), (1, 3));
/// # Ok::<(), bayesretry_audit::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Summary {
    start: Seal,
    seal: Seal,
    decisions: u64,
    outcomes: u64,
    dropped_entries: u64,
    lost: u64,
}

impl Summary {
    /// The log's seal: its length and head.
    pub const fn seal(&self) -> Seal {
        self.seal
    }

    /// Entries recording a decision.
    pub const fn decisions(&self) -> u64 {
        self.decisions
    }

    /// Entries recording an outcome.
    pub const fn outcomes(&self) -> u64 {
        self.outcomes
    }

    /// `dropped` entries, each of which records a loss.
    pub const fn dropped_entries(&self) -> u64 {
        self.dropped_entries
    }

    /// Records lost, the sum of the `dropped` entries' counts (at most
    /// `u64::MAX`). A lower bound: a writer cannot record the loss of records
    /// offered after its last entry.
    pub const fn lost(&self) -> u64 {
        self.lost
    }

    /// Where the log starts: 0 entries and [`Hash::GENESIS`](crate::Hash::GENESIS)
    /// for a log written from its beginning; for one whose first file
    /// continues a log from a file not verified with it (its first entry is
    /// [`Event::Continues`](crate::Event::Continues)), the count and head that
    /// entry links to, which only that earlier file, or a seal of it kept
    /// elsewhere, can confirm.
    ///
    /// The entries verified are those from `start().entries()` to
    /// `seal().entries()`; the counts of this summary are of those.
    pub const fn start(&self) -> Seal {
        self.start
    }
}

/// Counts entries as a verifier checks them.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Tally {
    decisions: u64,
    outcomes: u64,
    dropped_entries: u64,
    lost: u64,
}

impl Tally {
    /// Counts one entry.
    pub(crate) fn add(&mut self, kind: Kind) {
        match kind {
            Kind::Decision => self.decisions = self.decisions.saturating_add(1),
            Kind::Outcome => self.outcomes = self.outcomes.saturating_add(1),
            Kind::Dropped(count) => {
                self.dropped_entries = self.dropped_entries.saturating_add(1);
                self.lost = self.lost.saturating_add(count);
            }
            Kind::Continues(_) => {}
        }
    }

    /// The summary of a log from `start` to `seal` whose entries were
    /// counted here.
    pub(crate) const fn summary(self, start: Seal, seal: Seal) -> Summary {
        Summary {
            start,
            seal,
            decisions: self.decisions,
            outcomes: self.outcomes,
            dropped_entries: self.dropped_entries,
            lost: self.lost,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::Hash;

    #[test]
    fn losses_add_up_and_saturate() {
        let mut tally = Tally::default();
        for kind in [
            Kind::Decision,
            Kind::Outcome,
            Kind::Outcome,
            Kind::Dropped(7),
            Kind::Dropped(u64::MAX),
        ] {
            tally.add(kind);
        }
        let summary = tally.summary(Seal::new(0, Hash::GENESIS), Seal::new(5, Hash::GENESIS));
        assert_eq!(summary.decisions(), 1);
        assert_eq!(summary.outcomes(), 2);
        assert_eq!(summary.dropped_entries(), 2);
        assert_eq!(summary.lost(), u64::MAX);
        assert_eq!(summary.seal().entries(), 5);
    }
}
