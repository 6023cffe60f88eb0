//! `RequestBuilder::json`, `query` and `form` (features `json`, `query`,
//! `form`) write the request as reqwest's calls of the same names write it, and
//! every attempt sends it again unchanged; a value that does not serialize
//! sends nothing.

#![cfg(all(feature = "json", feature = "query", feature = "form"))]
#![allow(
    clippy::unwrap_used,
    reason = "test code: a broken expectation must fail the test"
)]

extern crate alloc;

mod support;

use alloc::collections::BTreeMap;

use bayesretry_http::Error;
use support::{answer, serve, virtual_client};

/// Overloaded (529, a refusal: replayed even for a POST without a key) on the
/// first request, then 200.
async fn overloaded_once() -> support::Server {
    serve(|seen| match seen.index {
        0 => answer(529, &[("retry-after-ms", "5")]),
        _ => answer(200, &[]),
    })
    .await
}

#[tokio::test]
async fn a_json_body_is_sent_as_json_on_every_attempt() {
    let server = overloaded_once().await;
    let (client, _sleeper) = virtual_client();
    let body = BTreeMap::from([("model", "m"), ("prompt", "hi")]);

    let response = client
        .post(server.url("/v1/messages"))
        .json(&body)
        .send()
        .await
        .unwrap();

    assert_eq!(response.status(), 200);
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    for attempt in &seen {
        assert_eq!(attempt.body.as_ref(), br#"{"model":"m","prompt":"hi"}"#);
        assert_eq!(
            attempt.headers.get("content-type").unwrap(),
            "application/json"
        );
    }
}

#[tokio::test]
async fn query_pairs_are_added_to_the_url_of_every_attempt() {
    let server = overloaded_once().await;
    let (client, _sleeper) = virtual_client();

    let response = client
        .get(server.url("/v1/models?limit=5"))
        .query(&[("after", "m 1"), ("order", "asc")])
        .send()
        .await
        .unwrap();

    assert_eq!(response.status(), 200);
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    for attempt in &seen {
        assert_eq!(attempt.uri.query(), Some("limit=5&after=m+1&order=asc"));
    }
}

#[tokio::test]
async fn a_form_body_is_sent_url_encoded_on_every_attempt() {
    let server = overloaded_once().await;
    let (client, _sleeper) = virtual_client();

    let response = client
        .post(server.url("/oauth/token"))
        .form(&[("grant_type", "client_credentials"), ("scope", "a b")])
        .send()
        .await
        .unwrap();

    assert_eq!(response.status(), 200);
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    for attempt in &seen {
        assert_eq!(
            attempt.body.as_ref(),
            b"grant_type=client_credentials&scope=a+b"
        );
        assert_eq!(
            attempt.headers.get("content-type").unwrap(),
            "application/x-www-form-urlencoded"
        );
    }
}

#[tokio::test]
async fn a_json_value_that_does_not_serialize_sends_nothing() {
    let server = overloaded_once().await;
    let (client, _sleeper) = virtual_client();
    // JSON object keys must be strings: a map keyed by pairs has no JSON form
    let body = BTreeMap::from([((1_u8, 2_u8), "x")]);

    let result = client
        .post(server.url("/v1/messages"))
        .json(&body)
        .send()
        .await;

    assert!(matches!(result, Err(Error::Build(_))), "{result:?}");
    assert_eq!(server.requests(), 0);
}
