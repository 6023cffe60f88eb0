//! How a transport error (no response) becomes a [`Classification`].

use std::io;

use bayesretry_policy::{Classification, ErrorClass};

/// Most links of an error's `source` chain looked at for an I/O error.
const MAX_SOURCE_DEPTH: usize = 16;

/// The classification of a reqwest error (no response arrived).
///
/// - a timeout is retryable as [`ErrorClass::Timeout`];
/// - a failure to connect is retryable, as the I/O error underneath says:
///   [`ErrorClass::ConnectionRefused`] when nothing listens, otherwise
///   [`ErrorClass::Connect`] (DNS, TLS, no route, reset);
/// - a failure to connect because the connector cannot connect for the URL's
///   scheme at all — an `https://` URL when reqwest has no TLS backend
///   ("invalid URL, scheme is not http") — is permanent: no connection was
///   tried. So is a proxy's `407 Proxy Authentication Required` to the
///   `CONNECT` of a tunnel: the client's proxy credentials are wrong or
///   missing, which no retry changes, and the endpoint behind the proxy was
///   never reached. Other failures to connect with no I/O error underneath (a
///   proxy that answers its `CONNECT` with another error status, which may be
///   a passing 502 or 503) stay retryable as [`ErrorClass::Connect`];
/// - a request or body error (a connection reset mid-request, say) is retryable,
///   as its I/O error says, or [`ErrorClass::Unknown`];
/// - a builder error (a bad URL, a scheme the client does not allow) and a
///   redirect error (a loop, too many hops) are permanent.
///
/// A permanent error ends the call at its first attempt, and the policy learns
/// nothing from it: retried, the same request fails the same way, and a breaker
/// fed such failures would open on an endpoint that was never down. A network
/// failure to connect always carries the operating system's error (refused,
/// unreachable, reset, a name that does not resolve), so it stays retryable;
/// a DNS failure does too whatever the resolver's error type.
///
/// A status error, which reqwest makes only when asked (`error_for_status`),
/// is classified by its status, as the policy's table classifies it
/// ([`classify_status`](bayesretry_policy::classify_status)): a 401 or a 404
/// permanent, a 429, a 503 or a 529 retryable, each its own class. The crate's
/// own clients never make one (they classify the response itself, with its
/// `Retry-After`); a caller does, who retries a whole exchange under
/// `policy.call_with(endpoint, classify_reqwest_error)` — the send, the status
/// and the body, which can fail midway after the status arrived:
///
/// ```no_run
/// use bayesretry_http::classify_reqwest_error;
/// use bayesretry_policy::RetryPolicy;
///
/// # async fn demo(policy: RetryPolicy, client: reqwest::Client) {
/// let text = policy
///     .call_with("api.example.com", classify_reqwest_error)
///     .run(|_| async {
///         let response = client.get("http://api.example.com/v1/report").send().await?;
///         response.error_for_status()?.text().await
///     })
///     .await;
/// # let _ = text;
/// # }
/// ```
///
/// (A status error keeps no headers: such a loop cannot honour a
/// `Retry-After`, which [`RetryClient`](crate::RetryClient) does.)
pub fn classify_reqwest_error(err: &reqwest::Error) -> Classification {
    if err.is_builder() || err.is_redirect() {
        return Classification::Permanent;
    }
    if let Some(status) = err.status() {
        return bayesretry_policy::classify_status(status.as_u16());
    }
    if err.is_timeout() {
        return Classification::Retryable(ErrorClass::Timeout);
    }
    let class = io_kind(err).map(ErrorClass::from_io_kind);
    if err.is_connect() {
        return match class {
            None if !err.is_dns() && no_connection_can_be_made(err) => Classification::Permanent,
            Some(ErrorClass::Unknown) | None => Classification::Retryable(ErrorClass::Connect),
            Some(class) => Classification::Retryable(class),
        };
    }
    Classification::Retryable(class.unwrap_or(ErrorClass::Unknown))
}

/// Whether a classification names a failure to connect
/// ([`ErrorClass::ConnectionRefused`] or [`ErrorClass::Connect`]): the
/// request was never sent.
pub(crate) fn is_failure_to_connect(classification: &Classification) -> bool {
    matches!(
        classification.error_class(),
        Some(ErrorClass::ConnectionRefused | ErrorClass::Connect)
    )
}

/// Whether `err`'s source chain says that no retry could connect: the
/// connector has no way to connect for the URL's scheme (an `https://` URL
/// when reqwest has no TLS backend), or the proxy refused to open a tunnel
/// without credentials (`407`). The words of the HTTP and tunnel connectors
/// are the one sign they give. Read as text, and so only for these errors: if
/// the words ever change, the error is retried as any other failure to
/// connect, never made permanent by mistake.
fn no_connection_can_be_made(err: &(dyn core::error::Error + 'static)) -> bool {
    chain(err).any(|cause| {
        let text = cause.to_string();
        text.contains("scheme is not http") || text.contains("proxy authorization required")
    })
}

/// The kind of the first I/O error in `err`'s source chain.
pub(crate) fn io_kind(err: &(dyn core::error::Error + 'static)) -> Option<io::ErrorKind> {
    chain(err).find_map(|cause| cause.downcast_ref::<io::Error>().map(io::Error::kind))
}

/// `err` and its causes, the first [`MAX_SOURCE_DEPTH`] of them.
fn chain<'a>(
    err: &'a (dyn core::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn core::error::Error + 'static)> {
    core::iter::successors(Some(err), |cause| cause.source()).take(MAX_SOURCE_DEPTH)
}

/// The classification of an error a tower service returned (no response): as
/// the first I/O error in its source chain says
/// ([`classify_io_kind`](bayesretry_policy::classify_io_kind)), otherwise
/// retryable as [`ErrorClass::Unknown`]. A service whose errors mean more can pass its own
/// function to [`RetryLayer::with_classifier`](crate::RetryLayer::with_classifier).
pub fn classify_service_error(err: &(dyn core::error::Error + 'static)) -> Classification {
    if let Some(kind) = io_kind(err) {
        return bayesretry_policy::classify_io_kind(kind);
    }
    Classification::Retryable(ErrorClass::Unknown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Wrapper(io::Error);

    impl core::fmt::Display for Wrapper {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            f.write_str("wrapped")
        }
    }

    impl core::error::Error for Wrapper {
        fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn an_io_error_deep_in_the_chain_is_found() {
        let err = Wrapper(io::Error::from(io::ErrorKind::ConnectionReset));
        assert_eq!(io_kind(&err), Some(io::ErrorKind::ConnectionReset));
        assert_eq!(
            classify_service_error(&err),
            Classification::Retryable(ErrorClass::ConnectionReset)
        );
        let plain = core::fmt::Error;
        assert_eq!(io_kind(&plain), None);
        assert_eq!(
            classify_service_error(&plain),
            Classification::Retryable(ErrorClass::Unknown)
        );
    }

    #[test]
    fn a_bad_url_is_permanent() {
        let built = reqwest::Client::new().get("not a url").build();
        let err = built.err();
        assert!(err.is_some_and(|err| classify_reqwest_error(&err).is_permanent()));
    }
}
