//! A URL that is not a Redis URL — a bare `host:port` as a `REDIS_HOST`
//! variable holds it, an `http://` address, an empty string — is refused when
//! the fleet starts with a message that says what a Redis URL begins with,
//! rather than the client's bare "did not parse"; and the message shows no
//! more of a URL it could not read than its scheme, so that a password in it
//! stays out of the log.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

use bayesretry_redis::{Error, Fleet, FleetConfig};

fn refusal(url: &str) -> String {
    match Fleet::without_evidence(FleetConfig::new(url)) {
        Err(error @ Error::InvalidUrl { .. }) => error.to_string(),
        Err(other) => panic!("{url}: not an invalid url: {other:?}"),
        Ok(_) => panic!("{url}: the fleet started"),
    }
}

#[tokio::test]
async fn a_url_without_a_scheme_is_told_the_schemes() {
    for url in [
        "localhost:6379",
        "127.0.0.1:6379",
        "",
        "app:s3cret@cache:6379",
    ] {
        let message = refusal(url);
        assert!(
            message.contains("redis://") && message.contains("rediss://"),
            "{url}: {message}"
        );
        assert!(message.contains("no scheme"), "{url}: {message}");
        assert!(!message.contains("s3cret"), "{url}: {message}");
    }
}

#[tokio::test]
async fn a_url_of_another_scheme_is_told_the_schemes() {
    for (url, scheme) in [
        ("http://127.0.0.1:6379", "http"),
        ("tcp://127.0.0.1:6379", "tcp"),
        ("unix+redis:///run/redis.sock", "unix+redis"),
    ] {
        let message = refusal(url);
        assert!(
            message.contains("redis://") && message.contains("redis+unix://"),
            "{url}: {message}"
        );
        assert!(message.contains(&format!("{scheme:?}")), "{url}: {message}");
    }
}

#[tokio::test]
async fn a_redis_url_that_does_not_parse_keeps_the_client_s_reason() {
    let message = refusal("redis://127.0.0.1:6379/abc");
    assert!(message.contains("database"), "{message}");
    assert!(!message.contains("no scheme"), "{message}");
}

#[tokio::test]
async fn a_password_before_what_looks_like_a_scheme_is_never_shown() {
    // credentials put before the scheme, or a `://` further on: what comes
    // before the first `://` is then no scheme, and is not shown
    for url in [
        "app:s3cret@redis://cache:6379/0",
        ":s3cret@rediss://cache:6380",
        "cache:6379/0?password=s3cret&next=redis://other",
    ] {
        let message = refusal(url);
        assert!(message.contains("no scheme"), "{url}: {message}");
        assert!(!message.contains("s3cret"), "{url}: {message}");
        let config = FleetConfig::new(url);
        assert!(
            !format!("{config:?}").contains("s3cret"),
            "{url}: {config:?}"
        );
    }
}

#[tokio::test]
async fn a_redis_url_after_blanks_is_taken_as_the_client_takes_it() {
    // the client's URL parser drops leading blanks, as a value read from a
    // file or a variable may carry: the URL is not refused for them
    let fleet = Fleet::without_evidence(FleetConfig::new(" redis://127.0.0.1:1/0"));
    assert!(fleet.is_ok(), "{:?}", fleet.err());
}
