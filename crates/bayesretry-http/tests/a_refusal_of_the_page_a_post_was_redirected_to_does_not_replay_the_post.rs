//! A POST answered with a redirect (303 or 302, the POST-redirect-GET pattern)
//! was processed: what the redirect leads to is another request, a GET that
//! reqwest follows. A refusal of that GET (a 429) says nothing about the
//! POST, so a POST without an idempotency key is not replayed after it; a
//! refusal of the POST itself still replays it. A client that follows no
//! redirects answers with the redirect itself, after one POST.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod support;

use bayesretry_http::NotRetried;
use http::Method;
use support::{answer, serve, virtual_client};

/// A server that answers a POST with `redirect` to `/v1/jobs/1`, the first
/// GET there with a 429, and any later request with a 200.
async fn processed_then_redirected(redirect: u16) -> support::Server {
    serve(move |seen| match (&seen.method, seen.index) {
        (&Method::POST, 0) => answer(redirect, &[("location", "/v1/jobs/1")]),
        (&Method::GET, 1) => answer(429, &[("retry-after-ms", "20")]),
        _ => answer(200, &[]),
    })
    .await
}

/// The POSTs `server` saw.
fn posts(server: &support::Server) -> usize {
    server
        .seen()
        .iter()
        .filter(|seen| seen.method == Method::POST)
        .count()
}

#[tokio::test]
async fn a_429_after_a_303_or_a_302_does_not_replay_the_post() {
    for redirect in [303, 302] {
        let server = processed_then_redirected(redirect).await;
        let (client, _) = virtual_client();

        let response = client
            .post(server.url("/v1/jobs"))
            .body(r#"{"job":"render"}"#)
            .send()
            .await
            .unwrap();

        assert_eq!(posts(&server), 1, "{redirect}");
        assert_eq!(response.status(), 429, "{redirect}");
        assert_eq!(
            response.extensions().get::<NotRetried>(),
            Some(&NotRetried::NotIdempotent(Method::POST)),
            "{redirect}"
        );
    }
}

#[tokio::test]
async fn a_get_that_is_redirected_is_still_retried_after_the_429() {
    let server = serve(|seen| match seen.index {
        0 => answer(303, &[("location", "/v1/jobs/1")]),
        1 => answer(429, &[("retry-after-ms", "20")]),
        _ => answer(200, &[]),
    })
    .await;
    let (client, _) = virtual_client();

    let response = client.get(server.url("/v1/jobs")).send().await.unwrap();

    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn a_429_of_the_post_itself_still_replays_it_credentials_in_its_url_or_not() {
    for userinfo in ["", "user:secret@"] {
        let server = serve(|seen| match seen.index {
            0 => answer(429, &[("retry-after-ms", "20")]),
            _ => answer(200, &[]),
        })
        .await;
        let (client, _) = virtual_client();
        let url = format!("http://{userinfo}{}/v1/jobs", server.addr);

        let response = client.post(url).body("{}").send().await.unwrap();

        assert_eq!(response.status(), 200, "{userinfo}");
        assert_eq!(posts(&server), 2, "{userinfo}");
    }
}

#[tokio::test]
async fn a_client_that_follows_no_redirects_answers_with_the_303_after_one_post() {
    // the way out for a POST without a key that a server may redirect to a
    // place that is down: a failure to connect there would read as the
    // POST's own, never sent, and replay it
    let dead = support::closed_port();
    let location = format!("http://{dead}/v1/jobs/1");
    let server = serve(move |seen| match seen.method {
        Method::POST => answer(303, &[("location", location.as_str())]),
        _ => answer(200, &[]),
    })
    .await;
    let (policy, _) = support::virtual_policy();
    let reqwest = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let client = bayesretry_http::RetryClient::new(reqwest, policy);

    let response = client
        .post(server.url("/v1/jobs"))
        .body("{}")
        .send()
        .await
        .unwrap();

    assert_eq!(response.status(), 303);
    assert_eq!(posts(&server), 1);
}

#[cfg(feature = "middleware")]
#[tokio::test]
async fn the_middleware_does_not_replay_it_either() {
    let server = processed_then_redirected(303).await;
    let (policy, _) = support::virtual_policy();
    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(bayesretry_http::RetryMiddleware::new(policy))
        .build();

    let response = client
        .post(server.url("/v1/jobs"))
        .body("{}")
        .send()
        .await
        .unwrap();

    assert_eq!(posts(&server), 1);
    assert_eq!(response.status(), 429);
}
