//! Statuses the policy's table calls permanent are answers: sent once, returned
//! as they are.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod support;

use support::{answer, serve, virtual_client};

#[tokio::test]
async fn a_401_and_a_404_are_returned_after_one_attempt() {
    for status in [401_u16, 404, 400, 403, 422] {
        let server = serve(move |_| answer(status, &[("retry-after", "1")])).await;
        let (client, sleeper) = virtual_client();

        let response = client.get(server.url("/v1/users/42")).send().await.unwrap();

        assert_eq!(response.status().as_u16(), status);
        assert_eq!(server.requests(), 1, "status {status}");
        assert!(sleeper.delays().is_empty());
        // the body is the caller's to read
        assert_eq!(response.text().await.unwrap(), "{\"error\":\"busy\"}");
    }
}
