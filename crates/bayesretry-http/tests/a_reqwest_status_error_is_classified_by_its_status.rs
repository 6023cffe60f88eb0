//! `classify_reqwest_error` reads a status error (reqwest's `error_for_status`)
//! by its status, as the policy's table does: a 401 or a 404 is permanent and
//! sent once, a 503 retryable as itself. So a whole exchange — the send, the
//! status and a body that can fail midway — can be retried under
//! `policy.call_with(endpoint, classify_reqwest_error)`, as a closure is under
//! a plain retry loop.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a broken expectation must fail the test"
)]

extern crate alloc;

mod support;

use alloc::sync::Arc;
use core::sync::atomic::{AtomicUsize, Ordering};

use bayesretry_http::classify_reqwest_error;
use bayesretry_policy::{Classification, ErrorClass, RetryErrorKind};
use support::{OK_200, answer, classic_at_once, serve};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

/// reqwest's error for a response with `status`, as `error_for_status` makes it.
async fn status_error(status: u16) -> reqwest::Error {
    let server = serve(move |_| answer(status, &[])).await;
    let response = reqwest::get(server.url("/v1/x")).await.unwrap();
    response.error_for_status().unwrap_err()
}

#[tokio::test]
async fn a_status_error_is_classified_as_the_policys_table_classifies_its_status() {
    for status in [400, 401, 403, 404, 422] {
        assert_eq!(
            classify_reqwest_error(&status_error(status).await),
            Classification::Permanent,
            "{status}"
        );
    }
    for status in [408, 429, 500, 503, 529] {
        assert_eq!(
            classify_reqwest_error(&status_error(status).await),
            Classification::Retryable(ErrorClass::from_status(status)),
            "{status}"
        );
    }
}

#[tokio::test]
async fn a_401_from_error_for_status_is_sent_once() {
    let server = serve(|_| answer(401, &[])).await;
    let policy = classic_at_once(4);
    let client = reqwest::Client::new();

    let result = policy
        .call_with("api", classify_reqwest_error)
        .run(|_| async {
            let response = client.get(server.url("/v1/x")).send().await?;
            response.error_for_status()?.text().await
        })
        .await;

    assert!(matches!(
        result.unwrap_err().kind(),
        RetryErrorKind::Permanent(_)
    ));
    assert_eq!(server.requests(), 1);
}

/// A server on loopback that, for its `n`th connection (0-based), reads the
/// request head, writes `answer(n)` and closes the connection.
async fn serve_and_close(answer: fn(usize) -> &'static [u8]) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1/x", listener.local_addr().unwrap());
    let served = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&served);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let index = count.fetch_add(1, Ordering::SeqCst);
            let mut head = Vec::new();
            let mut buf = [0_u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let _ = stream.write_all(answer(index)).await;
            // dropped: the connection closes, mid-body for a short answer
        }
    });
    (url, served)
}

#[tokio::test]
async fn a_body_cut_off_midway_is_retried_with_the_whole_exchange() {
    // the first answer promises 100 bytes, sends 5 and closes the connection
    let (url, served) = serve_and_close(|index| match index {
        0 => b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\ndata:",
        _ => OK_200,
    })
    .await;
    let policy = classic_at_once(3);
    let client = reqwest::Client::new();

    let body = policy
        .call_with("api", classify_reqwest_error)
        .run(|_| async {
            let response = client.get(&url).send().await?;
            response.error_for_status()?.text().await
        })
        .await;

    assert_eq!(body.unwrap(), "ok");
    assert_eq!(served.load(Ordering::SeqCst), 2);
}
