//! A key of the fleet's evidence that holds the wrong type (a tool wrote to
//! the same namespace, a hand edit): Redis refuses the push that meets it.
//! The push used to meet it halfway, after writing: the epoch it created, a
//! writer's new hash and a new change log were left without their time to
//! live, since the script gives them one at its end. While the key stayed
//! wrong, every push wrote them again without one; a hash of another
//! writer recreated that way (pushed again after a loss) kept no time to
//! live even after, so a writer long gone was read by every newcomer for
//! good. Every key a push writes now has its type checked before anything
//! is written: a push refused writes nothing.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use bayesretry_redis::Fleet;
use bayesretry_store::{Context, ErrorClass, PosteriorStore};

/// Every key of `namespace` but `except`, with its time to live.
fn keys_and_ttls(url: &str, namespace: &str, except: &str) -> Vec<(String, i64)> {
    let mut conn = common::admin(url);
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{{{namespace}}}:*"))
        .query(&mut conn)
        .unwrap();
    keys.into_iter()
        .filter(|k| k != except)
        .map(|k| {
            let ttl: i64 = redis::cmd("PTTL").arg(&k).query(&mut conn).unwrap();
            (k, ttl)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_refused_for_a_key_of_the_wrong_type_writes_nothing() {
    let Some(url) = common::server_url("a_push_refused_for_a_key_of_the_wrong_type_writes_nothing")
    else {
        return;
    };
    let namespace = common::namespace("wrong-type-log");
    // the change log, a string
    let log = format!("{{{namespace}}}:log");
    let () = redis::cmd("SET")
        .arg(&log)
        .arg("not a sorted set")
        .query(&mut common::admin(&url))
        .unwrap();

    let store = common::store(5);
    let fleet = Fleet::start(
        common::manual_rounds(url.clone(), namespace.clone()),
        store.clone(),
    )
    .unwrap();
    store.observe(&Context::new("orders", 1, ErrorClass::Timeout), true, 10);
    for _ in 0..3 {
        assert!(fleet.sync_now().await.is_err(), "the push is refused");
        let left = keys_and_ttls(&url, &namespace, &log);
        assert!(
            left.iter().all(|(_, ttl)| *ttl >= 0),
            "keys left without a time to live: {left:?}"
        );
    }

    // the log is put right: the next push goes through
    let () = redis::cmd("DEL")
        .arg(&log)
        .query(&mut common::admin(&url))
        .unwrap();
    fleet.sync_now().await.unwrap();
    let left = keys_and_ttls(&url, &namespace, "");
    assert!(!left.is_empty());
    assert!(
        left.iter().all(|(_, ttl)| *ttl >= 0),
        "keys without a time to live: {left:?}"
    );
}
