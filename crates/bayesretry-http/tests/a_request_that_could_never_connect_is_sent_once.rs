//! A failure to connect that no network failure caused — the connector cannot
//! make a connection for the URL's scheme at all, as for an `https://` URL
//! when reqwest has no TLS backend — is permanent: one attempt, nothing for the
//! policy to learn. A refused connection, a name that does not resolve and any
//! other failure to connect (a proxy's passing refusal) are still retried.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

extern crate alloc;

mod support;

use alloc::sync::Arc;
use core::future::{Ready, ready};
use core::task::{Context, Poll};

use bayesretry_http::{Error, RetryClient, Stop};
use bayesretry_policy::Reason;
use support::{classic_at_once, closed_port};

/// The attempts made and the stop of a call that ended in a transport error.
async fn transport_failure(client: &RetryClient, url: &str) -> (u32, Stop, reqwest::Error) {
    match client.get(url).send().await {
        Err(Error::Transport {
            source,
            attempts,
            stop,
        }) => (attempts, stop, source),
        other => panic!("expected a transport error, got {other:?}"),
    }
}

#[cfg(not(feature = "rustls"))]
#[tokio::test]
async fn an_https_url_without_a_tls_backend_is_one_attempt() {
    let client = RetryClient::new(reqwest::Client::new(), classic_at_once(3));
    let url = format!("https://{}/v1/models", closed_port());

    let (attempts, stop, source) = transport_failure(&client, &url).await;

    assert!(source.is_connect(), "{source:?}");
    assert_eq!((attempts, stop), (1, Stop::Permanent));
}

/// A connector layer that fails every connection with an error that has no
/// I/O error behind it and says `self.1`. Saying what the connector says of a
/// URL it cannot serve, it is the `https://` error without a TLS backend,
/// whatever the TLS features of this build.
#[derive(Clone)]
struct Unservable<S>(S, &'static str);

impl<S, R> tower::Service<R> for Unservable<S>
where
    S: tower::Service<R>,
    S::Error: From<&'static str>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Ready<Result<S::Response, S::Error>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _dst: R) -> Self::Future {
        ready(Err(S::Error::from(self.1)))
    }
}

/// The attempts and stop of a call whose connections all fail saying `says`.
async fn through_unservable(says: &'static str) -> (u32, Stop) {
    let reqwest = reqwest::Client::builder()
        .connector_layer(tower::layer::layer_fn(move |inner| Unservable(inner, says)))
        .build()
        .unwrap();
    let client = RetryClient::new(reqwest, classic_at_once(3));
    let url = format!("http://{}/v1/models", closed_port());
    let (attempts, stop, source) = transport_failure(&client, &url).await;
    assert!(source.is_connect(), "{source:?}");
    (attempts, stop)
}

#[tokio::test]
async fn a_scheme_the_connector_cannot_serve_is_one_attempt() {
    let (attempts, stop) = through_unservable("invalid URL, scheme is not http").await;
    assert_eq!((attempts, stop), (1, Stop::Permanent));
}

#[tokio::test]
async fn another_connect_failure_with_no_io_error_behind_it_is_retried() {
    // a proxy answering CONNECT with a passing 503, say
    let (attempts, stop) = through_unservable("unsuccessful tunnel").await;
    assert_eq!((attempts, stop), (3, Stop::Policy(Reason::MaxAttempts)));
}

#[tokio::test]
async fn a_refused_connection_is_still_retried() {
    let client = RetryClient::new(reqwest::Client::new(), classic_at_once(3));
    let url = format!("http://{}/v1/models", closed_port());

    let (attempts, stop, source) = transport_failure(&client, &url).await;

    assert!(source.is_connect(), "{source:?}");
    assert_eq!((attempts, stop), (3, Stop::Policy(Reason::MaxAttempts)));
}

/// A resolver that never finds the name, with an error that is not an I/O
/// error, as a resolver other than the system's may give.
struct Unknown;

impl reqwest::dns::Resolve for Unknown {
    fn resolve(&self, _name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        Box::pin(ready(Err("no such host".into())))
    }
}

#[tokio::test]
async fn a_name_that_does_not_resolve_is_still_retried() {
    let reqwest = reqwest::Client::builder()
        .dns_resolver(Arc::new(Unknown))
        .build()
        .unwrap();
    let client = RetryClient::new(reqwest, classic_at_once(3));

    let (attempts, stop, source) =
        transport_failure(&client, "http://api.example.invalid/v1/models").await;

    assert!(source.is_dns(), "{source:?}");
    assert_eq!((attempts, stop), (3, Stop::Policy(Reason::MaxAttempts)));
}

/// A proxy that answers every `CONNECT` with `407 Proxy Authentication
/// Required`: the client's proxy credentials are wrong or missing, which no
/// retry changes.
#[cfg(feature = "rustls")]
#[tokio::test]
async fn a_proxy_that_asks_for_credentials_is_one_attempt() {
    let proxy = support::serve_raw(|_| {
        b"HTTP/1.1 407 Proxy Authentication Required\r\ncontent-length: 0\r\n\r\n".to_vec()
    })
    .await;
    let reqwest = reqwest::Client::builder()
        .proxy(reqwest::Proxy::https(proxy.url("")).unwrap())
        .build()
        .unwrap();
    let client = RetryClient::new(reqwest, classic_at_once(3));

    // the name is never resolved: the client only asks the proxy for a tunnel
    let (attempts, stop, source) =
        transport_failure(&client, "https://api.example.com/v1/models").await;

    assert!(source.is_connect(), "{source:?}");
    assert_eq!((attempts, stop), (1, Stop::Permanent));
    assert_eq!(proxy.requests(), 1);
}
