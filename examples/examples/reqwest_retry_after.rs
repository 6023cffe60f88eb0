//! `RetryClient` against a local, rate-limited server that it starts itself.
//!
//! The server plays an LLM provider on 127.0.0.1: the first time it sees a
//! request (method, path and idempotency key) it answers 429 with
//! `retry-after-ms: 300` — or, on `/v1/chat/completions`, 503 with the same
//! header, as a proxy in front of an overloaded model does — and 200 the next
//! time; a request to `/v1/batch` is answered 503 with `Retry-After: 3600` (an
//! hour). The client is the two-line adoption,
//! `RetryClient::new(reqwest::Client::new(), RetryPolicy::new())`, then
//! reqwest's own calls. It shows
//!
//! 1. a GET that meets a 429 and succeeds on the retry, after waiting the larger
//!    of the server's 300 ms and the policy's own (jittered) backoff;
//! 2. a POST without an idempotency key that meets a 429: a 429 says the request
//!    was refused, not processed, so it is sent again;
//! 3. a POST without an idempotency key that meets a 503, which may come after
//!    the request was processed: it is not sent again, and says why;
//! 4. the same POST with an `Idempotency-Key`, sent at once: the 503's 300 ms
//!    hold the whole origin, so the client refuses it without sending anything,
//!    with a typed error naming what is left of the wait; sent again once the
//!    wait has run out, it is retried after its own 503;
//! 5. a server asking for an hour, beyond the policy's one-minute limit: the call
//!    stops at once with a typed error naming the wait.
//!
//! Run: cargo run --release -p bayesretry-examples --example reqwest_retry_after

extern crate alloc;

use alloc::sync::Arc;
use core::convert::Infallible;
use core::future::Future;
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

/// The provider: an hour's 503 for the batch endpoint, a 503 for a chat
/// request not seen before and a 429 for any other, 200 for one seen before.
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
    } else if first_time && request.uri().path() == "/v1/chat/completions" {
        (
            503,
            Some(("retry-after-ms", "300")),
            "{\"error\":\"overloaded\"}",
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
pub(crate) async fn start_provider() -> std::io::Result<(String, Arc<AtomicUsize>)> {
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

/// What each call of the tour came back with: the status (or the error), and
/// how many requests the server answered for it.
#[derive(Debug)]
pub(crate) struct Tour {
    /// 1: the GET that meets a 429.
    pub(crate) get: (u16, usize),
    /// 2: the POST without a key that meets a 429.
    pub(crate) refused_post: (u16, usize),
    /// 3: the POST without a key that meets a 503, and why it was not sent again.
    pub(crate) unkeyed_post: (u16, usize, Option<NotRetried>),
    /// 4: the same POST with a key: what was left of the server's wait when
    /// it was first sent (and refused in the client, no request made), then its
    /// status and requests once sent after the wait.
    pub(crate) held_for: Option<Duration>,
    pub(crate) keyed_post: (u16, usize),
    /// 5: the call whose server asks for an hour.
    pub(crate) batch: Result<u16, Error>,
}

/// Makes the five calls through `client` to the provider at `base`, printing
/// each; `answered` counts the server's answers, and `wait` waits as long as
/// the client says to (on the policy's clock).
pub(crate) async fn tour<W: Future<Output = ()>>(
    client: &RetryClient,
    base: &str,
    answered: &AtomicUsize,
    wait: impl Fn(Duration) -> W,
) -> Tour {
    let requests = || answered.swap(0, Ordering::SeqCst);
    let status = |reply: &Result<reqwest::Response, Error>| {
        reply.as_ref().map_or(0, |reply| reply.status().as_u16())
    };

    // 1. a 429 with retry-after-ms: 300, then a 200
    let started = Instant::now();
    let reply = client.get(format!("{base}/v1/models")).send().await;
    let get = (status(&reply), requests());
    println!(
        "GET  /v1/models           -> {} after {} ms, {} requests (the server asked for 300 ms, the backoff may ask for more)",
        get.0,
        started.elapsed().as_millis(),
        get.1
    );

    // 2. a POST without an idempotency key meets a 429: refused, so sent again
    let reply = client
        .post(format!("{base}/v1/embeddings"))
        .body("{\"input\":\"hello\"}")
        .send()
        .await;
    let refused_post = (status(&reply), requests());
    println!(
        "POST /v1/embeddings       -> {}, {} requests (a 429 is a refusal: sent again)",
        refused_post.0, refused_post.1
    );

    // 3. a POST without an idempotency key meets a 503: not sent again
    let reply = client
        .post(format!("{base}/v1/chat/completions"))
        .body("{\"messages\":[]}")
        .send()
        .await;
    let why = reply
        .as_ref()
        .ok()
        .and_then(|reply| reply.extensions().get::<NotRetried>().cloned());
    let unkeyed_post = (status(&reply), requests(), why);
    println!(
        "POST /v1/chat (no key)    -> {}, {} request ({})",
        unkeyed_post.0,
        unkeyed_post.1,
        unkeyed_post
            .2
            .as_ref()
            .map_or_else(|| "retried".to_owned(), ToString::to_string)
    );

    // 4. the same POST with an idempotency key, at once: the server's 300 ms
    // hold the origin, and the client sends nothing until they run out
    let keyed = || {
        client
            .post(format!("{base}/v1/chat/completions"))
            .header("Idempotency-Key", "chat-0001")
            .body("{\"messages\":[]}")
            .send()
    };
    let mut reply = keyed().await;
    let mut held_for = None;
    if let Err(err @ Error::ServerHold { retry_after, .. }) = &reply {
        println!(
            "POST /v1/chat (with key)  -> not sent, {} requests: {err}",
            requests()
        );
        held_for = Some(*retry_after);
        wait(*retry_after).await;
        // then retried after its own 503, and the server answers
        reply = keyed().await;
    }
    let keyed_post = (status(&reply), requests());
    println!(
        "POST /v1/chat (with key)  -> {}, {} requests",
        keyed_post.0, keyed_post.1
    );

    // 5. an hour's Retry-After is beyond the policy's limit: stop, do not sleep
    let started = Instant::now();
    let batch = client
        .get(format!("{base}/v1/batch"))
        .send()
        .await
        .map(|reply| reply.status().as_u16());
    match &batch {
        Err(err) => println!(
            "GET  /v1/batch            -> stopped in {} ms: {err}",
            started.elapsed().as_millis()
        ),
        Ok(status) => println!("GET  /v1/batch            -> {status}"),
    }
    Tour {
        get,
        refused_post,
        unkeyed_post,
        held_for,
        keyed_post,
        batch,
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn core::error::Error>> {
    let (base, answered) = start_provider().await?;

    // the two-line adoption
    let client = RetryClient::new(reqwest::Client::new(), RetryPolicy::new());

    let started = Instant::now();
    let tour = tour(&client, &base, &answered, tokio::time::sleep).await;
    assert_eq!(tour.get, (200, 2));
    assert_eq!(tour.refused_post, (200, 2));
    assert_eq!((tour.unkeyed_post.0, tour.unkeyed_post.1), (503, 1));
    assert!(tour.unkeyed_post.2.is_some());
    assert!(
        tour.held_for
            .is_some_and(|left| left <= Duration::from_millis(300))
    );
    assert_eq!(tour.keyed_post, (200, 2));
    match tour.batch {
        Err(err @ Error::RetryAfterBeyondLimit { .. }) => {
            assert_eq!(err.retry_after(), Some(Duration::from_secs(3600)));
        }
        other => return Err(format!("expected a Retry-After stop, got {other:?}").into()),
    }
    // three waits of at least 300 ms each, and not the hour
    assert!(started.elapsed() >= Duration::from_millis(900));
    Ok(())
}
