//! A request built first (to log it, to sign it) and sent with
//! `RetryClient::execute` keeps what its builder was told: a POST marked
//! `idempotent()` is replayed after any failure the policy retries, and one
//! given an `endpoint(..)` is learned under that key, as when it is sent
//! straight from the builder. A clone of it keeps them too, and a plain
//! `reqwest::Request` is still executed, with the defaults.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod support;

use support::{serve_failing_once, virtual_client};

/// A server that answers a 503 first, then 200s.
async fn busy_then_ok() -> support::Server {
    serve_failing_once(503, &[("retry-after-ms", "5")]).await
}

#[tokio::test]
async fn an_idempotent_post_built_first_is_replayed_after_a_503() {
    let server = busy_then_ok().await;
    let (client, _) = virtual_client();
    let request = client
        .post(server.url("/v1/embeddings"))
        .body("{}")
        .idempotent()
        .build()
        .unwrap();

    let response = client.execute(request).await.unwrap();

    assert_eq!(response.status(), 200);
    assert_eq!(server.requests(), 2);
}

#[tokio::test]
async fn a_request_built_first_is_learned_under_its_endpoint_key() {
    let server = busy_then_ok().await;
    let (client, _) = virtual_client();
    let request = client
        .get(server.url("/v1/models/7"))
        .endpoint("models/{id}")
        .build()
        .unwrap();

    let response = client.execute(request).await.unwrap();

    assert_eq!(response.status(), 200);
    assert!(client.policy().breaker_state("models/{id}").is_some());
    assert!(client.policy().breaker_state(&server.url("")).is_none());
}

#[tokio::test]
async fn a_header_added_after_the_build_goes_out_on_every_attempt() {
    // the reason to build first: sign the request as it will be sent
    let server = busy_then_ok().await;
    let (client, _) = virtual_client();
    let mut request = client
        .post(server.url("/v1/embeddings"))
        .body("{}")
        .idempotent()
        .build()
        .unwrap();
    request
        .headers_mut()
        .insert("x-signature", http::HeaderValue::from_static("sig-1"));

    let response = client.execute(request).await.unwrap();

    assert_eq!(response.status(), 200);
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    for attempt in seen {
        assert_eq!(attempt.headers["x-signature"], "sig-1");
    }
}

#[tokio::test]
async fn a_clone_of_a_built_request_keeps_its_options() {
    let server = busy_then_ok().await;
    let (client, _) = virtual_client();
    let request = client
        .post(server.url("/v1/embeddings"))
        .body("{}")
        .idempotent()
        .endpoint("embeddings")
        .build()
        .unwrap();
    let copy = request.try_clone().unwrap();
    drop(request);

    let response = client.execute(copy).await.unwrap();

    assert_eq!(response.status(), 200);
    assert_eq!(server.requests(), 2);
    assert!(client.policy().breaker_state("embeddings").is_some());
}

#[tokio::test]
async fn a_plain_reqwest_request_is_executed_with_the_defaults() {
    // a POST without a key is not replayed after a 503; a GET is, under the
    // origin's key
    let server = busy_then_ok().await;
    let (client, sleeper) = virtual_client();
    let post = reqwest::Client::new()
        .post(server.url("/v1/chat"))
        .body("{}")
        .build()
        .unwrap();

    let response = client.execute(post).await.unwrap();

    assert_eq!(response.status(), 503);
    assert_eq!(server.requests(), 1);
    // the 503's wait holds the origin for every request until it runs out
    sleeper
        .clock()
        .advance(core::time::Duration::from_millis(5));

    let get = reqwest::Client::new()
        .get(server.url("/v1/models"))
        .build()
        .unwrap();

    let response = client.execute(get).await.unwrap();

    assert_eq!(response.status(), 200);
    let origin = format!("http://{}", server.addr);
    assert!(client.policy().breaker_state(&origin).is_some());
}

#[tokio::test]
async fn a_plain_reqwest_request_can_be_given_the_options() {
    let server = busy_then_ok().await;
    let (client, _) = virtual_client();
    let post = reqwest::Client::new()
        .post(server.url("/v1/embeddings"))
        .body("{}")
        .build()
        .unwrap();
    let request = bayesretry_http::Request::from(post)
        .idempotent()
        .endpoint("embeddings");

    let response = client.execute(request).await.unwrap();

    assert_eq!(response.status(), 200);
    assert_eq!(server.requests(), 2);
    assert!(client.policy().breaker_state("embeddings").is_some());
}

#[tokio::test]
async fn reqwest_s_request_taken_out_leaves_the_options_behind() {
    let server = busy_then_ok().await;
    let (client, _) = virtual_client();
    let request = client
        .post(server.url("/v1/embeddings"))
        .body("{}")
        .idempotent()
        .build()
        .unwrap();
    assert!(request.is_idempotent());

    let response = client.execute(request.into_inner()).await.unwrap();

    assert_eq!(response.status(), 503);
    assert_eq!(server.requests(), 1);
}

#[tokio::test]
async fn a_url_method_and_timeout_changed_after_the_build_go_out_on_every_attempt() {
    // a signer that adds a query parameter, a caller that turns a GET into a
    // POST it has said is idempotent, and a timeout set late
    let server = busy_then_ok().await;
    let (client, _) = virtual_client();
    let mut request = client
        .get(server.url("/v1/embeddings"))
        .idempotent()
        .build()
        .unwrap();
    request
        .url_mut()
        .query_pairs_mut()
        .append_pair("signature", "sig-1");
    *request.method_mut() = http::Method::POST;
    *request.body_mut() = Some(reqwest::Body::from("{}"));
    *request.timeout_mut() = Some(core::time::Duration::from_secs(30));
    assert_eq!(
        request.timeout(),
        Some(&core::time::Duration::from_secs(30))
    );

    let response = client.execute(request).await.unwrap();

    assert_eq!(response.status(), 200);
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    for attempt in seen {
        assert_eq!(attempt.method, http::Method::POST);
        assert_eq!(attempt.uri.query(), Some("signature=sig-1"));
        assert_eq!(attempt.body, "{}");
    }
}

#[tokio::test]
async fn a_post_made_from_a_get_after_the_build_is_not_replayed_unless_said_idempotent() {
    let server = busy_then_ok().await;
    let (client, _) = virtual_client();
    let mut request = client.get(server.url("/v1/chat")).build().unwrap();
    *request.method_mut() = http::Method::POST;

    let response = client.execute(request).await.unwrap();

    assert_eq!(response.status(), 503);
    assert_eq!(server.requests(), 1);
}
