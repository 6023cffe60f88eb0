//! What the Redis tests share: finding a server (or owning one), and names
//! that keep concurrent tests apart.
//!
//! Tests that only need *a* Redis read `BAYESRETRY_REDIS_URL`. Tests that
//! stop and restart Redis own theirs: they spawn the `redis-server` binary
//! found on `PATH` on a free loopback port, without persistence. When
//! `BAYESRETRY_REDIS_REQUIRED=1` (as CI sets it) a missing URL or binary fails
//! the test; otherwise the test says on stderr that it skipped, and passes.

#![allow(
    dead_code,
    unreachable_pub,
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers: a broken test environment should fail loudly"
)]

extern crate alloc;

use core::time::Duration;
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};

/// Whether the run must not skip.
pub fn required() -> bool {
    std::env::var("BAYESRETRY_REDIS_REQUIRED").is_ok_and(|v| v == "1")
}

/// Skips (or, when required, fails) with `why`.
fn unavailable(test: &str, why: &str) -> Option<String> {
    assert!(
        !required(),
        "{test}: {why}, and BAYESRETRY_REDIS_REQUIRED=1"
    );
    eprintln!("SKIPPED {test}: {why} (set BAYESRETRY_REDIS_URL, see README)");
    None
}

/// The URL of the shared test server, checked to answer; `None` to skip.
pub fn server_url(test: &str) -> Option<String> {
    let Ok(url) = std::env::var("BAYESRETRY_REDIS_URL") else {
        return unavailable(test, "BAYESRETRY_REDIS_URL is not set");
    };
    let client = redis::Client::open(url.as_str()).expect("BAYESRETRY_REDIS_URL parses");
    match client.get_connection_with_timeout(Duration::from_secs(2)) {
        Ok(mut conn) => {
            let pong: String = redis::cmd("PING").query(&mut conn).expect("PING");
            assert_eq!(pong, "PONG");
            Some(url)
        }
        Err(e) => unavailable(test, &format!("no redis at BAYESRETRY_REDIS_URL ({e})")),
    }
}

/// A namespace no other test run uses.
pub fn namespace(test: &str) -> String {
    use core::hash::BuildHasher;
    use std::hash::RandomState;
    let salt = RandomState::new().hash_one(std::process::id());
    format!("test-{test}-{salt:x}")
}

/// A loopback port nothing listens on (at the time of asking).
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local addr").port()
}

/// A `redis-server` this test starts and stops.
pub struct OwnedServer {
    port: u16,
    child: Option<Child>,
}

impl OwnedServer {
    /// Starts one on a free port; `None` (skipped) if there is no
    /// `redis-server` on `PATH` and the run does not require it.
    pub fn start(test: &str) -> Option<OwnedServer> {
        let found = Command::new("redis-server")
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found {
            unavailable(test, "no redis-server binary on PATH")?;
        }
        let mut server = OwnedServer {
            port: free_port(),
            child: None,
        };
        server.restart();
        Some(server)
    }

    /// The URL to reach it.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Starts it again on the same port, empty (nothing is persisted).
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "already running");
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn redis-server");
        self.child = Some(child);
        for _ in 0..500 {
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("redis-server did not listen on port {}", self.port);
    }

    /// Stops it (SIGKILL: as abrupt as a crash).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for OwnedServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A script of the previous released version (the crate's scripts at
/// 5aa2968, kept in `previous_version_scripts.txt`), by its constant's
/// name: what a process not yet upgraded runs during a rolling deploy.
pub fn previous_version_script(name: &str) -> redis::Script {
    let old = include_str!("previous_version_scripts.txt");
    let head = format!("const {name}: &str = r\"");
    let start = old.find(&head).expect("a script of that name") + head.len();
    let len = old[start..].find("\";").expect("the script's end");
    redis::Script::new(&old[start..start + len])
}

/// A budget window's length, about twice `at_least`, whose current window
/// on the clock of the Redis at `url` has `at_least` left at the least: a
/// test that takes less than that never sees it end, whatever time of day
/// it runs at.
///
/// A fleet budget's windows are aligned on the server's clock, on multiples
/// of their length since the Unix epoch, so a window of a fixed length ends
/// at a fixed time of day: a day's at 00:00 UTC, an hour's at the top of the
/// hour. A test that holds a lease of such a window across the edge sees its
/// units go void, or a new window grant its allowance again, and fails for
/// no fault of the code. This length is chosen from the server's time, so
/// that the server is at the start of one of its windows.
pub fn window_clear_of_its_end(url: &str, at_least: Duration) -> Duration {
    let (secs, micros): (u64, u64) = redis::cmd("TIME").query(&mut admin(url)).unwrap();
    let now = secs * 1_000 + micros / 1_000;
    let want = u64::try_from(at_least.as_millis()).unwrap().max(1);
    let Some(window) = window_clear_of(now, want) else {
        panic!("no window has {want} ms left at {now}");
    };
    Duration::from_millis(window)
}

/// A window length of at least 2 · `want` ms whose current window, at server
/// time `now` (ms since the Unix epoch), has at least `want` ms left.
pub fn window_clear_of(now: u64, want: u64) -> Option<u64> {
    // Windows of length w begin at multiples of w. With w = now / n, window n
    // begins at n · w, less than n ms before now, so it has more than w - n
    // left. n is the smaller of now / (2 · want), which makes w at least
    // 2 · want, and √now / 2, which makes w at least 4 · n: w then has at
    // least want + 2 · n, and less than n of it is gone. Searching lengths
    // near 2 · want for a remainder instead fails for long windows, whose
    // remainder moves by only now / w per length.
    let n = (now / want.saturating_mul(2)).min(now.isqrt() / 2).max(1);
    let window = now / n;
    (window >= want.saturating_mul(2) && window - now % window >= want).then_some(window)
}

/// A store under writer `writer`, shared as a fleet takes it.
pub fn store(writer: u64) -> alloc::sync::Arc<bayesretry_store::MemoryStore> {
    alloc::sync::Arc::new(
        bayesretry_store::StoreConfig::new()
            .with_writer(bayesretry_store::WriterId::new(writer))
            .build()
            .unwrap(),
    )
}

/// A fleet's settings for a test that runs the rounds itself
/// (`Fleet::sync_now`): the timer's first round comes a minute on, after the
/// test is over.
pub fn manual_rounds(
    url: impl Into<String>,
    namespace: impl Into<String>,
) -> bayesretry_redis::FleetConfig {
    bayesretry_redis::FleetConfig::new(url)
        .with_namespace(namespace)
        .with_interval(Duration::from_secs(60))
}

/// A connection of the test's own, to read or change the fleet's keys.
pub fn admin(url: &str) -> redis::Connection {
    redis::Client::open(url)
        .expect("a valid URL")
        .get_connection()
        .expect("a connection to the test's Redis")
}

/// A breaker that opens once five outcomes put the success rate credibly
/// below one half, and after `cooldown_ms` lets one probe through, whose
/// success closes it: the rules of the fleet-breaker tests.
pub fn one_probe_rules(cooldown_ms: u64) -> bayesretry_breaker::Config {
    bayesretry_breaker::Config::new()
        .with_min_strength(5.0)
        .with_open_below(0.5)
        .with_cooldown_ms(cooldown_ms)
        .with_max_probes(1)
        .with_probes_to_close(1)
}

/// Two processes of one fleet (`config`), each with a breaker of `rules`,
/// both synced once; then A's breaker opens "payments" on a run of failures
/// and A publishes the opening. B has not read it yet. The start of the
/// fleet-breaker tests that share an opening between two processes.
pub async fn payments_opened_by_a(
    config: bayesretry_redis::FleetConfig,
    rules: bayesretry_breaker::Config,
) -> (
    bayesretry_redis::Fleet,
    bayesretry_redis::Fleet,
    alloc::sync::Arc<bayesretry_redis::FleetBreaker>,
    alloc::sync::Arc<bayesretry_redis::FleetBreaker>,
) {
    let (fleet_a, fleet_b) = (
        bayesretry_redis::Fleet::without_evidence(config.clone()).unwrap(),
        bayesretry_redis::Fleet::without_evidence(config).unwrap(),
    );
    let (a, b) = (
        fleet_a.breaker(rules).unwrap(),
        fleet_b.breaker(rules).unwrap(),
    );
    fleet_a.sync_now().await.unwrap();
    fleet_b.sync_now().await.unwrap();
    assert!((0..100).any(|_| a.record("payments", false).is_some()));
    fleet_a.sync_now().await.unwrap();
    (fleet_a, fleet_b, a, b)
}

/// Spends one unit of `budget` at a time, syncing `fleet` for a lease when
/// the budget has none, until the budget says the allowance is gone; how
/// many units it spent.
pub async fn spend_all(
    fleet: &bayesretry_redis::Fleet,
    budget: &bayesretry_redis::FleetBudget,
) -> u64 {
    use bayesretry_budget::Budget;
    let mut spent = 0;
    for _ in 0..10_000 {
        match budget.try_spend(0, 1) {
            Ok(()) => spent += 1,
            Err(_) if budget.is_exhausted() => return spent,
            Err(_) => fleet.sync_now().await.unwrap(),
        }
    }
    panic!("the allowance never ran out");
}

/// Runs `fleet`'s rounds, 20 ms apart, until one reaches Redis, at most
/// `tries` of them; whether one did.
pub async fn sync_until_back(fleet: &bayesretry_redis::Fleet, tries: u32) -> bool {
    for _ in 0..tries {
        if fleet.sync_now().await.is_ok() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// A TCP proxy in front of a Redis server that can lose a reply: the server
/// runs the command, and the client never hears back, its connection cut —
/// as after a response timeout, or a connection reset while the reply was on
/// its way.
pub struct LossyProxy {
    port: u16,
    lose: alloc::sync::Arc<core::sync::atomic::AtomicBool>,
}

impl LossyProxy {
    /// Listens on a free loopback port, forwarding each connection to the
    /// server at `url` (`redis://host:port/...`, without credentials).
    pub fn start(url: &str) -> LossyProxy {
        use core::sync::atomic::AtomicBool;
        let upstream = url
            .trim_start_matches("redis://")
            .split('/')
            .next()
            .expect("host:port")
            .to_owned();
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let port = listener.local_addr().expect("local addr").port();
        let lose = alloc::sync::Arc::new(AtomicBool::new(false));
        let armed = lose.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let Ok(server) = TcpStream::connect(&upstream) else {
                    continue;
                };
                Self::pump(client, server, armed.clone());
            }
        });
        LossyProxy { port, lose }
    }

    /// The URL that reaches the server through the proxy.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// The reply to the next script the server runs (`EVALSHA`, `EVAL`) is
    /// lost and its connection cut. An error reply (`NOSCRIPT`: the script
    /// did not run) is passed on, and the script's next call is the one.
    pub fn lose_next_script_reply(&self) {
        self.lose.store(true, core::sync::atomic::Ordering::SeqCst);
    }

    /// Whether the reply [`lose_next_script_reply`] asked for was lost.
    ///
    /// [`lose_next_script_reply`]: LossyProxy::lose_next_script_reply
    pub fn lost_a_reply(&self) -> bool {
        !self.lose.load(core::sync::atomic::Ordering::SeqCst)
    }

    /// Forwards both ways between `client` and `server`.
    fn pump(
        client: TcpStream,
        server: TcpStream,
        lose: alloc::sync::Arc<core::sync::atomic::AtomicBool>,
    ) {
        use core::sync::atomic::{AtomicBool, Ordering};
        use std::io::{Read, Write};
        use std::net::Shutdown;
        let script_sent = alloc::sync::Arc::new(AtomicBool::new(false));
        let (mut from_client, mut to_server) = (
            client.try_clone().expect("clone"),
            server.try_clone().expect("clone"),
        );
        let (sent, armed) = (script_sent.clone(), lose.clone());
        std::thread::spawn(move || {
            let mut buf = [0_u8; 65_536];
            loop {
                let n = match from_client.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                let chunk = &buf[..n];
                // the command's name as RESP frames it, never a script's text
                let script = |name: &[u8]| chunk.windows(name.len()).any(|w| w == name);
                if armed.load(Ordering::SeqCst)
                    && (script(b"$7\r\nEVALSHA\r\n") || script(b"$4\r\nEVAL\r\n"))
                {
                    sent.store(true, Ordering::SeqCst);
                }
                if to_server.write_all(chunk).is_err() {
                    break;
                }
            }
            let _ = to_server.shutdown(Shutdown::Both);
        });
        let (mut from_server, mut to_client) = (server, client);
        std::thread::spawn(move || {
            let mut buf = [0_u8; 65_536];
            loop {
                let n = match from_server.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                let chunk = &buf[..n];
                if script_sent.swap(false, Ordering::SeqCst) && chunk.first() != Some(&b'-') {
                    // the script ran; its reply goes nowhere
                    lose.store(false, Ordering::SeqCst);
                    break;
                }
                if to_client.write_all(chunk).is_err() {
                    break;
                }
            }
            let _ = to_client.shutdown(Shutdown::Both);
            let _ = from_server.shutdown(Shutdown::Both);
        });
    }
}
