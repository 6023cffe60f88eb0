//! [`Reconnect`]: when the sync task may try Redis again after failing to
//! reach it.

use core::time::Duration;

/// The reconnect backoff of one fleet: a plain state machine told the time
/// (the fleet's clock), with its own seeded jitter.
///
/// While Redis is away, a fleet whose every process tried again at every
/// interval would have each one connect once an interval for the whole
/// outage, and all of them within one interval of Redis coming back: a
/// Redis just restarted, or failed over, takes every replica's connection,
/// script loads and full pushes at once. So after a failed attempt the
/// next waits:
///
/// - the first retry comes at the next round: a blip (a connection cut, a
///   failover of a second) heals in one interval, as before;
/// - from the second failure in a row, each retry waits
///   `initial · 2^(failures − 2)`, capped at `max`, less a random part of up
///   to half of it (a wait is drawn from `[d / 2, d]`): processes that lost
///   Redis together drift apart, and come back spread over half the cap
///   rather than in one instant.
///
/// A round that reaches Redis ends the backoff. Times are read on the
/// fleet's clock; a clock found behind the failure it waits from (set
/// back) ends the wait, rather than let it last as long as the clock was
/// set back.
#[derive(Debug, Clone)]
pub(crate) struct Reconnect {
    initial_ms: u64,
    max_ms: u64,
    /// Failed attempts since the last round that reached Redis.
    failures: u32,
    /// When the last of them failed.
    failed_at_ms: u64,
    /// How long after it the next attempt waits.
    wait_ms: u64,
    /// The jitter's state (splitmix64).
    state: u64,
}

impl Reconnect {
    /// A backoff from `initial` up to `max`, its jitter drawn from `seed`.
    pub(crate) fn new(initial: Duration, max: Duration, seed: u64) -> Reconnect {
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        Reconnect {
            initial_ms: ms(initial),
            max_ms: ms(max),
            failures: 0,
            failed_at_ms: 0,
            wait_ms: 0,
            state: seed,
        }
    }

    /// Whether an attempt may be made at `now_ms`.
    pub(crate) fn due(&self, now_ms: u64) -> bool {
        self.failures == 0
            || now_ms < self.failed_at_ms
            || now_ms >= self.failed_at_ms.saturating_add(self.wait_ms)
    }

    /// When the next attempt may be made: `None` when it may be now, or at
    /// any round.
    pub(crate) fn next_ms(&self) -> Option<u64> {
        (self.failures > 0 && self.wait_ms > 0)
            .then(|| self.failed_at_ms.saturating_add(self.wait_ms))
    }

    /// An attempt failed at `now_ms`: the next waits longer.
    pub(crate) fn failed(&mut self, now_ms: u64) {
        self.failures = self.failures.saturating_add(1);
        self.failed_at_ms = now_ms;
        self.wait_ms = if self.failures < 2 {
            0
        } else {
            // `initial · 2^(failures − 2)`, capped: the shift stops at 63
            let doublings = (self.failures - 2).min(63);
            let full = self
                .initial_ms
                .saturating_mul(1 << doublings)
                .min(self.max_ms);
            let half = full / 2;
            // a draw from every ms of `[half, full]`
            let span = full - half;
            half + self.draw() % span.saturating_add(1)
        };
    }

    /// A round reached Redis: the next failure retries at the next round.
    pub(crate) fn reached(&mut self) {
        self.failures = 0;
        self.wait_ms = 0;
    }

    /// The next jitter draw (splitmix64).
    fn draw(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn the_first_retry_waits_for_nothing_but_the_next_round() {
        let mut backoff = Reconnect::new(2 * SECOND, 30 * SECOND, 7);
        assert!(backoff.due(0));
        backoff.failed(1_000);
        assert!(backoff.due(1_000));
        assert_eq!(backoff.next_ms(), None);
    }

    #[test]
    fn each_wait_is_drawn_between_half_and_all_of_a_doubling_capped_delay() {
        for seed in 0..200 {
            let mut backoff = Reconnect::new(2 * SECOND, 30 * SECOND, seed);
            let mut now = 1_000_000;
            backoff.failed(now);
            for failures in 2..40_u32 {
                backoff.failed(now);
                let full = (2_000_u64 << (failures - 2).min(20)).min(30_000);
                let next = backoff.next_ms().unwrap();
                assert!(
                    (now + full / 2..=now + full).contains(&next),
                    "seed {seed}, failure {failures}: {next} - {now} outside [{}, {full}]",
                    full / 2
                );
                assert!(!backoff.due(next - 1));
                assert!(backoff.due(next));
                now = next;
            }
        }
    }

    #[test]
    fn processes_that_failed_together_retry_apart() {
        let nexts: std::collections::HashSet<u64> = (0..20)
            .map(|seed| {
                let mut backoff = Reconnect::new(2 * SECOND, 30 * SECOND, seed);
                for _ in 0..10 {
                    backoff.failed(1_000_000);
                }
                backoff.next_ms().unwrap()
            })
            .collect();
        assert!(nexts.len() >= 15, "{nexts:?}");
    }

    #[test]
    fn a_round_that_reaches_redis_ends_the_backoff() {
        let mut backoff = Reconnect::new(2 * SECOND, 30 * SECOND, 1);
        for _ in 0..10 {
            backoff.failed(1_000_000);
        }
        assert!(!backoff.due(1_000_001));
        backoff.reached();
        assert!(backoff.due(1_000_001));
        backoff.failed(1_000_002);
        assert!(backoff.due(1_000_002), "the first retry again");
    }

    #[test]
    fn a_clock_set_back_ends_the_wait() {
        let mut backoff = Reconnect::new(2 * SECOND, 30 * SECOND, 1);
        for _ in 0..10 {
            backoff.failed(1_000_000);
        }
        assert!(!backoff.due(1_000_000));
        assert!(backoff.due(999_999));
    }

    #[test]
    fn a_zero_backoff_tries_at_every_round_and_huge_ones_do_not_overflow() {
        let mut off = Reconnect::new(Duration::ZERO, Duration::ZERO, 3);
        let mut huge = Reconnect::new(Duration::MAX, Duration::MAX, 3);
        for _ in 0..200 {
            off.failed(u64::MAX - 1);
            huge.failed(u64::MAX - 1);
            assert!(off.due(u64::MAX - 1));
        }
        assert_eq!(huge.next_ms(), Some(u64::MAX));
    }
}
