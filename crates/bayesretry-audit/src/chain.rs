//! [`Checker`]: the verification of a chain, entry by entry, shared by the
//! in-memory log and the streaming file verifier.

use crate::error::{Break, Broken};
use crate::hash::Hash;
use crate::seal::Seal;

/// Walks a chain one entry at a time, in constant memory.
#[derive(Clone, Debug)]
pub(crate) struct Checker {
    /// Entries checked so far: the position of the next.
    next: u64,
    /// The hash of the last entry checked.
    prev: Hash,
    /// The seal to check against, if any.
    seal: Option<Seal>,
}

impl Checker {
    pub(crate) const fn new(seal: Option<Seal>) -> Checker {
        Checker {
            next: 0,
            prev: Hash::GENESIS,
            seal,
        }
    }

    /// Checks the next entry: its sequence number `seq`, its canonical form and
    /// the hash stored with it.
    pub(crate) fn step(&mut self, seq: u64, canonical: &[u8], stored: &Hash) -> Result<(), Broken> {
        self.step_with(seq, stored, |prev| Hash::chain(prev, canonical))
    }

    /// Checks the next entry: its sequence number `seq`, the hash stored with it,
    /// and the hash `hash` computes from the previous one.
    ///
    /// The sequence number is checked first: a missing or moved entry then
    /// reads as what it is rather than as a hash mismatch, and costs no hashing.
    pub(crate) fn step_with(
        &mut self,
        seq: u64,
        stored: &Hash,
        hash: impl FnOnce(&Hash) -> Hash,
    ) -> Result<(), Broken> {
        let index = self.next;
        if seq != index {
            return Err(Broken::new(
                index,
                Break::Sequence {
                    expected: index,
                    found: seq,
                },
            ));
        }
        let computed = hash(&self.prev);
        if computed != *stored {
            return Err(Broken::new(
                index,
                Break::Hash {
                    stored: *stored,
                    computed,
                },
            ));
        }
        self.next = index.saturating_add(1);
        self.prev = computed;
        match self.seal {
            Some(seal) if seal.entries() == self.next && seal.head() != computed => {
                Err(Broken::new(
                    index,
                    Break::Seal {
                        sealed: seal.head(),
                        found: computed,
                    },
                ))
            }
            _ => Ok(()),
        }
    }

    /// The end of the log: its seal, or why it falls short of the seal checked
    /// against.
    pub(crate) fn finish(&self) -> Result<Seal, Broken> {
        if let Some(seal) = self.seal {
            if self.next < seal.entries() {
                return Err(Broken::new(
                    self.next,
                    Break::Truncated {
                        entries: self.next,
                        sealed: seal.entries(),
                    },
                ));
            }
            if seal.entries() == 0 && seal.head() != Hash::GENESIS {
                return Err(Broken::new(
                    0,
                    Break::Seal {
                        sealed: seal.head(),
                        found: Hash::GENESIS,
                    },
                ));
            }
        }
        Ok(Seal::new(self.next, self.prev))
    }
}
