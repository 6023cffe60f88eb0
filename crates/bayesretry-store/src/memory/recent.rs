//! [`RecentName`]: each thread remembers the hash of the last endpoint name it
//! hashed, so that the calls of one retry loop hash their endpoint once.
//!
//! A call through a retry policy reads the posterior of its context, and then
//! observes the outcome of the retry in the same context; the next call to the
//! same endpoint does so again. Each of these store calls is given the endpoint
//! as a `&str` and must hash it to find its shard and its slot: a few dozen
//! instructions for a typical name, a fair share of a lookup. The caller almost
//! always passes the same string each time (a `&'static str`, or a `String`
//! held for the whole call), so the thread remembers where the last name it
//! hashed lay in memory, its length and the seed it was hashed with, and the
//! hash; a call whose name lies at the same place, with the same length and
//! seed, tries the remembered hash first.
//!
//! The remembered hash is only ever a guess, and nothing depends on it being
//! right: the bytes at that place may have changed since (a buffer reused for
//! another name of the same length). A lookup made with a guessed hash
//! compares the context it finds with the caller's key in full — attempt,
//! class and every byte of the name — so what it finds is the caller's context,
//! whichever hash led to it. When it finds nothing, the store hashes the name
//! itself: if the guess was right, the context is simply not there yet and the
//! call goes on under the lock it holds; if not, it lets go of that shard and
//! starts over with the true hash. A context is only ever filed under its true
//! hash, and only true hashes are remembered.

use core::cell::Cell;

/// Where the last name hashed by this thread lay, and its hash under `seed`.
#[derive(Clone, Copy, Debug)]
struct Remembered {
    seed: u64,
    addr: usize,
    len: usize,
    hash: u64,
}

std::thread_local! {
    static RECENT: Cell<Remembered> = const {
        // No name lies at address 0, so nothing matches this.
        Cell::new(Remembered { seed: 0, addr: 0, len: 0, hash: 0 })
    };
}

/// The per-thread memory of the last endpoint name hashed; see the
/// [module documentation](self).
pub(crate) struct RecentName;

impl RecentName {
    /// The hash remembered for `name` under `seed`, if `name` lies where the
    /// last name hashed by this thread lay: a guess to be checked.
    #[inline]
    pub(crate) fn guess(seed: u64, name: &str) -> Option<u64> {
        let last = RECENT.with(Cell::get);
        (last.addr == name.as_ptr().addr() && last.len == name.len() && last.seed == seed)
            .then_some(last.hash)
    }

    /// Remembers `hash`, the true hash of `name` under `seed`.
    #[inline]
    pub(crate) fn remember(seed: u64, name: &str, hash: u64) {
        RECENT.with(|recent| {
            recent.set(Remembered {
                seed,
                addr: name.as_ptr().addr(),
                len: name.len(),
                hash,
            });
        });
    }
}
