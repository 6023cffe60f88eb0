//! [`Spends`]: where a fleet budget's spends came from, so that a refund
//! goes back where its spend was taken.
//!
//! A [`FleetBudget`](crate::FleetBudget) spends from two places: the units
//! of its current lease, and, while Redis is away and the lease cannot
//! cover a spend, its local fallback budget. A refund
//! ([`Budget::refund`](bayesretry_budget::Budget::refund)) names its spend
//! only by the time it was made at (the caller's `now_ms`) and its cost, so
//! the budget keeps, beside its lease, a few numbers that tell the two
//! apart — no record per spend, nothing allocated, two comparisons and an
//! addition on a spend from the lease:
//!
//! - the cost taken from the current lease's window and not given back, and
//!   the times those spends were made at, as the smallest interval holding
//!   them all;
//! - the latest time a spend from an earlier window of the lease was made
//!   at: a refund at or before it may be one of those, whose units went
//!   void with their window, and gives nothing back;
//! - the times of the spends that went to the fallback, as an interval too
//!   (one made at or before an earlier window's last spend left out: its
//!   refund is kept);
//! - the times where spends of an earlier window of the lease and the
//!   fallback's were both made, which no refund can tell apart.
//!
//! A refund goes to the lease only if its time falls among the current
//! window's spends and not among the fallback's, and to the fallback only if
//! it falls among the fallback's and among no spend of the lease's. Where
//! the two could both have spent at that time, the refund gives nothing
//! back, the strict side: a unit given to the wrong one would let the
//! process spend more than it could have without the refunded spend. That
//! happens only for spends made while Redis was away, in the time a process
//! switches from its lease to its fallback and back.

/// The times a set of spends were made at, as the smallest interval holding
/// them all. Empty (`lo > hi`) until the first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    lo: u64,
    hi: u64,
}

impl Span {
    const EMPTY: Span = Span {
        lo: u64::MAX,
        hi: 0,
    };

    const fn at(t: u64) -> Span {
        Span { lo: t, hi: t }
    }

    const fn is_empty(self) -> bool {
        self.lo > self.hi
    }

    /// Widens the span to hold `t` (an empty span becomes `t` alone).
    #[inline]
    fn add(&mut self, t: u64) {
        self.lo = self.lo.min(t);
        self.hi = self.hi.max(t);
    }

    const fn contains(self, t: u64) -> bool {
        self.lo <= t && t <= self.hi
    }

    /// The times both spans hold (empty if none).
    fn meet(self, other: Span) -> Span {
        Span {
            lo: self.lo.max(other.lo),
            hi: self.hi.min(other.hi),
        }
    }

    /// The smallest span holding both.
    fn join(self, other: Span) -> Span {
        if self.is_empty() {
            other
        } else if other.is_empty() {
            self
        } else {
            Span {
                lo: self.lo.min(other.lo),
                hi: self.hi.max(other.hi),
            }
        }
    }
}

/// Where a refund goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refund {
    /// Back to the current lease: this many units (taken off the record of
    /// what the lease's window spent).
    Lease(u64),
    /// To the fallback budget, which gives it back if its own window still
    /// counts the spend.
    Fallback,
    /// Nowhere: the spend's window has rolled on, or the refund cannot tell
    /// which of the two it was spent from.
    Kept,
}

/// What a fleet budget remembers of its spends, for their refunds: see the
/// [module's documentation](self). Kept under the lease's lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Spends {
    /// Cost spent from the current lease's window and not given back: a
    /// refund never gives the lease more.
    taken: u64,
    /// When those spends were made.
    lease: Span,
    /// The latest time a spend from an earlier window of the lease was made
    /// at, if any.
    before: Option<u64>,
    /// When the spends that went to the fallback were made (since the record
    /// was last started afresh: see [`Spends::fell_back`]).
    fallback: Span,
    /// Times of the fallback's spends where spends from an earlier window of
    /// the lease were made too: a refund there is kept. Within `fallback`.
    mixed: Span,
}

impl Default for Spends {
    fn default() -> Self {
        Spends {
            taken: 0,
            lease: Span::EMPTY,
            before: None,
            fallback: Span::EMPTY,
            mixed: Span::EMPTY,
        }
    }
}

impl Spends {
    /// `cost` was spent from the current lease at `now_ms`.
    #[inline]
    pub(crate) fn took(&mut self, now_ms: u64, cost: u64) {
        self.taken = self.taken.saturating_add(cost);
        self.lease.add(now_ms);
    }

    /// The current lease's units went void (its window ended, or a lease of
    /// another window replaced it): its spends can no longer be given back.
    #[inline]
    pub(crate) fn roll(&mut self) {
        if self.lease.is_empty() {
            return;
        }
        let hi = self.lease.hi;
        self.before = Some(self.before.map_or(hi, |before| before.max(hi)));
        // from now on a refund cannot tell these from the fallback's
        self.mixed = self.mixed.join(self.lease.meet(self.fallback));
        self.lease = Span::EMPTY;
        self.taken = 0;
    }

    /// A spend made at `now_ms` went to the fallback.
    ///
    /// The record of the fallback's spends is an interval, and it never
    /// forgets a spend made after an earlier window's last (`before`): the
    /// current window's lease may have spent before and after that spend,
    /// and a refund of it that the record no longer held would go to the
    /// lease. Nor does it grow over times where earlier windows of the lease
    /// spent (at or before `before`), where it would take their refunds for
    /// the fallback's:
    ///
    /// - a spend at or before `before` (a caller's clock behind the others')
    ///   is left out of the record: no refund at its time can go to the
    ///   lease, and its own is kept, the strict side;
    /// - one that would widen the record up over `before` from below it
    ///   starts the record afresh from `now_ms` instead, and the refunds of
    ///   the fallback's earlier spends (all at or before `before`) are kept —
    ///   rare: it takes an outage in a later lease window than the last
    ///   one's, while a retry of the last one still waits.
    pub(crate) fn fell_back(&mut self, now_ms: u64) {
        match self.before {
            Some(before) if now_ms <= before => {}
            Some(before) if !self.fallback.is_empty() && self.fallback.hi < before => {
                self.fallback = Span::at(now_ms);
                // every time of an earlier window's spend is at or before
                // `before`, out of the new record
                self.mixed = Span::EMPTY;
            }
            _ => self.fallback.add(now_ms),
        }
    }

    /// Where a refund of `cost` spent at `spent_at_ms` goes. Roll the lease
    /// first if its window is over: then nothing goes back to it.
    pub(crate) fn refund(&mut self, spent_at_ms: u64, cost: u64) -> Refund {
        let t = spent_at_ms;
        if cost == 0 || self.mixed.contains(t) {
            return Refund::Kept;
        }
        let in_lease = self.lease.contains(t);
        let in_fallback = self.fallback.contains(t);
        if in_lease && !in_fallback && self.before.is_none_or(|before| t > before) {
            // never more than the window's spends took
            let back = cost.min(self.taken);
            if back == 0 {
                return Refund::Kept;
            }
            self.taken -= back;
            return Refund::Lease(back);
        }
        if in_fallback && !in_lease {
            // every earlier window's spend at a time the fallback's record
            // holds is in `mixed`: this one is the fallback's
            return Refund::Fallback;
        }
        Refund::Kept
    }
}

#[cfg(test)]
mod tests {
    use super::{Refund, Spends};

    #[test]
    fn a_lease_spend_comes_back_to_the_lease_once() {
        let mut s = Spends::default();
        s.took(100, 1);
        s.took(105, 1);
        assert_eq!(s.refund(100, 1), Refund::Lease(1));
        assert_eq!(s.refund(105, 1), Refund::Lease(1));
        // nothing more was taken
        assert_eq!(s.refund(105, 1), Refund::Kept);
        // a time no spend was made at
        s.took(110, 1);
        assert_eq!(s.refund(200, 1), Refund::Kept);
        assert_eq!(s.refund(99, 1), Refund::Kept);
    }

    #[test]
    fn a_refund_never_gives_more_than_was_taken() {
        let mut s = Spends::default();
        s.took(100, 2);
        assert_eq!(s.refund(100, 5), Refund::Lease(2));
        assert_eq!(s.refund(100, 1), Refund::Kept);
        assert_eq!(s.refund(100, 0), Refund::Kept);
        s.took(u64::MAX, u64::MAX);
        s.took(u64::MAX, u64::MAX);
        assert_eq!(s.refund(u64::MAX, u64::MAX), Refund::Lease(u64::MAX));
    }

    #[test]
    fn a_spend_of_a_rolled_window_comes_back_nowhere() {
        let mut s = Spends::default();
        s.took(100, 1);
        s.roll();
        assert_eq!(s.refund(100, 1), Refund::Kept);
        // the next window's spends come back, its lagging caller's do not
        s.took(100, 1);
        s.took(150, 1);
        assert_eq!(s.refund(100, 1), Refund::Kept);
        assert_eq!(s.refund(150, 1), Refund::Lease(1));
        // rolling again, a window without spends, changes nothing
        s.roll();
        let rolled = s;
        s.roll();
        assert_eq!(s, rolled);
        assert_eq!(s.refund(150, 1), Refund::Kept);
    }

    #[test]
    fn a_fallback_spend_goes_back_to_the_fallback() {
        let mut s = Spends::default();
        s.fell_back(100);
        assert_eq!(s.refund(100, 1), Refund::Fallback);
        // the lease spent before the fallback, and after it (Redis back)
        let mut s = Spends::default();
        s.took(90, 1);
        s.fell_back(100);
        s.fell_back(110);
        assert_eq!(s.refund(90, 1), Refund::Lease(1));
        assert_eq!(s.refund(105, 1), Refund::Fallback);
        s.took(120, 1);
        assert_eq!(s.refund(120, 1), Refund::Lease(1));
        // between the lease's spends: either could have spent there
        assert_eq!(s.refund(110, 1), Refund::Kept);
    }

    #[test]
    fn a_time_both_spent_at_gives_nothing_back() {
        let mut s = Spends::default();
        s.took(100, 1);
        s.fell_back(100);
        assert_eq!(s.refund(100, 1), Refund::Kept);
        // and still not once the lease's window is over
        s.roll();
        assert_eq!(s.refund(100, 1), Refund::Kept);
        // a fallback spend later than the rolled window's is the fallback's
        s.fell_back(130);
        assert_eq!(s.refund(130, 1), Refund::Fallback);
        assert_eq!(s.refund(100, 1), Refund::Kept);
    }

    #[test]
    fn the_fallback_s_record_never_grows_over_an_earlier_window_s_spends() {
        let mut s = Spends::default();
        s.fell_back(10);
        s.took(20, 1);
        s.took(30, 1);
        s.roll();
        // an outage in a later window: the record starts afresh
        s.fell_back(50);
        assert_eq!(s.refund(25, 1), Refund::Kept);
        assert_eq!(s.refund(20, 1), Refund::Kept);
        assert_eq!(s.refund(50, 1), Refund::Fallback);
        // the outage before it is forgotten: kept
        assert_eq!(s.refund(10, 1), Refund::Kept);
        // a lagging caller's fallback spend at an earlier window's time is
        // left out of the record: kept, and the record's own still go back
        s.fell_back(30);
        assert_eq!(s.refund(30, 1), Refund::Kept);
        assert_eq!(s.refund(50, 1), Refund::Fallback);
    }

    #[test]
    fn a_lagging_caller_s_fallback_spend_never_sends_an_outage_s_refund_to_the_lease() {
        let mut s = Spends::default();
        // a window of the lease, rolled
        s.took(10, 1);
        s.roll();
        // the next window's lease spends on both sides of an outage's
        // fallback spend
        s.took(20, 1);
        s.fell_back(30);
        s.took(40, 1);
        // a caller whose clock lagged spends from the fallback at a time of
        // the rolled window
        s.fell_back(5);
        // the spend at 30 was the fallback's: never the lease's to get back
        assert_eq!(s.refund(30, 1), Refund::Kept);
        // the lease's own still come back
        assert_eq!(s.refund(20, 1), Refund::Lease(1));
        assert_eq!(s.refund(40, 1), Refund::Lease(1));
    }

    #[test]
    fn a_fallback_spend_after_the_rolled_windows_grows_the_record() {
        let mut s = Spends::default();
        s.took(20, 1);
        s.roll();
        s.fell_back(40);
        s.fell_back(60);
        assert_eq!(s.refund(50, 1), Refund::Fallback);
        assert_eq!(s.refund(40, 1), Refund::Fallback);
        assert_eq!(s.refund(20, 1), Refund::Kept);
        // and one before them, still after the rolled window's
        s.fell_back(30);
        assert_eq!(s.refund(30, 1), Refund::Fallback);
        // one at or before it is left out of the record, which keeps its own
        s.fell_back(20);
        assert_eq!(s.refund(20, 1), Refund::Kept);
        assert_eq!(s.refund(40, 1), Refund::Fallback);
    }

    /// Where a spend really went, in the model of the test below.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Went {
        /// The lease of this window (counted by rolls).
        Lease(u32),
        Fallback,
    }

    #[test]
    fn no_sequence_of_spends_sends_a_refund_where_its_spend_was_not_taken() {
        // xorshift: a fixed sequence, no dependency
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut draw = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for case in 0..20_000 {
            let mut s = Spends::default();
            let mut window = 0_u32;
            let mut clock = 100_u64;
            // every spend made and not yet refunded: (time, where it went)
            let mut out: Vec<(u64, Went)> = Vec::new();
            for step in 0..40 {
                clock += draw(4);
                // now and then a caller whose clock lags
                let t = clock.saturating_sub(if draw(6) == 0 { draw(40) } else { 0 });
                match draw(10) {
                    0..=3 => {
                        s.took(t, 1);
                        out.push((t, Went::Lease(window)));
                    }
                    4 | 5 => {
                        s.fell_back(t);
                        out.push((t, Went::Fallback));
                    }
                    6 => {
                        s.roll();
                        window += 1;
                    }
                    _ if !out.is_empty() => {
                        let i = usize::try_from(draw(out.len() as u64)).unwrap();
                        let (at, went) = out.swap_remove(i);
                        let refund = s.refund(at, 1);
                        let right = match refund {
                            Refund::Lease(back) => back == 1 && went == Went::Lease(window),
                            Refund::Fallback => went == Went::Fallback,
                            Refund::Kept => true,
                        };
                        assert!(
                            right,
                            "case {case}, step {step}: a spend at {at} that went to \
                             {went:?} (window {window}) was refunded as {refund:?}"
                        );
                    }
                    _ => {}
                }
            }
        }
    }
}
