//! [`Seal`]: a commitment to a log's contents, to keep somewhere else.

use core::fmt;
use core::str::FromStr;

use crate::error::ParseError;
use crate::hash::Hash;

/// A commitment to the first `entries` entries of a log: their count and the hash
/// of the last of them (the head).
///
/// The hash chain alone shows that no entry was changed, moved, inserted or
/// deleted *in the middle*; it cannot show that entries were cut from the end, or
/// that someone rewrote the log from some point on and recomputed every hash after
/// it. A seal can: kept elsewhere (another system, a ticket, a signed message), it
/// pins the head, and verifying against it fails if the log is shorter or its
/// entry at that position hashes differently. A log that has grown since the seal
/// still verifies: a seal commits to a prefix, and the log is append-only.
///
/// **An integrity seal, not a signature.** Nothing in it is secret: whoever can
/// rewrite the whole file can compute a new chain and a new seal. What the seal
/// proves depends on where it is kept — out of that person's reach.
///
/// Shown and parsed as `<entries>:<head hash>`.
///
/// ```
/// use bayesretry_audit::{Hash, Seal};
///
/// let empty = Seal::new(0, Hash::GENESIS);
/// let text = empty.to_string();
/// assert_eq!(text, format!("0:{}", "0".repeat(64)));
/// assert_eq!(text.parse::<Seal>(), Ok(empty));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Seal {
    entries: u64,
    head: Hash,
}

impl Seal {
    /// A seal of `entries` entries whose last has hash `head` ([`Hash::GENESIS`]
    /// for an empty log).
    pub const fn new(entries: u64, head: Hash) -> Seal {
        Seal { entries, head }
    }

    /// The number of entries sealed.
    pub const fn entries(&self) -> u64 {
        self.entries
    }

    /// The hash of the last entry sealed ([`Hash::GENESIS`] for none).
    pub const fn head(&self) -> Hash {
        self.head
    }
}

impl fmt::Display for Seal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.entries, self.head)
    }
}

impl FromStr for Seal {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Seal, ParseError> {
        let bad = || ParseError::Seal(s.to_owned());
        let (entries, head) = s.split_once(':').ok_or_else(bad)?;
        if entries.is_empty() || !entries.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let entries = entries.parse().map_err(|_| bad())?;
        let head = Hash::from_hex(head.as_bytes()).ok_or_else(bad)?;
        Ok(Seal::new(entries, head))
    }
}
