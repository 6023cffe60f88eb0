//! A transport error that no retry can mend — a URL whose scheme the client
//! will not or cannot send (`ftp://`, `http://` to a client that takes
//! `https://` only, `https://` without a TLS feature) — ends its call at its
//! one attempt. What a user sees of it, the error's line and its causes,
//! says why no attempt followed and names what failed, once; a refused
//! connection, which a retry can mend, is retried.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod support;

use bayesretry_http::{Error, RetryClient, Stop, classify_reqwest_error};
use bayesretry_policy::Reason;
use support::{classic_at_once, closed_port};

/// The error's line and each of its causes, as a report prints them.
fn chain(err: &(dyn core::error::Error + 'static)) -> Vec<String> {
    core::iter::successors(Some(err), |cause| cause.source())
        .take(16)
        .map(ToString::to_string)
        .collect()
}

/// The call's attempts, stop and chain, for a call that ended in a
/// transport error.
async fn failed(client: &RetryClient, url: &str) -> (u32, Stop, Vec<String>) {
    match client.get(url).send().await {
        Err(err @ Error::Transport { .. }) => {
            let causes = chain(&err);
            match err {
                Error::Transport { attempts, stop, .. } => (attempts, stop, causes),
                _ => unreachable!(),
            }
        }
        other => panic!("expected a transport error, got {other:?}"),
    }
}

/// Asserts `chain` is a permanent error's: its line says why no attempt
/// followed, and the causes name `cause` once.
fn says_permanent_because(chain: &[String], cause: &str) {
    let line = &chain[0];
    assert_eq!(
        line,
        "request failed after 1 attempt(s), no further attempt (permanent error: sent again, \
         the request would fail the same way)",
        "{chain:#?}"
    );
    let naming = chain.iter().filter(|text| text.contains(cause)).count();
    assert_eq!(naming, 1, "{cause:?} should be named once in {chain:#?}");
}

#[tokio::test]
async fn a_scheme_the_client_does_not_allow_is_named_and_not_retried() {
    let client = RetryClient::new(reqwest::Client::new(), classic_at_once(3));
    let (attempts, stop, chain) = failed(&client, "ftp://files.example.com/report").await;
    assert_eq!((attempts, &stop), (1, &Stop::Permanent), "{chain:#?}");
    says_permanent_because(&chain, "URL scheme is not allowed");
}

#[tokio::test]
async fn plain_http_to_a_client_that_takes_https_only_is_named_and_not_retried() {
    let https_only = reqwest::Client::builder().https_only(true).build().unwrap();
    let client = RetryClient::new(https_only, classic_at_once(3));
    let url = format!("http://{}/v1/models", closed_port());
    let (attempts, stop, chain) = failed(&client, &url).await;
    assert_eq!((attempts, &stop), (1, &Stop::Permanent), "{chain:#?}");
    says_permanent_because(&chain, "URL scheme is not allowed");
}

#[cfg(not(feature = "rustls"))]
#[tokio::test]
async fn an_https_url_without_a_tls_feature_is_named_and_not_retried() {
    let client = RetryClient::new(reqwest::Client::new(), classic_at_once(3));
    let url = format!("https://{}/v1/models", closed_port());
    let (attempts, stop, chain) = failed(&client, &url).await;
    assert_eq!((attempts, &stop), (1, &Stop::Permanent), "{chain:#?}");
    says_permanent_because(&chain, "scheme is not http");
}

#[tokio::test]
async fn a_refused_connection_is_retried_and_says_what_stopped_it() {
    let client = RetryClient::new(reqwest::Client::new(), classic_at_once(3));
    let url = format!("http://{}/v1/models", closed_port());
    let (attempts, stop, chain) = failed(&client, &url).await;
    assert_eq!((attempts, &stop), (3, &Stop::Policy(Reason::MaxAttempts)));
    assert_eq!(
        chain[0],
        "request failed after 3 attempt(s), no further attempt (attempt cap reached)"
    );
    assert!(!chain[0].contains("permanent"), "{chain:#?}");
}

#[tokio::test]
async fn through_the_policy_alone_the_line_says_why_and_the_causes_what() {
    let policy = classic_at_once(3);
    let client = reqwest::Client::new();
    let mut attempts = 0;
    let err = policy
        .call_with("files.example.com", classify_reqwest_error)
        .run(|_| {
            attempts += 1;
            client.get("ftp://files.example.com/report").send()
        })
        .await
        .unwrap_err();
    assert_eq!(attempts, 1);
    let chain = chain(&err);
    assert_eq!(
        chain[0], "permanent error, not retried: tried again, it would fail the same way",
        "{chain:#?}"
    );
    let naming = chain
        .iter()
        .filter(|text| text.contains("URL scheme is not allowed"))
        .count();
    assert_eq!(naming, 1, "{chain:#?}");
}
