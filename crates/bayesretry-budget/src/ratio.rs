//! The ratio budget of Finagle and tower: over a sliding window of `ttl`, retries
//! may be at most `percent` of first attempts, plus a floor of `min_per_sec`
//! retries per second.
//!
//! # State
//!
//! The window is a ring of [`BUCKETS`] buckets of `ttl / BUCKETS` each. Every bucket
//! has two 64-bit words, one counting first attempts (deposits) and one counting
//! retry cost (withdrawals); each word carries, beside its 24-bit count, the low 40
//! bits of the bucket index it counts for, so a word is valid or stale on its own and
//! no thread ever has to sweep the ring. A writer that finds its slot holding an older
//! bucket starts it afresh in the same compare-and-swap that adds its count.
//!
//! # Why a spend cannot overspend
//!
//! Checking "withdrawals in the window ≤ allowance" reads ten buckets, and no
//! compare-and-swap spans ten words. So a spend *reserves first and checks after*:
//!
//! 1. add the cost to the current bucket's withdrawals (one compare-and-swap);
//! 2. read every bucket, the reservation included; if another spend has reserved
//!    in a newer bucket, take the reservation back and go to 1 with that bucket;
//! 3. compare with the allowance; if it does not fit, take the reservation back
//!    and refuse.
//!
//! Every write and read is sequentially consistent, so of any two spends the one
//! that reserved second reads the other's reservation in step 2. The last spend to
//! reserve within a window therefore sees every granted spend of that window, and it
//! was granted only if all of them fit: the allowance can never be exceeded. The price
//! is a rare false refusal, when a spend that is about to be taken back is still
//! counted by another; a refusal is the safe error for a budget.
//!
//! Step 2 is what keeps a window whole when clocks disagree. A spend in a newer
//! bucket starts its slot afresh, and so wipes the withdrawals of the bucket ten
//! before it, the oldest of the window that ends just before it. A spend whose
//! clock lags by that boundary would be judged on that window with the deposits of
//! its oldest bucket but without their withdrawals; instead it sees the newer
//! reservation and is charged to the newer bucket, judged on the window that ends
//! there. A window is thus closed to new spends as soon as any spend has reserved
//! past it.
//!
//! Counts saturate at 2²⁴ − 1 per bucket: a deposit beyond it is not counted and a
//! withdrawal beyond it is refused, both on the strict side. The 40-bit bucket tags
//! wrap after 2⁴⁰ buckets, over three thousand years of the shortest bucket.

use core::cell::Cell;
#[cfg(feature = "std")]
use core::sync::atomic::AtomicU64;

use crate::denied::Denied;
use crate::error::Error;
use crate::word::{MAX_CAS_ATTEMPTS, Word};

/// How many buckets the sliding window is cut into: the window moves in steps of
/// `ttl / BUCKETS`.
pub const BUCKETS: usize = 10;

const BUCKETS_U64: u64 = BUCKETS as u64;
const COUNT_BITS: u32 = 24;
const COUNT_MAX: u64 = (1 << COUNT_BITS) - 1;
const TAG_BITS: u32 = 64 - COUNT_BITS;
const TAG_MASK: u64 = (1 << TAG_BITS) - 1;
const TAG_HALF: u64 = 1 << (TAG_BITS - 1);
/// Allowances are kept in millionths of a retry, so a percentage needs no floats at
/// run time.
const PPM: u64 = 1_000_000;
/// How many times one spend moves on to a newer bucket that other spends reserved
/// in under it before it gives up (fails closed, as contended). One move is all a
/// spend needs unless the window keeps moving under it.
const MAX_MOVES: u32 = 4;

/// The configuration of a ratio budget: a [`Clone`] value built with `with_*`
/// setters and checked by [`build`](RatioConfig::build).
///
/// # Default
///
/// The defaults of Finagle's and tower's budgets:
///
/// - `percent`: 20 (retries may add a fifth to the load)
/// - `ttl_ms`: 10 000 (ten seconds of history)
/// - `min_per_sec`: 10 (retries always allowed at ten per second)
///
/// ```
/// use bayesretry_budget::{Error, RatioConfig};
/// let rules = RatioConfig::new().with_percent(10.0).build().unwrap();
/// assert_eq!(rules.percent(), 10.0);
/// assert_eq!(
///     RatioConfig::new().with_percent(f64::NAN).build().unwrap_err().to_string(),
///     "percent must be between 0 and 1000, got NaN"
/// );
/// assert_eq!(RatioConfig::new().with_ttl_ms(10).build(), Err(Error::InvalidTtl(10)));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct RatioConfig {
    percent: f64,
    ttl_ms: u64,
    min_per_sec: u32,
}

impl RatioConfig {
    /// The largest `percent`: ten retries per first attempt.
    pub const MAX_PERCENT: f64 = 1000.0;
    /// The shortest `ttl_ms`, one second.
    pub const MIN_TTL_MS: u64 = 1_000;
    /// The longest `ttl_ms`, one minute.
    pub const MAX_TTL_MS: u64 = 60_000;

    /// The defaults listed above.
    pub const fn new() -> RatioConfig {
        RatioConfig {
            percent: 20.0,
            ttl_ms: 10_000,
            min_per_sec: 10,
        }
    }

    /// Retries allowed per 100 first attempts in the window, between 0 and
    /// [`MAX_PERCENT`](Self::MAX_PERCENT); fractions are kept to a millionth of a
    /// retry.
    pub const fn with_percent(self, percent: f64) -> Self {
        RatioConfig { percent, ..self }
    }

    /// How long a first attempt keeps paying for retries, in milliseconds, between
    /// [`MIN_TTL_MS`](Self::MIN_TTL_MS) and [`MAX_TTL_MS`](Self::MAX_TTL_MS). The
    /// window slides in steps of `ttl_ms / 10`, rounded down to whole milliseconds.
    pub const fn with_ttl_ms(self, ttl_ms: u64) -> Self {
        RatioConfig { ttl_ms, ..self }
    }

    /// Retries per second allowed whatever the traffic: a window always holds
    /// `min_per_sec × ttl` seconds of retries on top of its percentage. Zero turns
    /// the floor off.
    pub const fn with_min_per_sec(self, min_per_sec: u32) -> Self {
        RatioConfig {
            min_per_sec,
            ..self
        }
    }

    /// Checks the configuration and returns the rules the budgets run on.
    pub fn build(self) -> Result<Ratio, Error> {
        if !(self.percent >= 0.0 && self.percent <= Self::MAX_PERCENT) {
            return Err(Error::InvalidPercent(self.percent));
        }
        if !(Self::MIN_TTL_MS..=Self::MAX_TTL_MS).contains(&self.ttl_ms) {
            return Err(Error::InvalidTtl(self.ttl_ms));
        }
        let bucket_ms = self.ttl_ms / BUCKETS_U64;
        // percent / 100 of a retry per deposit, in millionths; at most 1e7, exact
        // below 2^53, and rounded to nearest (the value is non-negative).
        let deposit_ppm = (self.percent * 10_000.0 + 0.5) as u64;
        // min_per_sec × ttl in seconds, in millionths: at most ~2.6e17.
        let reserve_ppm = u64::from(self.min_per_sec) * bucket_ms * BUCKETS_U64 * 1_000;
        Ok(Ratio {
            percent: self.percent,
            min_per_sec: self.min_per_sec,
            bucket_ms,
            deposit_ppm,
            reserve_ppm,
        })
    }
}

impl Default for RatioConfig {
    fn default() -> Self {
        Self::new()
    }
}

/// The checked rules of a ratio budget, from [`RatioConfig::build`]: `Copy`, and
/// shared by the state that follows them ([`RatioLedger`], and with `std`
/// `RatioBudget`).
///
/// # The window
///
/// Time is cut into buckets of `ttl / 10`. A spend at `now_ms` is judged on the
/// window of the ten buckets that end with the one holding `now_ms`, so the window
/// reaches between nine and ten buckets back: the deposits and withdrawals of the
/// last `ttl`, give or take one bucket. A spend is granted when the window's retry
/// cost, this one included, is at most [`allowance`](Ratio::allowance) of its
/// deposits. Withdrawals stay in the window as long as deposits do, so a window can
/// end up holding more retries than its remaining deposits pay for (the deposits
/// that paid for them left first); then nothing more is granted until it rolls on.
///
/// # Why a shared budget never exceeds the allowance
///
/// Checking the allowance reads ten buckets, and no compare-and-swap spans ten
/// words. So a spend *reserves first and checks after*: it adds its cost to its
/// bucket's withdrawals (one compare-and-swap), then reads every bucket, its own
/// reservation included, and takes the reservation back if the total does not
/// fit. Every write and read is sequentially consistent, so of any two spends the
/// one that reserved second reads the other's reservation. The last spend to reserve
/// within a window therefore sees every spend granted in it, and was granted only if
/// all of them fit. The price is a rare false refusal, when a reservation that is
/// about to be taken back is still counted by another spend: for a budget, the safe
/// error.
///
/// A spend whose clock reads an older bucket than another spend's reservation is
/// charged to the newer bucket and judged on the window ending there: a window
/// takes no new spends once a spend has reserved past it, so a clock that lags
/// another thread's (or a single owner's clock stepped back) cannot be granted the
/// room of a window already closed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ratio {
    percent: f64,
    min_per_sec: u32,
    bucket_ms: u64,
    deposit_ppm: u64,
    reserve_ppm: u64,
}

impl Ratio {
    /// Retries allowed per 100 first attempts in the window.
    pub const fn percent(&self) -> f64 {
        self.percent
    }

    /// The floor, in retries per second.
    pub const fn min_per_sec(&self) -> u32 {
        self.min_per_sec
    }

    /// The length of one bucket, `ttl_ms / 10` rounded down.
    pub const fn bucket_ms(&self) -> u64 {
        self.bucket_ms
    }

    /// The window length actually used: ten buckets.
    pub const fn ttl_ms(&self) -> u64 {
        self.bucket_ms * BUCKETS_U64
    }

    /// The allowance in whole retries for a window holding `deposits` first
    /// attempts: `percent / 100 × deposits + min_per_sec × ttl`, rounded down.
    pub const fn allowance(&self, deposits: u64) -> u64 {
        self.allowance_ppm(deposits) / PPM
    }

    const fn allowance_ppm(&self, deposits: u64) -> u64 {
        deposits
            .saturating_mul(self.deposit_ppm)
            .saturating_add(self.reserve_ppm)
    }

    const fn next_bucket_ms(&self, bucket: u64) -> u64 {
        bucket.saturating_add(1).saturating_mul(self.bucket_ms)
    }

    fn try_spend_in<W: Word>(&self, ring: &Ring<W>, now_ms: u64, cost: u32) -> Result<(), Denied> {
        if cost == 0 {
            return Ok(());
        }
        let cost = u64::from(cost);
        if cost > COUNT_MAX {
            return Err(Denied::oversized());
        }
        let mut bucket = now_ms / self.bucket_ms;
        for _ in 0..MAX_MOVES {
            let charged = self.reserve(ring, bucket, cost)?;
            let tally = ring.tally(charged);
            if tally.newest != charged {
                // Another spend has reserved in a newer bucket: the window ending
                // at `charged` is closed, and its oldest bucket's withdrawals may
                // be wiped already. Move to the newer bucket.
                ring.take_back(charged, cost);
                bucket = tally.newest;
                continue;
            }
            if tally.withdrawals.saturating_mul(PPM) <= self.allowance_ppm(tally.deposits) {
                return Ok(());
            }
            ring.take_back(charged, cost);
            return Err(Denied::exhausted(self.next_bucket_ms(charged)));
        }
        // Newer buckets kept appearing under this spend: fail closed.
        Err(Denied::contended())
    }

    /// Adds `cost` to the withdrawals of `bucket`'s slot, and returns the bucket it
    /// was charged to: `bucket`, or a newer one found in its slot.
    fn reserve<W: Word>(&self, ring: &Ring<W>, bucket: u64, cost: u64) -> Result<u64, Denied> {
        let word = &ring.withdrawals[slot(bucket)];
        let mut current = word.get();
        for _ in 0..MAX_CAS_ATTEMPTS {
            let (charged, count) = resolve(current, bucket);
            let total = count + cost;
            if total > COUNT_MAX {
                return Err(Denied::exhausted(self.next_bucket_ms(charged)));
            }
            match word.replace(current, pack(charged, total)) {
                Ok(()) => return Ok(charged),
                Err(seen) => current = seen,
            }
        }
        Err(Denied::contended())
    }

    /// Takes `cost` back from the withdrawals of the bucket holding `spent_at_ms`,
    /// while its slot still holds that bucket; once the slot has moved on, the
    /// spend has left every window a later spend is judged on.
    ///
    /// A spend charged to a newer bucket than its own (its clock lagged another
    /// spend's) is taken back from its own bucket's count instead. That is never
    /// looser: every window holding the newer bucket and still open to spends
    /// holds the older one too (a window ending between them is closed by the
    /// newer reservation), so it counts the same total, and a later window that
    /// holds only the newer bucket still counts the spend.
    fn refund_in<W: Word>(&self, ring: &Ring<W>, spent_at_ms: u64, cost: u32) {
        if cost == 0 {
            return;
        }
        ring.take_back(spent_at_ms / self.bucket_ms, u64::from(cost));
    }

    fn deposit_in<W: Word>(&self, ring: &Ring<W>, now_ms: u64) {
        let bucket = now_ms / self.bucket_ms;
        let word = &ring.deposits[slot(bucket)];
        let mut current = word.get();
        for _ in 0..MAX_CAS_ATTEMPTS {
            let (charged, count) = resolve(current, bucket);
            if count >= COUNT_MAX {
                return;
            }
            match word.replace(current, pack(charged, count + 1)) {
                Ok(()) => return,
                Err(seen) => current = seen,
            }
        }
        // Contended past the cap: the deposit is dropped, which only makes the
        // budget stricter.
    }

    fn balance_in<W: Word>(&self, ring: &Ring<W>, now_ms: u64) -> i64 {
        // judged as a spend would be: on the window ending at the newest bucket
        // a spend has reserved in, if that is newer than `now_ms`'s
        let mut tally = ring.tally(now_ms / self.bucket_ms);
        if tally.newest != now_ms / self.bucket_ms {
            tally = ring.tally(tally.newest);
        }
        let allowance = i64::try_from(self.allowance(tally.deposits)).unwrap_or(i64::MAX);
        allowance.saturating_sub(i64::try_from(tally.withdrawals).unwrap_or(i64::MAX))
    }
}

/// The index of the slot that holds `bucket`.
#[inline]
fn slot(bucket: u64) -> usize {
    (bucket % BUCKETS_U64) as usize
}

#[inline]
fn pack(bucket: u64, count: u64) -> u64 {
    ((bucket & TAG_MASK) << COUNT_BITS) | count
}

/// How many buckets `bucket` is past the bucket tagged in `word`: negative when the
/// word is newer. Computed modulo 2⁴⁰, in (−2³⁹, 2³⁹].
#[inline]
fn age(word: u64, bucket: u64) -> i64 {
    let tag = word >> COUNT_BITS;
    let ahead = bucket.wrapping_sub(tag) & TAG_MASK;
    if ahead > TAG_HALF {
        ahead as i64 - (1_i64 << TAG_BITS)
    } else {
        ahead as i64
    }
}

/// The bucket a writer at `bucket` counts into, and the count already there, given
/// the `word` in its slot: a stale word starts afresh, and a newer one (the writer's
/// clock lags another thread's by a whole window) is joined rather than undone.
#[inline]
fn resolve(word: u64, bucket: u64) -> (u64, u64) {
    let age = age(word, bucket);
    if age > 0 {
        (bucket, 0)
    } else {
        (bucket.wrapping_sub(age as u64), word & COUNT_MAX)
    }
}

/// What a spend is judged on: the window's deposits and withdrawals, and the
/// newest bucket holding withdrawals (the window's own last bucket unless a spend
/// has reserved in a newer one).
#[derive(Clone, Copy, Debug)]
struct Tally {
    deposits: u64,
    withdrawals: u64,
    newest: u64,
}

/// The ring of buckets: deposit and withdrawal words, one pair per slot.
#[derive(Debug)]
struct Ring<W> {
    deposits: [W; BUCKETS],
    withdrawals: [W; BUCKETS],
}

impl<W: Word> Ring<W> {
    /// Deposits and withdrawals in the window that ends with `bucket`, and the
    /// newest bucket holding withdrawals.
    ///
    /// A deposit counts only if its bucket is in the window. A withdrawal counts if
    /// its bucket is in the window *or newer*: a reservation made by a thread whose
    /// clock is ahead is still a reservation, and counting it can only refuse more.
    fn tally(&self, bucket: u64) -> Tally {
        // The tag sits in the top bits, so "the tag is one of the window's buckets"
        // is one wrapping subtraction and one comparison of whole words: a word is in
        // the window when it lies at most BUCKETS buckets' worth above the oldest
        // bucket's empty word. The subtraction wraps exactly like the 40-bit tags.
        let oldest = pack(bucket.wrapping_sub(BUCKETS_U64 - 1), 0);
        let window = BUCKETS_U64 << COUNT_BITS;
        let window_or_newer = (TAG_HALF + BUCKETS_U64) << COUNT_BITS;
        let mut deposits = 0;
        let mut withdrawals = 0;
        // the newest withdrawals' bucket, in buckets past the oldest of the window
        let mut newest = BUCKETS_U64 - 1;
        for (d, w) in self.deposits.iter().zip(&self.withdrawals) {
            let d = d.get();
            if d.wrapping_sub(oldest) < window {
                deposits += d & COUNT_MAX;
            }
            let past_oldest = w.get().wrapping_sub(oldest);
            if past_oldest < window_or_newer {
                withdrawals += past_oldest & COUNT_MAX;
                newest = newest.max(past_oldest >> COUNT_BITS);
            }
        }
        Tally {
            deposits,
            withdrawals,
            newest: bucket.saturating_add(newest - (BUCKETS_U64 - 1)),
        }
    }

    /// Takes back a reservation of `cost` made in `bucket`, unless its slot has moved
    /// on to a newer bucket (then the reservation left with the old one). If every
    /// attempt is contended the reservation stays: the strict side again.
    fn take_back(&self, bucket: u64, cost: u64) {
        let word = &self.withdrawals[slot(bucket)];
        let tag = bucket & TAG_MASK;
        let mut current = word.get();
        for _ in 0..MAX_CAS_ATTEMPTS {
            if current >> COUNT_BITS != tag {
                return;
            }
            let count = (current & COUNT_MAX).saturating_sub(cost);
            match word.replace(current, pack(bucket, count)) {
                Ok(()) => return,
                Err(seen) => current = seen,
            }
        }
    }
}

/// A ratio budget owned by one caller: `&mut self`, no atomics, for single-threaded
/// and `no_std` use. `RatioBudget` is the shared form.
///
/// ```
/// use bayesretry_budget::{RatioConfig, RatioLedger};
/// // 50 % of first attempts, no floor.
/// let rules = RatioConfig::new().with_percent(50.0).with_min_per_sec(0).build().unwrap();
/// let mut ledger = RatioLedger::new(rules);
/// assert!(ledger.try_spend(0, 1).is_err()); // nothing deposited yet
/// for _ in 0..4 {
///     ledger.deposit(0);
/// }
/// assert!(ledger.try_spend(0, 1).is_ok());
/// assert!(ledger.try_spend(0, 1).is_ok());
/// assert!(ledger.try_spend(0, 1).is_err()); // 2 retries for 4 first attempts
/// assert!(ledger.try_spend(10_000, 1).is_err()); // the deposits have left the window
/// ```
#[derive(Debug)]
pub struct RatioLedger {
    rules: Ratio,
    ring: Ring<Cell<u64>>,
}

impl RatioLedger {
    /// A ledger with nothing deposited or spent.
    pub const fn new(rules: Ratio) -> RatioLedger {
        RatioLedger {
            rules,
            ring: Ring {
                deposits: [const { Cell::new(0) }; BUCKETS],
                withdrawals: [const { Cell::new(0) }; BUCKETS],
            },
        }
    }

    /// The rules this ledger follows.
    pub const fn rules(&self) -> &Ratio {
        &self.rules
    }

    /// Spends `cost` retries at `now_ms` if the window's allowance covers them; see
    /// [`crate::Budget::try_spend`].
    pub fn try_spend(&mut self, now_ms: u64, cost: u32) -> Result<(), Denied> {
        self.rules.try_spend_in(&self.ring, now_ms, cost)
    }

    /// Records one first attempt at `now_ms`.
    pub fn deposit(&mut self, now_ms: u64) {
        self.rules.deposit_in(&self.ring, now_ms);
    }

    /// Gives back `cost` retries of a spend granted at `spent_at_ms` whose retry
    /// was not made; see [`crate::Budget::refund`]. Nothing is given back once the
    /// spend's bucket has left the window.
    pub fn refund(&mut self, spent_at_ms: u64, cost: u32) {
        self.rules.refund_in(&self.ring, spent_at_ms, cost);
    }

    /// Whole retries still affordable at `now_ms`: the window's allowance less its
    /// withdrawals. Negative when retries made earlier in the window have outlived the
    /// deposits that paid for them (those left the window first); a spend is granted
    /// only if the balance stays at or above zero.
    pub fn balance(&self, now_ms: u64) -> i64 {
        self.rules.balance_in(&self.ring, now_ms)
    }
}

/// A ratio budget shared by every thread: `&self`, `Send + Sync`, lock-free.
///
/// Twenty `AtomicU64`s: a spend is one compare-and-swap to reserve, twenty loads to
/// check, and a second compare-and-swap only when it is refused; a deposit is one
/// compare-and-swap. See the [crate documentation](crate) for the design and why
/// it is never overspent.
///
/// ```
/// use bayesretry_budget::{Budget, RatioBudget, RatioConfig};
/// let budget = RatioBudget::new(RatioConfig::new().build().unwrap());
/// // The floor alone: 10 retries/s over 10 s.
/// let granted = (0..1_000).filter(|_| budget.try_spend(0, 1).is_ok()).count();
/// assert_eq!(granted, 100);
/// ```
#[cfg(feature = "std")]
#[derive(Debug)]
pub struct RatioBudget {
    rules: Ratio,
    ring: Ring<AtomicU64>,
}

#[cfg(feature = "std")]
impl RatioBudget {
    /// A budget with nothing deposited or spent.
    pub const fn new(rules: Ratio) -> RatioBudget {
        RatioBudget {
            rules,
            ring: Ring {
                deposits: [const { AtomicU64::new(0) }; BUCKETS],
                withdrawals: [const { AtomicU64::new(0) }; BUCKETS],
            },
        }
    }

    /// The rules this budget follows.
    pub const fn rules(&self) -> &Ratio {
        &self.rules
    }

    /// Spends `cost` retries at `now_ms` if the window's allowance covers them; see
    /// [`crate::Budget::try_spend`].
    #[inline]
    pub fn try_spend(&self, now_ms: u64, cost: u32) -> Result<(), Denied> {
        self.rules.try_spend_in(&self.ring, now_ms, cost)
    }

    /// Records one first attempt at `now_ms`.
    #[inline]
    pub fn deposit(&self, now_ms: u64) {
        self.rules.deposit_in(&self.ring, now_ms);
    }

    /// Gives back `cost` retries of a spend granted at `spent_at_ms` whose retry
    /// was not made; see [`crate::Budget::refund`]. Nothing is given back once the
    /// spend's bucket has left the window.
    #[inline]
    pub fn refund(&self, spent_at_ms: u64, cost: u32) {
        self.rules.refund_in(&self.ring, spent_at_ms, cost);
    }

    /// Whole retries still affordable at `now_ms`; see [`RatioLedger::balance`]. A
    /// snapshot: other threads may change it the next moment.
    pub fn balance(&self, now_ms: u64) -> i64 {
        self.rules.balance_in(&self.ring, now_ms)
    }
}

#[cfg(feature = "std")]
impl crate::Budget for RatioBudget {
    #[inline]
    fn try_spend(&self, now_ms: u64, cost: u32) -> Result<(), Denied> {
        RatioBudget::try_spend(self, now_ms, cost)
    }

    #[inline]
    fn deposit(&self, now_ms: u64) {
        RatioBudget::deposit(self, now_ms);
    }

    #[inline]
    fn refund(&self, spent_at_ms: u64, cost: u32) {
        RatioBudget::refund(self, spent_at_ms, cost);
    }
}

#[cfg(test)]
mod tests {
    use super::{COUNT_MAX, TAG_MASK, age, pack, resolve};

    #[test]
    fn age_is_signed_and_wraps_at_40_bits() {
        assert_eq!(age(pack(5, 1), 7), 2);
        assert_eq!(age(pack(7, 1), 5), -2);
        assert_eq!(age(pack(TAG_MASK, 1), TAG_MASK + 3), 3);
        assert_eq!(age(0, 0), 0);
    }

    #[test]
    fn a_stale_word_restarts_and_a_newer_one_is_joined() {
        assert_eq!(resolve(pack(3, 9), 13), (13, 0));
        assert_eq!(resolve(pack(13, 9), 13), (13, 9));
        assert_eq!(resolve(pack(23, 9), 13), (23, 9));
        assert_eq!(pack(1, COUNT_MAX) & COUNT_MAX, COUNT_MAX);
    }
}
