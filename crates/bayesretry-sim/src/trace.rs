//! What a run leaves behind: one record per call and the few event streams the
//! time-based metrics need.

/// The history of one call.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CallRecord {
    /// Endpoint index.
    pub endpoint: u8,
    /// Shard (S8).
    pub shard: u8,
    /// Arrival, microseconds.
    pub arrival_us: u64,
    /// When the call ended (success, or given up), microseconds.
    pub end_us: u64,
    /// Attempts made.
    pub attempts: u32,
    /// Whether an attempt succeeded.
    pub success: bool,
    /// Retries that failed.
    pub failed_retries: u32,
    /// Retries started before the server's Retry-After had expired.
    pub early_retries: u32,
    /// Whether the call ended because a breaker, throttle or budget of the
    /// client refused an attempt.
    pub refused: bool,
    /// Whether the call has finished.
    pub done: bool,
}

/// The raw outcome of one run of one policy on one environment.
#[derive(Clone, Debug, Default)]
pub struct RunLog {
    /// One record per call, by call id.
    pub calls: Vec<CallRecord>,
    /// Start time and endpoint of every retry made.
    pub retries: Vec<(u64, u8)>,
    /// Times a client-side breaker was seen open for an endpoint, at the end of
    /// an attempt (baselines) or a call (BayesRetry), with the endpoint.
    pub breaker_opens: Vec<(u64, u8)>,
    /// Start time and endpoint of every local refusal (breaker or throttle).
    pub refusals: Vec<(u64, u8)>,
    /// Sum of squared errors of the policy's predicted success probability
    /// against the outcomes of the retries it made, and their number.
    pub brier: (f64, u64),
    /// Events the executor processed.
    pub events: u64,
}

impl RunLog {
    /// A log with one empty record per call.
    pub fn new(calls: usize) -> RunLog {
        RunLog {
            calls: vec![CallRecord::default(); calls],
            ..RunLog::default()
        }
    }

    /// The record of call `id`, if it exists.
    pub fn call_mut(&mut self, id: u64) -> Option<&mut CallRecord> {
        usize::try_from(id).ok().and_then(|i| self.calls.get_mut(i))
    }
}
