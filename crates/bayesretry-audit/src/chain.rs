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
    /// Where the chain starts: nothing before it (0 entries, genesis), or the
    /// link of a first entry that continues a log from another file.
    start: Seal,
    /// No entry checked yet and nothing known before the first: a first
    /// entry that links to another file's log sets the start.
    fresh: bool,
    /// The last `continues` entry met: its sequence number and `prev`.
    link_seen: Option<Seal>,
}

impl Checker {
    pub(crate) const fn new(seal: Option<Seal>) -> Checker {
        Checker {
            next: 0,
            prev: Hash::GENESIS,
            seal,
            start: Seal::new(0, Hash::GENESIS),
            fresh: true,
            link_seen: None,
        }
    }

    /// The last `continues` entry met since the last call, and forgets it:
    /// what a file's first entry linked to, when it broke the chain.
    pub(crate) fn take_link(&mut self) -> Option<Seal> {
        self.link_seen.take()
    }

    /// Where the chain checked starts: 0 entries and [`Hash::GENESIS`], or
    /// the link of its first entry, which continues a log from another file.
    pub(crate) const fn start(&self) -> Seal {
        self.start
    }

    /// The end of what was checked so far.
    pub(crate) const fn end(&self) -> Seal {
        Seal::new(self.next, self.prev)
    }

    /// Whether an entry has been checked.
    pub(crate) const fn started(&self) -> bool {
        !self.fresh
    }

    /// Checks the next entry: its sequence number `seq`, its canonical form and
    /// the hash stored with it.
    pub(crate) fn step(
        &mut self,
        seq: u64,
        canonical: &[u8],
        stored: &Hash,
        link: Option<Hash>,
    ) -> Result<(), Broken> {
        self.step_with(seq, stored, link, |prev| Hash::chain(prev, canonical))
    }

    /// Checks the next entry: its sequence number `seq`, the hash stored with it,
    /// and the hash `hash` computes from the previous one.
    ///
    /// The sequence number is checked first: a missing or moved entry then
    /// reads as what it is rather than as a hash mismatch, and costs no hashing.
    ///
    /// `link` is the `prev` a `continues` entry states. As the first entry
    /// checked, it is taken on trust, since the file before is not at hand:
    /// the chain starts there (at entry 0, only the genesis hash is a link). Anywhere else it must be the end of what was
    /// checked, or the entry is [`Break::Link`].
    pub(crate) fn step_with(
        &mut self,
        seq: u64,
        stored: &Hash,
        link: Option<Hash>,
        hash: impl FnOnce(&Hash) -> Hash,
    ) -> Result<(), Broken> {
        if let Some(prev) = link {
            let stated = Seal::new(seq, prev);
            self.link_seen = Some(stated);
            if self.fresh {
                // before entry 0 there is nothing but the genesis hash
                if seq == 0 && prev != Hash::GENESIS {
                    return Err(Broken::new(
                        0,
                        Break::Link {
                            expected: Hash::GENESIS,
                            found: prev,
                        },
                    ));
                }
                self.next = seq;
                self.prev = prev;
                self.start = stated;
                if let Some(seal) = self.seal {
                    if seal.entries() < seq {
                        return Err(Broken::new(
                            seq,
                            Break::SealBeforeStart {
                                sealed: seal.entries(),
                                start: seq,
                            },
                        ));
                    }
                    if seal.entries() == seq && seal.head() != prev {
                        return Err(Broken::new(
                            seq,
                            Break::Seal {
                                sealed: seal.head(),
                                found: prev,
                            },
                        ));
                    }
                }
            } else if seq == self.next && prev != self.prev {
                // a link at another position is a sequence break, below
                return Err(Broken::new(
                    self.next,
                    Break::Link {
                        expected: self.prev,
                        found: prev,
                    },
                ));
            }
        }
        self.fresh = false;
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
