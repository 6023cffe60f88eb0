//! How much memory a `MemoryStore` takes for a million contexts.
//!
//! Two shapes: a realistic one (50 000 endpoints × 4 error classes × 5
//! attempts) and the worst case for the per-context share of names and groups
//! (a million endpoints, one context each, as untrusted keys would make). For
//! each it reports the store's own account of its heap (`heap_bytes`, which
//! leaves out the allocator's overhead) and the growth of the process's
//! resident set, read from `/proc/self/status` (Linux; "n/a" elsewhere).
//!
//! Each shape runs in a child process of its own, so that memory the
//! allocator kept from one does not hide the growth of the other.
//!
//! Run: `cargo run --release -p bayesretry-store --example memory`

use std::process::Command;
use std::{env, fs};

use bayesretry_store::{Context, ErrorClass, MemoryStore, PosteriorStore, StoreConfig};

const CONTEXTS: usize = 1_000_000;

/// The resident set size in bytes, if the platform tells.
fn resident_bytes() -> Option<usize> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn mb(bytes: usize) -> f64 {
    bytes as f64 / 1e6
}

fn report(shape: &str, store: &MemoryStore, rss_before: Option<usize>) {
    let (heap, names) = store.heap_bytes();
    let held = store.len();
    let rss = match (rss_before, resident_bytes()) {
        (Some(before), Some(after)) => format!("{:.1} MB", mb(after.saturating_sub(before))),
        _ => "n/a".to_owned(),
    };
    println!("{shape}");
    println!("  contexts held:            {held}");
    println!(
        "  heap (store's account):   {:.1} MB = {:.1} bytes/context",
        mb(heap),
        heap as f64 / held as f64
    );
    println!(
        "  of which endpoint names:  {:.1} MB; without them {:.1} bytes/context",
        mb(names),
        (heap - names) as f64 / held as f64
    );
    println!("  resident set growth:      {rss}");
}

fn main() {
    match env::args().nth(1).as_deref() {
        Some("endpoints") => many_contexts_per_endpoint(),
        Some("tenants") => one_context_per_endpoint(),
        _ => {
            println!(
                "context slot: {} bytes (size_of)",
                MemoryStore::CONTEXT_SLOT_BYTES
            );
            for shape in ["endpoints", "tenants"] {
                let me = env::current_exe().unwrap_or_default();
                match Command::new(me).arg(shape).status() {
                    Ok(status) if status.success() => {}
                    other => println!("{shape}: the child process failed: {other:?}"),
                }
            }
        }
    }
}

/// Room for every context, so that the count is exact: with a bound of exactly
/// a million, the fullest shards would start evicting a little early.
fn config() -> StoreConfig {
    StoreConfig::new().with_max_contexts(CONTEXTS + CONTEXTS / 10)
}

fn many_contexts_per_endpoint() {
    let classes = [
        ErrorClass::Http(429),
        ErrorClass::Http(503),
        ErrorClass::Http(529),
        ErrorClass::Timeout,
    ];
    let before = resident_bytes();
    let store = config().build().unwrap_or_default();
    for e in 0..CONTEXTS / 20 {
        let endpoint = format!("svc-{e:05}.internal.example.com/v1");
        for class in classes {
            for attempt in 1..=5 {
                let ctx = Context::new(&endpoint, attempt, class);
                store.observe(&ctx, attempt % 2 == 0, e as u64);
            }
        }
    }
    println!();
    report("50 000 endpoints x 4 classes x 5 attempts", &store, before);
}

fn one_context_per_endpoint() {
    let before = resident_bytes();
    let store = config().build().unwrap_or_default();
    for e in 0..CONTEXTS {
        let endpoint = format!("tenant-{e:07}.example.com");
        let ctx = Context::new(&endpoint, 1, ErrorClass::Http(429));
        store.observe(&ctx, e % 2 == 0, e as u64);
    }
    println!();
    report("1 000 000 endpoints x 1 context", &store, before);
}
