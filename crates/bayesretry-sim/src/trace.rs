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
    /// client, or a server's hold on the endpoint, refused an attempt.
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
    /// an attempt (baselines) or at the arrival or end of a call (BayesRetry),
    /// with the endpoint.
    pub breaker_opens: Vec<(u64, u8)>,
    /// Start time and endpoint of every local refusal (breaker or throttle).
    pub refusals: Vec<(u64, u8)>,
    /// Sum of squared errors of the policy's predicted success probability
    /// against the outcomes of the retries it made, and their number.
    pub brier: (f64, u64),
    /// The same, per endpoint index.
    pub brier_by_endpoint: Vec<(f64, u64)>,
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

    /// Notes a prediction `p` of a retry on `endpoint` and its outcome.
    pub fn note_brier(&mut self, endpoint: u8, p: f64, success: bool) {
        let y = if success { 1.0 } else { 0.0 };
        let error = (p - y) * (p - y);
        self.brier.0 += error;
        self.brier.1 += 1;
        let at = usize::from(endpoint);
        if self.brier_by_endpoint.len() <= at {
            self.brier_by_endpoint.resize(at + 1, (0.0, 0));
        }
        if let Some(sum) = self.brier_by_endpoint.get_mut(at) {
            sum.0 += error;
            sum.1 += 1;
        }
    }

    /// The Brier sums of `endpoint`'s retries.
    pub fn brier_of(&self, endpoint: u8) -> (f64, u64) {
        self.brier_by_endpoint
            .get(usize::from(endpoint))
            .copied()
            .unwrap_or((0.0, 0))
    }

    /// The record of call `id`, if it exists.
    pub fn call_mut(&mut self, id: u64) -> Option<&mut CallRecord> {
        usize::try_from(id).ok().and_then(|i| self.calls.get_mut(i))
    }
}
