//! A POST without an idempotency key (an LLM provider's chat call) is replayed
//! when the failure shows it was never processed — a refusal status (429, 529,
//! 408 by default) or a failure to connect — and is sent once, saying why,
//! after any other failure: a 500, a 503 (unless configured), a connection
//! closed after the request went out, an attempt the timeout cut off.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

extern crate alloc;

mod support;

use alloc::sync::Arc;
use core::future::ready;
use core::sync::atomic::{AtomicUsize, Ordering};
use core::time::Duration;

use bayesretry_http::{Config, Error, NotRetried, RetryClient, RetryLayer, Stop};
use bayesretry_policy::{ManualClock, Reason, RetryPolicy, VirtualSleeper};
use http::Method;
use support::{
    answer, classic_at_once, closed_port, serve, serve_failing_once, serve_raw, virtual_client,
    virtual_policy,
};
use tower::{Layer, Service, ServiceExt};

const CHAT: &str = r#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#;

/// A chat call, a POST without a key, to `url` through `client`.
async fn chat(client: &RetryClient, url: String) -> Result<reqwest::Response, Error> {
    client.post(url).body(CHAT).send().await
}

/// A server that answers `status` first, then 200.
async fn first(status: u16) -> support::Server {
    serve_failing_once(status, &[("retry-after-ms", "20")]).await
}

#[tokio::test]
async fn a_429_then_a_200_gives_the_200_after_two_requests() {
    let server = first(429).await;
    let (client, sleeper) = virtual_client();

    let response = chat(&client, server.url("/v1/chat/completions"))
        .await
        .unwrap();

    assert_eq!(response.status(), 200);
    assert_eq!(response.extensions().get::<NotRetried>(), None);
    assert_eq!(server.requests(), 2);
    for seen in server.seen() {
        assert_eq!(seen.method, Method::POST);
        assert_eq!(seen.body, CHAT.as_bytes());
    }
    assert_eq!(sleeper.delays().len(), 1);
}

#[tokio::test]
async fn a_529_and_a_408_are_refusals_too() {
    for status in [529, 408] {
        let server = first(status).await;
        let (client, _) = virtual_client();

        let response = chat(&client, server.url("/v1/messages")).await.unwrap();

        assert_eq!(response.status(), 200, "{status}");
        assert_eq!(server.requests(), 2, "{status}");
    }
}

#[tokio::test]
async fn a_500_is_sent_once_and_says_why() {
    let server = first(500).await;
    let (client, sleeper) = virtual_client();

    let response = chat(&client, server.url("/v1/chat/completions"))
        .await
        .unwrap();

    assert_eq!(response.status(), 500);
    assert_eq!(server.requests(), 1);
    assert!(sleeper.delays().is_empty());
    assert_eq!(
        response.extensions().get::<NotRetried>(),
        Some(&NotRetried::NotIdempotent(Method::POST))
    );
}

#[tokio::test]
async fn a_500_after_a_429_is_not_sent_again() {
    let server = serve(|seen| match seen.index {
        0 => answer(429, &[]),
        _ => answer(500, &[]),
    })
    .await;
    let (client, _) = virtual_client();

    let response = client
        .patch(server.url("/v1/jobs/1"))
        .body("{}")
        .send()
        .await
        .unwrap();

    assert_eq!(response.status(), 500);
    assert_eq!(server.requests(), 2);
    assert_eq!(
        response.extensions().get::<NotRetried>(),
        Some(&NotRetried::NotIdempotent(Method::PATCH))
    );
}

#[tokio::test]
async fn a_503_is_not_replayed_by_default_and_is_when_configured() {
    let server = first(503).await;
    let (policy, _) = virtual_policy();
    let client = RetryClient::new(reqwest::Client::new(), policy.clone());

    let once = chat(&client, server.url("/v1/chat/completions"))
        .await
        .unwrap();
    assert_eq!(once.status(), 503);
    assert_eq!(server.requests(), 1);

    let server = first(503).await;
    let client = RetryClient::new(reqwest::Client::new(), policy)
        .with_config(Config::new().with_refusal_statuses(&[408, 429, 503, 529]));
    let replayed = chat(&client, server.url("/v1/chat/completions"))
        .await
        .unwrap();
    assert_eq!(replayed.status(), 200);
    assert_eq!(server.requests(), 2);
}

#[tokio::test]
async fn without_refusal_statuses_a_429_is_sent_once() {
    let server = first(429).await;
    let (policy, _) = virtual_policy();
    let client = RetryClient::new(reqwest::Client::new(), policy)
        .with_config(Config::new().with_refusal_statuses(&[]));

    let response = chat(&client, server.url("/v1/chat/completions"))
        .await
        .unwrap();

    assert_eq!(response.status(), 429);
    assert_eq!(server.requests(), 1);
}

#[tokio::test]
async fn a_post_to_a_closed_port_is_retried() {
    let addr = closed_port();
    let client = RetryClient::new(reqwest::Client::new(), classic_at_once(3));

    let err = chat(&client, format!("http://{addr}/v1/chat/completions"))
        .await
        .unwrap_err();

    match err {
        Error::Transport {
            source,
            attempts,
            stop,
        } => {
            assert!(source.is_connect(), "{source}");
            assert_eq!((attempts, stop), (3, Stop::Policy(Reason::MaxAttempts)));
        }
        other => panic!("expected a transport error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_connection_closed_after_the_request_went_out_is_not_replayed() {
    // the request is read, then the connection closed without an answer
    let server = serve_raw(|_| Vec::new()).await;
    let (client, sleeper) = virtual_client();

    let err = chat(&client, server.url("/v1/chat/completions"))
        .await
        .unwrap_err();

    match err {
        Error::Transport {
            source,
            attempts,
            stop,
        } => {
            assert!(!source.is_connect(), "{source}");
            assert_eq!(attempts, 1);
            assert_eq!(
                stop,
                Stop::NotRetried(NotRetried::NotIdempotent(Method::POST))
            );
        }
        other => panic!("expected a transport error, got {other:?}"),
    }
    assert_eq!(server.requests(), 1);
    assert!(sleeper.delays().is_empty());
}

#[tokio::test]
async fn the_layer_replays_a_post_after_a_429_only() {
    for (status, requests) in [(429, 2), (500, 1)] {
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&calls);
        let inner = tower::service_fn(move |_req: http::Request<String>| {
            let first = counted.fetch_add(1, Ordering::SeqCst) == 0;
            let status = if first { status } else { 200 };
            let response = http::Response::builder().status(status).body(String::new());
            ready(Ok::<_, std::io::Error>(response.unwrap()))
        });
        let (policy, _) = virtual_policy();
        let mut retried = RetryLayer::new(policy).layer(inner);
        let request = http::Request::post("http://svc.internal/v1/chat")
            .body(CHAT.to_owned())
            .unwrap();

        let response = retried.ready().await.unwrap().call(request).await.unwrap();

        assert_eq!(calls.load(Ordering::SeqCst), requests, "{status}");
        assert_eq!(response.status(), if requests == 2 { 200 } else { status });
    }
}

#[tokio::test(start_paused = true)]
async fn an_attempt_the_timeout_cut_off_is_not_replayed() {
    // the first call never answers; the policy's timeout runs on virtual time,
    // so it cuts the attempt off as soon as it has to wait (tokio's clock is
    // paused only for the guard, which fails a call that hangs)
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let inner = tower::service_fn(move |_req: http::Request<String>| {
        let first = counted.fetch_add(1, Ordering::SeqCst) == 0;
        async move {
            if first {
                core::future::pending::<()>().await;
            }
            Ok::<_, std::io::Error>(http::Response::new(String::new()))
        }
    });
    let policy = RetryPolicy::builder()
        .with_attempt_timeout(Duration::from_secs(30))
        .with_virtual_time(VirtualSleeper::new(ManualClock::new(0)))
        .build()
        .unwrap();
    let mut retried = RetryLayer::new(policy).layer(inner);
    let request = http::Request::post("http://svc.internal/v1/chat")
        .body(CHAT.to_owned())
        .unwrap();

    let call = retried.ready().await.unwrap().call(request);
    let err = tokio::time::timeout(Duration::from_secs(3600), call)
        .await
        .expect("the attempt was never cut off")
        .unwrap_err();

    assert!(
        matches!(err, Error::AttemptTimedOut { attempts: 1, .. }),
        "{err:?}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

/// A failure no method would retry is not blamed on the method: a `400`, or a
/// failure the server says not to retry, is returned without a `NotRetried`,
/// as it is for a GET.
#[tokio::test]
async fn a_permanent_failure_is_not_marked_as_held_back_for_want_of_a_key() {
    for headers in [&[][..], &[("x-should-retry", "false")][..]] {
        let status = if headers.is_empty() { 400 } else { 500 };
        let server = serve(move |_| answer(status, headers)).await;
        let (client, _) = virtual_client();

        let response = chat(&client, server.url("/v1/chat/completions"))
            .await
            .unwrap();

        assert_eq!(response.status().as_u16(), status);
        assert_eq!(response.extensions().get::<NotRetried>(), None, "{status}");
        assert_eq!(server.requests(), 1);
    }
}

/// A redirect loop ends a POST as it ends a GET: permanent, not held back for
/// want of a key.
#[tokio::test]
async fn a_redirect_loop_is_permanent_not_held_back() {
    let server = serve(|_| answer(307, &[("location", "/v1/chat/completions")])).await;
    let (client, _) = virtual_client();

    let err = chat(&client, server.url("/v1/chat/completions"))
        .await
        .unwrap_err();

    let Error::Transport { source, stop, .. } = err else {
        panic!("expected a transport error, got {err:?}");
    };
    assert!(source.is_redirect(), "{source:?}");
    assert_eq!(stop, Stop::Permanent);
}
