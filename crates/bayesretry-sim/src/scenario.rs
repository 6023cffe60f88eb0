//! The scenarios of the benchmark and the profile of each endpoint in them.

use serde::Serialize;

/// Microseconds in one second: the simulator's time unit is the microsecond.
pub const SECOND: u64 = 1_000_000;

/// A scenario of the specification (§3), except the retry storm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[non_exhaustive]
pub enum Scenario {
    /// The mixed stream: endpoints S1..S6 interleaved, one call in six each.
    S0,
    /// Healthy.
    S1,
    /// Transient-flaky.
    S2,
    /// Rate-limited by a server token bucket, 429 with Retry-After.
    S3,
    /// S3 without the Retry-After header.
    S3b,
    /// Hard down for the whole run.
    S4,
    /// Outage in [150 s, 300 s), then recovery.
    S5,
    /// Slow degradation over the run.
    S6,
    /// Partial failure: one endpoint, three shards, shard A down in [100 s, 400 s).
    S8,
}

/// How an endpoint behaves (§3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum Profile {
    /// S1: d = 0.005, s = 0.97; 90 % 5xx, 10 % timeouts.
    Healthy,
    /// S2: d = 0.05, s = 0.55; 60 % 5xx, 40 % timeouts.
    Flaky,
    /// S3 / S3b: token bucket (1/s, burst 5), 429s, with or without Retry-After.
    RateLimited {
        /// Whether a 429 carries Retry-After.
        header: bool,
    },
    /// S4: every attempt refused.
    HardDown,
    /// S5: healthy (d 0.01, s 0.95, 5xx) with an outage in [150 s, 300 s) (503).
    Outage,
    /// S6: d 0.01 -> 0.40 and s 0.95 -> 0.30 linearly over the run; 70 % 5xx, 30 % timeouts.
    Degrading,
    /// S8: healthy shards (S1), shard A down (503) in [100 s, 400 s).
    Sharded,
}

impl Scenario {
    /// Every scenario this crate runs, in report order.
    pub const ALL: [Scenario; 9] = [
        Scenario::S0,
        Scenario::S1,
        Scenario::S2,
        Scenario::S3,
        Scenario::S3b,
        Scenario::S4,
        Scenario::S5,
        Scenario::S6,
        Scenario::S8,
    ];

    /// The scenario's id, as in the specification.
    pub const fn id(self) -> &'static str {
        match self {
            Scenario::S0 => "S0",
            Scenario::S1 => "S1",
            Scenario::S2 => "S2",
            Scenario::S3 => "S3",
            Scenario::S3b => "S3b",
            Scenario::S4 => "S4",
            Scenario::S5 => "S5",
            Scenario::S6 => "S6",
            Scenario::S8 => "S8",
        }
    }

    /// Parses an id (case-insensitive).
    pub fn parse(id: &str) -> Option<Scenario> {
        Scenario::ALL
            .into_iter()
            .find(|s| s.id().eq_ignore_ascii_case(id))
    }

    /// The number that keys the scenario's luck.
    pub const fn code(self) -> u64 {
        match self {
            Scenario::S0 => 100,
            Scenario::S1 => 101,
            Scenario::S2 => 102,
            Scenario::S3 => 103,
            Scenario::S3b => 113,
            Scenario::S4 => 104,
            Scenario::S5 => 105,
            Scenario::S6 => 106,
            Scenario::S8 => 108,
        }
    }

    /// The endpoints, as (name, profile); a call goes to endpoint `id % len`.
    pub fn endpoints(self) -> &'static [(&'static str, Profile)] {
        const MIXED: [(&str, Profile); 6] = [
            ("S1", Profile::Healthy),
            ("S2", Profile::Flaky),
            ("S3", Profile::RateLimited { header: true }),
            ("S4", Profile::HardDown),
            ("S5", Profile::Outage),
            ("S6", Profile::Degrading),
        ];
        match self {
            Scenario::S0 => &MIXED,
            Scenario::S1 => &[("S1", Profile::Healthy)],
            Scenario::S2 => &[("S2", Profile::Flaky)],
            Scenario::S3 => &[("S3", Profile::RateLimited { header: true })],
            Scenario::S3b => &[("S3b", Profile::RateLimited { header: false })],
            Scenario::S4 => &[("S4", Profile::HardDown)],
            Scenario::S5 => &[("S5", Profile::Outage)],
            Scenario::S6 => &[("S6", Profile::Degrading)],
            Scenario::S8 => &[("S8", Profile::Sharded)],
        }
    }

    /// Calls in the run.
    pub const fn calls(self) -> u64 {
        6_000
    }

    /// Mean arrival rate, calls per second.
    pub const fn rate(self) -> f64 {
        10.0
    }

    /// The nominal length of the run (calls / rate), in microseconds: the
    /// clock of the time-varying profiles.
    pub const fn horizon_us(self) -> u64 {
        600 * SECOND
    }
}

/// An outage window [start, end) in microseconds.
pub(crate) const S5_OUTAGE: (u64, u64) = (150 * SECOND, 300 * SECOND);
/// Shard A's outage in S8.
pub(crate) const S8_OUTAGE: (u64, u64) = (100 * SECOND, 400 * SECOND);
/// The shard that fails in S8.
pub(crate) const S8_DOWN_SHARD: u8 = 0;

impl Profile {
    /// d(t): the probability that a call arriving at `t_us` is doomed, outside
    /// any outage.
    pub(crate) fn doom(self, t_us: u64, horizon_us: u64) -> f64 {
        match self {
            Profile::Healthy | Profile::Sharded => 0.005,
            Profile::Flaky => 0.05,
            Profile::RateLimited { .. } => 0.0,
            Profile::HardDown => 1.0,
            Profile::Outage => 0.01,
            Profile::Degrading => 0.01 + 0.39 * fraction(t_us, horizon_us),
        }
    }

    /// s(t): the probability that an attempt of a call that is not doomed
    /// succeeds at `t_us`, outside any outage.
    pub(crate) fn success(self, t_us: u64, horizon_us: u64) -> f64 {
        match self {
            Profile::Healthy | Profile::Sharded => 0.97,
            Profile::Flaky => 0.55,
            Profile::RateLimited { .. } => 0.95,
            Profile::HardDown => 0.0,
            Profile::Outage => 0.95,
            Profile::Degrading => 0.95 - 0.65 * fraction(t_us, horizon_us),
        }
    }

    /// Whether an attempt at `t_us` to `shard` falls in an outage (every attempt fails).
    pub(crate) fn in_outage(self, t_us: u64, shard: u8) -> bool {
        match self {
            Profile::Outage => (S5_OUTAGE.0..S5_OUTAGE.1).contains(&t_us),
            Profile::Sharded => {
                shard == S8_DOWN_SHARD && (S8_OUTAGE.0..S8_OUTAGE.1).contains(&t_us)
            }
            _ => false,
        }
    }

    /// The share of failures that are 5xx (the rest are timeouts).
    pub(crate) fn share_5xx(self) -> f64 {
        match self {
            Profile::Healthy | Profile::Sharded => 0.9,
            Profile::Flaky => 0.6,
            Profile::Degrading => 0.7,
            Profile::RateLimited { .. } | Profile::HardDown | Profile::Outage => 1.0,
        }
    }
}

/// `t / horizon`, clamped to [0, 1].
fn fraction(t_us: u64, horizon_us: u64) -> f64 {
    if horizon_us == 0 {
        return 0.0;
    }
    let f = t_us as f64 / horizon_us as f64;
    f.clamp(0.0, 1.0)
}
