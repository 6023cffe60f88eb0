//! Each attempt sends the same request: method, headers and body, whether the
//! request was built with reqwest's calls or handed over already built.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod support;

use core::time::Duration;

use support::{answer, serve, virtual_client};

fn busy_twice() -> impl Fn(&support::Seen) -> http::Response<http_body_util::Full<bytes::Bytes>> {
    |seen| match seen.index {
        0 | 1 => answer(503, &[("retry-after-ms", "5")]),
        _ => answer(200, &[]),
    }
}

fn assert_all_alike(server: &support::Server) {
    let seen = server.seen();
    assert_eq!(seen.len(), 3);
    for attempt in &seen[1..] {
        assert_eq!(attempt.method, seen[0].method);
        assert_eq!(attempt.headers, seen[0].headers);
        assert_eq!(attempt.body, seen[0].body);
    }
}

#[tokio::test]
async fn a_get_with_headers_and_a_timeout() {
    let server = serve(busy_twice()).await;
    let (client, _) = virtual_client();

    let response = client
        .get(server.url("/v1/models?limit=5"))
        .header("x-trace", "t-1")
        .bearer_auth("sk-test")
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .unwrap();

    assert_eq!(response.status(), 200);
    assert_all_alike(&server);
    assert_eq!(server.seen()[2].headers["authorization"], "Bearer sk-test");
}

#[tokio::test]
async fn a_put_with_a_body() {
    let server = serve(busy_twice()).await;
    let (client, _) = virtual_client();

    let response = client
        .put(server.url("/v1/files/7"))
        .header("content-type", "application/json")
        .body("{\"name\":\"report\"}")
        .send()
        .await
        .unwrap();

    assert_eq!(response.status(), 200);
    assert_all_alike(&server);
    assert_eq!(server.seen()[2].body, "{\"name\":\"report\"}");
}

#[tokio::test]
async fn a_request_built_beforehand_and_executed() {
    let server = serve(busy_twice()).await;
    let (client, _) = virtual_client();
    let request = client
        .delete(server.url("/v1/files/7"))
        .header("x-trace", "t-2")
        .build()
        .unwrap();

    let response = client.execute(request).await.unwrap();

    assert_eq!(response.status(), 200);
    assert_all_alike(&server);
}
