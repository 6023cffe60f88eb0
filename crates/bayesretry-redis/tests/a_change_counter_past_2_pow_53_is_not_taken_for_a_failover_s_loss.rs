//! The change counter `{ns}:ver` edited by hand or written by a tool into
//! sixteen digits past 2⁵³: the push takes it for garbled (its numbers are
//! no longer exact) and counts on from the server's clock, but the pull
//! read any sixteen digits as a counter. A round pushes before it pulls, and
//! its push writes such a counter anew, so only a pull that came right
//! after it was written met it (between a round's push and its pull): it
//! took it for the version it had read up to. At the next push the counter
//! was back behind it, which a reader takes for a failover that lost the
//! last writes: it read the whole change log again, and counted a resync.
//! The pull now reads the counter as the push does: unknown, so the reader
//! stays where it was and reads only what changed.
//!
//! So is 2⁵³ + 1, which a Lua number cannot hold: `tonumber` rounds it to
//! 2⁵³, which both scripts took for a sound counter. The pull passed on the
//! digits as written, the push counted on from 2⁵³ and wrote that back,
//! behind what the reader had read.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

extern crate alloc;

mod common;

use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, Ordering};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};

use bayesretry_redis::Fleet;
use bayesretry_store::{Context, ErrorClass, PosteriorStore};

/// Counters of sixteen digits past 2^53 (9007199254740992): far past it, and
/// one past it, which a Lua number reads as 2^53 itself (it rounds to even).
const PAST_2_POW_53: [&str; 2] = ["9999999999999999", "9007199254740993"];

/// A TCP proxy in front of the Redis at `url` that, when `armed`, writes
/// `value` into `key` just before it passes on the next script call of
/// three arguments (a pull: the push takes more), and disarms. Returns the
/// URL that reaches Redis through it.
fn garbling_proxy(url: &str, key: String, value: &'static str, armed: Arc<AtomicBool>) -> String {
    let upstream = url
        .trim_start_matches("redis://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let admin_url = url.to_owned();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { return };
            let Ok(server) = TcpStream::connect(&upstream) else {
                continue;
            };
            let (mut from_client, mut to_server) =
                (client.try_clone().unwrap(), server.try_clone().unwrap());
            let (armed, key, admin_url) = (armed.clone(), key.clone(), admin_url.clone());
            std::thread::spawn(move || {
                let mut buf = [0_u8; 65_536];
                loop {
                    let n = match from_client.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    let chunk = &buf[..n];
                    let pull = chunk.starts_with(b"*6\r\n$7\r\nEVALSHA\r\n")
                        || chunk.starts_with(b"*6\r\n$4\r\nEVAL\r\n");
                    if pull && armed.swap(false, Ordering::SeqCst) {
                        let () = redis::cmd("SET")
                            .arg(&key)
                            .arg(value)
                            .query(&mut common::admin(&admin_url))
                            .unwrap();
                    }
                    if to_server.write_all(chunk).is_err() {
                        break;
                    }
                }
                let _ = to_server.shutdown(Shutdown::Both);
            });
            let (mut from_server, mut to_client) = (server, client);
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut from_server, &mut to_client);
                let _ = to_client.shutdown(Shutdown::Both);
            });
        }
    });
    format!("redis://127.0.0.1:{port}/")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_counter_past_2_pow_53_is_not_taken_for_a_failover_s_loss() {
    let Some(url) =
        common::server_url("a_change_counter_past_2_pow_53_is_not_taken_for_a_failover_s_loss")
    else {
        return;
    };
    for past in PAST_2_POW_53 {
        let namespace = common::namespace(&format!("ver-past-2-53-{past}"));
        let armed = Arc::new(AtomicBool::new(false));
        let proxied = garbling_proxy(&url, format!("{{{namespace}}}:ver"), past, armed.clone());
        let ctx = Context::new("orders", 1, ErrorClass::Timeout);
        let (writer, reader) = (common::store(7), common::store(8));
        let writing = Fleet::start(
            common::manual_rounds(url.clone(), namespace.clone()),
            writer.clone(),
        )
        .unwrap();
        let reading =
            Fleet::start(common::manual_rounds(proxied, namespace), reader.clone()).unwrap();
        writer.observe(&ctx, false, 10);
        writing.sync_now().await.unwrap();
        reading.sync_now().await.unwrap();
        assert_eq!(reader.evidence(&ctx, 30).failures(), 1.0);
        let resyncs = reading.stats().resyncs;

        // the counter is garbled between the reader's push and its pull
        armed.store(true, Ordering::SeqCst);
        reading.sync_now().await.unwrap();
        assert!(
            !armed.load(Ordering::SeqCst),
            "{past}: the proxy met no pull"
        );
        writer.observe(&ctx, false, 20);
        writing.sync_now().await.unwrap();
        reading.sync_now().await.unwrap();
        assert_eq!(reader.evidence(&ctx, 30).failures(), 2.0, "{past}");
        assert_eq!(
            reading.stats().resyncs,
            resyncs,
            "{past}: the reader took a garbled counter for a failover's loss"
        );
    }
}
