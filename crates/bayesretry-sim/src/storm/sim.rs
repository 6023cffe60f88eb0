//! The storm's event loop: Poisson calls from a set of clients, a server of
//! finite capacity, client timeouts, and a retry policy per client.
//!
//! Timed-out work is not cancelled: the server still spends its time on an
//! attempt whose client has given up on it, which is what turns a burst of
//! timeouts into a storm.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use bayesretry_store::ErrorClass;

use crate::anchors::queue::EventQueue;
use crate::anchors::rng;
use crate::storm::policy::{self, CallPolicy, ClientPolicy, PolicyId};

/// Key purposes of the environment's draws.
const ARRIVAL: u64 = 1;
const THIN: u64 = 2;
const SERVICE: u64 = 3;
const NET_OUT: u64 = 4;
const NET_BACK: u64 = 5;

/// The server.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum ServerModel {
    /// S7a: every request is served at once, in `base + per_request × in flight`
    /// seconds (in flight counted when it arrives, itself included).
    Latency {
        /// Seconds at no load.
        base_s: f64,
        /// Seconds added per request in flight.
        per_request_s: f64,
    },
    /// S7b: `workers` workers and an unbounded FIFO queue; service times are
    /// Exp(`mean_service_s`), divided by `drop_fraction` for services that start
    /// while the capacity is down.
    Workers {
        /// Workers.
        workers: u32,
        /// Mean service time at full capacity.
        mean_service_s: f64,
        /// The fraction of capacity left during the drop.
        drop_fraction: f64,
        /// When the drop starts.
        drop_start_s: f64,
        /// How long it lasts.
        drop_duration_s: f64,
    },
}

/// One run's setting.
#[derive(Clone, Debug)]
pub(crate) struct Setting {
    /// A scenario tag folded into every key.
    pub(crate) scenario: u64,
    /// The server.
    pub(crate) server: ServerModel,
    /// Mean network delay each way (0: none).
    pub(crate) net_mean_s: f64,
    /// The client's timeout per attempt.
    pub(crate) timeout_s: f64,
    /// Attempts in all, if the scenario fixes them.
    pub(crate) max_attempts: Option<u32>,
    /// Offered first tries per second at time `t` (piecewise, bounded by `peak_rate`).
    pub(crate) rate: fn(f64, f64) -> f64,
    /// A parameter passed to `rate` (a base load).
    pub(crate) rate_param: f64,
    /// An upper bound of `rate`, for thinning.
    pub(crate) peak_rate: f64,
    /// Calls start in `[0, horizon_s)`; the run ends at `horizon_s`.
    pub(crate) horizon_s: f64,
    /// Clients the calls are spread over (round robin).
    pub(crate) clients: u32,
}

/// Per-second series of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    /// First tries offered (calls started) in each second.
    pub offered: Vec<u32>,
    /// Calls that succeeded in each second.
    pub goodput: Vec<u32>,
    /// Attempts sent in each second.
    pub attempts: Vec<u32>,
}

/// Totals of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Totals {
    /// Calls started.
    pub calls: u64,
    /// Attempts sent to the server.
    pub attempts: u64,
    /// Calls that succeeded.
    pub successes: u64,
    /// The most requests at the server at once (in service or queued).
    pub peak_in_server: u64,
    /// Server seconds spent on attempts whose client had already timed out.
    pub wasted_server_s: f64,
}

#[derive(Clone, Copy, Debug)]
enum Event {
    /// Candidate call `index` of the thinned Poisson stream.
    Candidate { index: u64 },
    /// Call `call` sends its next attempt.
    Send { call: usize },
    /// Attempt `attempt` reaches the server.
    AtServer { attempt: usize },
    /// The server finishes attempt `attempt`.
    Served { attempt: usize },
    /// The answer to attempt `attempt` reaches its client.
    Answer { attempt: usize },
    /// Attempt `attempt`'s timeout fires.
    Timeout { attempt: usize },
}

#[derive(Clone, Copy, Debug)]
struct Call {
    client: u32,
    index: u64,
    attempts: u32,
    done: bool,
    policy: CallPolicy,
}

#[derive(Clone, Copy, Debug)]
struct Attempt {
    call: usize,
    number: u32,
    /// The client stopped waiting (timed out) or was answered.
    settled: bool,
    timed_out: bool,
    started_service: f64,
}

fn bump(series: &mut [u32], t: f64) {
    if let Some(slot) = series.get_mut(t.max(0.0) as usize) {
        *slot = slot.saturating_add(1);
    }
}

/// A hard cap on events per run: far above any run of the sweep (a few million),
/// it only keeps the loop bounded.
const MAX_EVENTS: u64 = 200_000_000;

/// Runs `setting` with every client using `id`.
pub(crate) fn run(seed: u64, setting: &Setting, id: PolicyId) -> (Totals, Series) {
    let mut clients: Vec<ClientPolicy> =
        policy::clients(id, setting.clients.max(1), seed, setting.max_attempts);
    let seconds = setting.horizon_s.ceil().max(0.0) as usize + 1;
    let mut series = Series {
        offered: alloc::vec![0; seconds],
        goodput: alloc::vec![0; seconds],
        attempts: alloc::vec![0; seconds],
    };
    let mut totals = Totals::default();
    let key = |parts: &[u64]| {
        let mut all = alloc::vec![seed, 0x57, setting.scenario];
        all.extend_from_slice(parts);
        rng::key(&all)
    };
    let net = |call: &Call, number: u32, purpose: u64| {
        if setting.net_mean_s > 0.0 {
            rng::exponential(
                key(&[call.index, u64::from(number), purpose]),
                setting.net_mean_s,
            )
        } else {
            0.0
        }
    };
    let mut queue = EventQueue::new();
    // no load (or a nonsensical bound): no calls, an empty run
    if setting.peak_rate > 0.0 && setting.peak_rate.is_finite() {
        queue.push(
            rng::exponential(key(&[0, ARRIVAL]), 1.0 / setting.peak_rate),
            Event::Candidate { index: 0 },
        );
    }
    let mut calls: Vec<Call> = Vec::new();
    let mut attempts: Vec<Attempt> = Vec::new();
    let mut fifo: VecDeque<usize> = VecDeque::new();
    let mut busy: u32 = 0;
    let mut in_server: u64 = 0;
    let mut events: u64 = 0;
    while let Some((now, event)) = queue.pop() {
        events += 1;
        if now >= setting.horizon_s || events > MAX_EVENTS {
            break;
        }
        match event {
            Event::Candidate { index } => {
                let next =
                    now + rng::exponential(key(&[index + 1, ARRIVAL]), 1.0 / setting.peak_rate);
                queue.push(next, Event::Candidate { index: index + 1 });
                let rate = (setting.rate)(now, setting.rate_param);
                if rng::unit(key(&[index, THIN])) * setting.peak_rate >= rate {
                    continue;
                }
                let client = (index % u64::from(setting.clients.max(1))) as u32;
                totals.calls += 1;
                bump(&mut series.offered, now);
                if let Some(p) = clients.get_mut(client as usize) {
                    p.on_call_start();
                }
                calls.push(Call {
                    client,
                    index,
                    attempts: 0,
                    done: false,
                    policy: policy::new_call(),
                });
                queue.push(
                    now,
                    Event::Send {
                        call: calls.len() - 1,
                    },
                );
            }
            Event::Send { call: id } => {
                let Some(call) = calls.get_mut(id) else {
                    continue;
                };
                let Some(p) = clients.get_mut(call.client as usize) else {
                    continue;
                };
                if !p.admit(&mut call.policy, now) {
                    call.done = true;
                    continue;
                }
                call.attempts += 1;
                totals.attempts += 1;
                bump(&mut series.attempts, now);
                let number = call.attempts;
                attempts.push(Attempt {
                    call: id,
                    number,
                    settled: false,
                    timed_out: false,
                    started_service: now,
                });
                let attempt = attempts.len() - 1;
                let out = net(call, number, NET_OUT);
                queue.push(now + out, Event::AtServer { attempt });
                queue.push(now + setting.timeout_s, Event::Timeout { attempt });
            }
            Event::AtServer { attempt } => {
                in_server += 1;
                totals.peak_in_server = totals.peak_in_server.max(in_server);
                match setting.server {
                    ServerModel::Latency {
                        base_s,
                        per_request_s,
                    } => {
                        if let Some(a) = attempts.get_mut(attempt) {
                            a.started_service = now;
                        }
                        let latency = base_s + per_request_s * in_server as f64;
                        queue.push(now + latency, Event::Served { attempt });
                    }
                    ServerModel::Workers { workers, .. } => {
                        if busy < workers {
                            busy += 1;
                            let done =
                                now + service(setting, &key, &attempts, &calls, attempt, now);
                            if let Some(a) = attempts.get_mut(attempt) {
                                a.started_service = now;
                            }
                            queue.push(done, Event::Served { attempt });
                        } else {
                            fifo.push_back(attempt);
                        }
                    }
                }
            }
            Event::Served { attempt } => {
                in_server = in_server.saturating_sub(1);
                if let Some(a) = attempts.get(attempt) {
                    if a.timed_out {
                        totals.wasted_server_s += now - a.started_service;
                    }
                    let back = calls
                        .get(a.call)
                        .map_or(0.0, |c| net(c, a.number, NET_BACK));
                    queue.push(now + back, Event::Answer { attempt });
                }
                if let ServerModel::Workers { .. } = setting.server {
                    match fifo.pop_front() {
                        Some(next) => {
                            let done = now + service(setting, &key, &attempts, &calls, next, now);
                            if let Some(a) = attempts.get_mut(next) {
                                a.started_service = now;
                            }
                            queue.push(done, Event::Served { attempt: next });
                        }
                        None => busy = busy.saturating_sub(1),
                    }
                }
            }
            Event::Answer { attempt } => {
                let Some(a) = attempts.get_mut(attempt) else {
                    continue;
                };
                if a.settled {
                    continue;
                }
                a.settled = true;
                let Some(call) = calls.get_mut(a.call) else {
                    continue;
                };
                if call.done {
                    continue;
                }
                call.done = true;
                totals.successes += 1;
                bump(&mut series.goodput, now);
                if let Some(p) = clients.get_mut(call.client as usize) {
                    p.on_success(&mut call.policy, now);
                }
            }
            Event::Timeout { attempt } => {
                let Some(a) = attempts.get_mut(attempt) else {
                    continue;
                };
                if a.settled {
                    continue;
                }
                a.settled = true;
                a.timed_out = true;
                let call_id = a.call;
                let Some(call) = calls.get_mut(call_id) else {
                    continue;
                };
                let Some(p) = clients.get_mut(call.client as usize) else {
                    continue;
                };
                match p.on_failure(&mut call.policy, ErrorClass::Timeout, now) {
                    Some(delay) => queue.push(now + delay, Event::Send { call: call_id }),
                    None => call.done = true,
                }
            }
        }
    }
    (totals, series)
}

/// The service time of `attempt` starting at `now` (workers model).
fn service(
    setting: &Setting,
    key: &impl Fn(&[u64]) -> u64,
    attempts: &[Attempt],
    calls: &[Call],
    attempt: usize,
    now: f64,
) -> f64 {
    let ServerModel::Workers {
        mean_service_s,
        drop_fraction,
        drop_start_s,
        drop_duration_s,
        ..
    } = setting.server
    else {
        return 0.0;
    };
    let (index, number) = attempts
        .get(attempt)
        .and_then(|a| calls.get(a.call).map(|c| (c.index, a.number)))
        .unwrap_or((0, 0));
    let down = now >= drop_start_s && now < drop_start_s + drop_duration_s;
    let mean = if down {
        mean_service_s / drop_fraction.max(1e-6)
    } else {
        mean_service_s
    };
    rng::exponential(key(&[index, u64::from(number), SERVICE]), mean)
}
