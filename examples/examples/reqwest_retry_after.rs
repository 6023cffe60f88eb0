//! `RetryClient` against a local, rate-limited server that it starts itself.
//!
//! The server plays an LLM provider on 127.0.0.1: the first time it sees a
//! request (method, path and idempotency key) it answers 429 with
//! `retry-after-ms: 300`, and 200 the next time; a request to `/v1/batch` is
//! answered 503 with `Retry-After: 3600` (an hour). The client is the two-line
//! adoption, `RetryClient::new(reqwest::Client::new(), RetryPolicy::new())`,
//! then reqwest's own calls. It shows
//!
//! 1. a GET that meets a 429 and succeeds on the retry, after waiting the larger
//!    of the server's 300 ms and the policy's own (jittered) backoff;
//! 2. a POST without an idempotency key, which is sent once and says why;
//! 3. the same POST with an `Idempotency-Key`, which is retried;
//! 4. a server asking for an hour, beyond the policy's one-minute limit: the call
//!    stops at once with a typed error naming the wait.
//!
//! Run: cargo run --release -p bayesretry-examples --example reqwest_retry_after

extern crate alloc;

use alloc::sync::Arc;
use core::convert::Infallible;
use core::sync::atomic::{AtomicUsize, Ordering};
use core::time::Duration;
use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use bayesretry::RetryPolicy;
use bayesretry::http::{Error, NotRetried, RetryClient};
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// The provider: an hour's 503 for the batch endpoint, a 429 for a request
/// not seen before, 200 for one seen before.
fn provider(request: &Request<Incoming>, seen: &Mutex<HashSet<String>>) -> Response<Full<Bytes>> {
    let key = format!(
        "{} {} {:?}",
        request.method(),
        request.uri().path(),
        request.headers().get("idempotency-key")
    );
    let first_time = seen
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(key);
    let (status, header, body) = if request.uri().path() == "/v1/batch" {
        (
            503,
            Some(("retry-after", "3600")),
            "{\"error\":\"maintenance\"}",
        )
    } else if first_time {
        (
            429,
            Some(("retry-after-ms", "300")),
            "{\"error\":\"rate limited\"}",
        )
    } else {
        (200, None, "{\"reply\":\"hello\"}")
    };
    let mut builder = Response::builder().status(status);
    if let Some((name, value)) = header {
        builder = builder.header(name, value);
    }
    builder
        .body(Full::new(Bytes::from_static(body.as_bytes())))
        .unwrap_or_default()
}

/// Starts the provider on a free loopback port; returns its base URL and the
/// count of requests it answers.
async fn start_provider() -> std::io::Result<(String, Arc<AtomicUsize>)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    let seen = Arc::new(Mutex::new(HashSet::new()));
    let answered = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&answered);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let seen = Arc::clone(&seen);
            let counter = Arc::clone(&counter);
            tokio::spawn(async move {
                let service = service_fn(move |request: Request<Incoming>| {
                    counter.fetch_add(1, Ordering::SeqCst);
                    let response = provider(&request, &seen);
                    async move { Ok::<_, Infallible>(response) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok((base, answered))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn core::error::Error>> {
    let (base, answered) = start_provider().await?;
    let requests = || answered.swap(0, Ordering::SeqCst);

    // the two-line adoption
    let client = RetryClient::new(reqwest::Client::new(), RetryPolicy::new());

    // 1. a 429 with retry-after-ms: 300, then a 200
    let started = Instant::now();
    let reply = client.get(format!("{base}/v1/models")).send().await?;
    let waited = started.elapsed();
    println!(
        "GET  /v1/models          -> {} after {} ms, {} requests (the server asked for 300 ms, the backoff may ask for more)",
        reply.status(),
        waited.as_millis(),
        requests()
    );
    assert_eq!(reply.status(), 200);
    assert!(waited >= Duration::from_millis(300));

    // 2. a POST without an idempotency key: sent once, never replayed
    let reply = client
        .post(format!("{base}/v1/chat/completions"))
        .body("{\"messages\":[]}")
        .send()
        .await?;
    let why = reply.extensions().get::<NotRetried>().cloned();
    let sent = requests();
    println!(
        "POST /v1/chat (no key)   -> {}, {sent} request ({})",
        reply.status(),
        why.as_ref()
            .map_or_else(|| "retried".to_owned(), ToString::to_string)
    );
    assert_eq!(reply.status(), 429);
    assert_eq!(sent, 1);
    assert!(why.is_some());

    // 3. the same POST with an idempotency key: retried, and the server answers
    let reply = client
        .post(format!("{base}/v1/chat/completions"))
        .header("Idempotency-Key", "chat-0001")
        .body("{\"messages\":[]}")
        .send()
        .await?;
    let sent = requests();
    println!(
        "POST /v1/chat (with key) -> {}, {sent} requests",
        reply.status()
    );
    assert_eq!(reply.status(), 200);
    assert_eq!(sent, 2);

    // 4. an hour's Retry-After is beyond the policy's limit: stop, do not sleep
    let started = Instant::now();
    match client.get(format!("{base}/v1/batch")).send().await {
        Err(err @ Error::RetryAfterBeyondLimit { .. }) => {
            println!(
                "GET  /v1/batch           -> stopped in {} ms: {err}",
                started.elapsed().as_millis()
            );
            assert_eq!(err.retry_after(), Some(Duration::from_secs(3600)));
        }
        other => return Err(format!("expected a Retry-After stop, got {other:?}").into()),
    }
    Ok(())
}
