//! With the facade's `http-rustls` feature, `bayesretry::http` can serve an
//! `https://` URL, as `bayesretry-http`'s own `rustls` feature does. Without
//! TLS, reqwest cannot connect to such a URL at all, and the client sends it
//! once as a permanent failure: an application that adopts the client through
//! the facade, against an LLM provider that only takes TLS, need not depend on
//! reqwest or the adapter crate beside it to turn TLS on.

#![cfg(feature = "http-rustls")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

use bayesretry::http::{Error, RetryClient, Stop, reqwest};
use bayesretry::{Reason, RetryPolicy};

#[test]
fn an_https_url_that_cannot_connect_is_retried_not_refused_for_its_scheme() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        // A loopback port nothing listens on: bound, then released.
        let closed = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .unwrap();
        let policy = RetryPolicy::builder()
            .classic()
            .with_max_attempts(2)
            .with_sleeper(|_| core::future::ready(()))
            .build()
            .unwrap();
        let client = RetryClient::new(reqwest::Client::new(), policy);

        let failed = client
            .get(format!("https://{closed}/v1/models"))
            .send()
            .await;

        // A refused connection is retried up to the cap; an https URL
        // without TLS would be one attempt, `Stop::Permanent`.
        match failed {
            Err(Error::Transport { attempts, stop, .. }) => {
                assert_eq!((attempts, stop), (2, Stop::Policy(Reason::MaxAttempts)))
            }
            other => panic!("expected a refused connection, got {other:?}"),
        }
    });
}
