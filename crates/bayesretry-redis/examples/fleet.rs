//! Two processes, one Redis: what the first learns stops the second's retries.
//!
//! ```text
//! redis-server --port 6379 --save '' --daemonize yes
//! BAYESRETRY_REDIS_URL=redis://127.0.0.1:6379 cargo run -p bayesretry-redis --example fleet
//! ```
//!
//! The program is both processes: run plain, it is the first, and starts the
//! second by running itself again with the argument `second`.

use core::time::Duration;
use std::process::Command;

use bayesretry_policy::{Context, ErrorClass, RetryPolicy};
use bayesretry_redis::{Fleet, FleetConfig};

const CTX: Context<'static> = Context::new("api.example.com/v1/chat", 1, ErrorClass::Http(529));

fn config() -> FleetConfig {
    let url = std::env::var("BAYESRETRY_REDIS_URL")
        .unwrap_or_else(|_| String::from("redis://127.0.0.1:6379"));
    FleetConfig::new(url)
        .with_namespace("bayesretry-example")
        .with_interval(Duration::from_millis(100))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn core::error::Error>> {
    let policy = RetryPolicy::new();
    let fleet = Fleet::start(config(), policy.clone())?;
    if std::env::args().nth(1).as_deref() == Some("second") {
        // The second process has seen nothing itself; one round brings in
        // what the first learned.
        let before = policy.should_retry(&CTX);
        fleet.sync_now().await?;
        let after = policy.should_retry(&CTX);
        println!(
            "second process: retry after a 529? before the sync: {} (p = {:.2}); after: {} (p = {:.2})",
            before.retry(),
            before.probability(),
            after.retry(),
            after.probability()
        );
        return Ok(());
    }
    if let Err(e) = fleet.sync_now().await {
        eprintln!("no Redis at {}: {e}", fleet.config().url());
        eprintln!("start one, or set BAYESRETRY_REDIS_URL");
        std::process::exit(2);
    }
    // The provider is overloaded: retries after a 529 keep failing.
    for _ in 0..25 {
        policy.observe(&CTX, false);
    }
    fleet.sync_now().await?;
    println!(
        "first process: observed 25 failed retries after a 529; retry now? {}",
        policy.should_retry(&CTX).retry()
    );
    let status = Command::new(std::env::current_exe()?)
        .arg("second")
        .status()?;
    if !status.success() {
        return Err("the second process failed".into());
    }
    Ok(())
}
