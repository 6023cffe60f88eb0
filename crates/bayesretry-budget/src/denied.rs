//! [`Denied`]: why a spend was refused, and when the budget may have room again.

use core::fmt;

/// Why a budget refused a retry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Reason {
    /// The window's allowance is spent. [`Denied::retry_at_ms`] says when it rolls.
    Exhausted,
    /// The cost is more than the budget could grant in any window, however idle: a
    /// fixed window's cost above `max_cost_per_window`, or a ratio budget's cost above
    /// what one bucket can record. Waiting will not help.
    Oversized,
    /// Other threads changed the budget on every one of the bounded attempts to
    /// update it. The budget fails closed rather than spin: the retry is refused, and
    /// an immediate new attempt may well succeed.
    Contended,
}

/// A refused spend: the [`Reason`], and when the budget may have room again.
///
/// Like a rate limiter's "not until", this is an answer, not a failure of the
/// budget: the caller gives up the retry (or waits, if its deadline allows).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[must_use]
pub struct Denied {
    reason: Reason,
    retry_at_ms: Option<u64>,
}

impl Denied {
    /// [`Reason::Exhausted`], with room again at `retry_at_ms`: for a
    /// [`Budget`](crate::Budget) implemented outside this crate (one shared
    /// through a server, say) to answer like the budgets here.
    pub const fn exhausted(retry_at_ms: u64) -> Denied {
        Denied {
            reason: Reason::Exhausted,
            retry_at_ms: Some(retry_at_ms),
        }
    }

    pub(crate) const fn oversized() -> Denied {
        Denied {
            reason: Reason::Oversized,
            retry_at_ms: None,
        }
    }

    /// [`Reason::Contended`]: refused rather than wait for a shared state to
    /// settle; for a [`Budget`](crate::Budget) implemented outside this crate.
    pub const fn contended() -> Denied {
        Denied {
            reason: Reason::Contended,
            retry_at_ms: None,
        }
    }

    /// Why the spend was refused.
    pub const fn reason(&self) -> Reason {
        self.reason
    }

    /// For [`Reason::Exhausted`], the `now_ms` at which the window next changes on
    /// its own: the start of the next fixed window, or of the ratio budget's next
    /// bucket. A fixed window refuses the same spend until then; a ratio budget may
    /// have room sooner if first attempts deposit in the meantime. `None` for the
    /// other reasons, where waiting does not matter.
    pub const fn retry_at_ms(&self) -> Option<u64> {
        self.retry_at_ms
    }
}

impl fmt::Display for Denied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.reason, self.retry_at_ms) {
            (Reason::Exhausted, Some(at)) => {
                write!(f, "retry budget exhausted until {at} ms")
            }
            (Reason::Exhausted, None) => f.write_str("retry budget exhausted"),
            (Reason::Oversized, _) => {
                f.write_str("retry cost exceeds what the budget can grant in one window")
            }
            (Reason::Contended, _) => {
                f.write_str("retry budget contended: refused rather than spin")
            }
        }
    }
}

impl core::error::Error for Denied {}
