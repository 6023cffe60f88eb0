//! Two policies in two processes sharing one Redis: failures that process A
//! observes stop process B's retries after one sync interval of B's, though B
//! never saw a failure itself.
//!
//! The test binary plays every part: run plain, it is the coordinator and
//! spawns itself twice with `BAYESRETRY_TEST_ROLE` set to `reader` (B) and
//! `writer` (A); they talk over their standard input and output.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    missing_docs,
    reason = "a test binary"
)]

mod common;

use core::time::Duration;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use bayesretry_policy::{Context, ErrorClass, RetryPolicy};
use bayesretry_redis::{Fleet, FleetConfig};

const CTX: Context<'static> = Context::new("shared-api", 1, ErrorClass::Http(503));

fn main() {
    match std::env::var("BAYESRETRY_TEST_ROLE").as_deref() {
        Ok("reader") => run(reader()),
        Ok("writer") => run(writer()),
        _ => coordinator(),
    }
}

fn run(role: impl Future<Output = ()>) {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(role);
}

fn config() -> FleetConfig {
    let url = std::env::var("BAYESRETRY_REDIS_URL").unwrap();
    let namespace = std::env::var("BAYESRETRY_TEST_NAMESPACE").unwrap();
    FleetConfig::new(url)
        .with_namespace(namespace)
        .with_interval(Duration::from_millis(20))
}

/// Process B: answers before and after A's evidence arrives.
async fn reader() {
    let policy = RetryPolicy::new();
    let fleet = Fleet::start(config(), policy.clone()).unwrap();
    fleet.sync_now().await.unwrap();
    let before = policy.should_retry(&CTX);
    println!("before {} {}", before.retry(), before.probability());
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "go");
    // A has pushed. Wait for two rounds to end: the second began after "go",
    // so it pulled what A pushed — one interval, by the clock of B's own task.
    let start = fleet.stats().rounds;
    for _ in 0..10_000 {
        if fleet.stats().rounds >= start + 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert!(fleet.stats().rounds >= start + 2, "B's sync kept running");
    let after = policy.should_retry(&CTX);
    println!("after {} {}", after.retry(), after.probability());
}

/// Process A: sees the dependency fail, and lets its fleet push it.
async fn writer() {
    let policy = RetryPolicy::new();
    let fleet = Fleet::start(config(), policy.clone()).unwrap();
    for _ in 0..30 {
        policy.observe(&CTX, false);
    }
    fleet.sync_now().await.unwrap();
    assert!(fleet.stats().pushed >= 1);
    println!("pushed");
}

fn spawn(role: &str, url: &str, namespace: &str) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .env("BAYESRETRY_TEST_ROLE", role)
        .env("BAYESRETRY_REDIS_URL", url)
        .env("BAYESRETRY_TEST_NAMESPACE", namespace)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

fn read_line(lines: &mut impl Iterator<Item = std::io::Result<String>>, who: &str) -> String {
    match lines.next() {
        Some(Ok(line)) => line,
        other => panic!("{who} ended without answering: {other:?}"),
    }
}

fn coordinator() {
    let name = "evidence_seen_by_one_process_changes_another_s_decision";
    let Some(url) = common::server_url(name) else {
        return;
    };
    let namespace = common::namespace("evidence");
    let mut reader = spawn("reader", &url, &namespace);
    let mut reader_out = BufReader::new(reader.stdout.take().unwrap()).lines();
    let before = read_line(&mut reader_out, "B");
    assert!(
        before.starts_with("before true "),
        "B retries at first: {before}"
    );

    let mut writer = spawn("writer", &url, &namespace);
    let mut writer_out = BufReader::new(writer.stdout.take().unwrap()).lines();
    assert_eq!(read_line(&mut writer_out, "A"), "pushed");
    assert!(writer.wait().unwrap().success(), "A failed");

    writeln!(reader.stdin.take().unwrap(), "go").unwrap();
    let after = read_line(&mut reader_out, "B");
    assert!(reader.wait().unwrap().success(), "B failed");
    let probability: f64 = after
        .strip_prefix("after false ")
        .unwrap_or_else(|| panic!("B stops retrying after A's evidence: {after}"))
        .parse()
        .unwrap();
    assert!(probability < 0.1, "{after}");
    println!("test {name} ... ok");
}
