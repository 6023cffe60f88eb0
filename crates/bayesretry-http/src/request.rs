//! [`Request`]: a request built by [`RequestBuilder::build`](crate::RequestBuilder::build),
//! reqwest's request with the retry options beside it.

use core::fmt;
use core::time::Duration;

use bayesretry_cost::CostModel;
use bayesretry_policy::CancelToken;
use http::{HeaderMap, Method, Version};
use reqwest::Body;
use url::Url;

use crate::exchange::PerCall;

/// A built request, ready for [`RetryClient::execute`](crate::RetryClient::execute):
/// reqwest's [`Request`](reqwest::Request) with the retry options its builder
/// was given: [`idempotent`](crate::RequestBuilder::idempotent),
/// [`endpoint`](crate::RequestBuilder::endpoint), a cancellation token
/// ([`with_cancel`](crate::RequestBuilder::with_cancel)) and a time limit
/// ([`with_max_elapsed`](crate::RequestBuilder::with_max_elapsed)).
///
/// # Why not reqwest's request
///
/// A caller builds a request before sending it to log it, to sign it, or to
/// send it later, and expects it to be sent as it was built. reqwest's
/// `Request` has no room for the retry options, so a build that returned it
/// would lose them without a word: the POST marked idempotent would go out
/// once and never be replayed, and the request given its own endpoint key
/// would be learned, and its breaker tripped, under its origin instead. This
/// type keeps them with the request, up to the send.
///
/// What a signer or a logger needs of the request is here — its
/// [method](Request::method), [URL](Request::url), [headers](Request::headers),
/// [body](Request::body), [timeout](Request::timeout) and
/// [version](Request::version), each with a `_mut` twin as on reqwest's
/// request — and reqwest's
/// request itself through [`inner`](Request::inner),
/// [`inner_mut`](Request::inner_mut) and [`into_inner`](Request::into_inner).
/// Every attempt sends a copy of the request as it is when
/// [`execute`](crate::RetryClient::execute) is called.
///
/// A plain `reqwest::Request` becomes one with the defaults (not opted in, the
/// endpoint key from the [`Config`](crate::Config)) through [`From`], which is
/// how `execute` takes both; [`idempotent`](Request::idempotent) and
/// [`endpoint`](Request::endpoint) give it the options.
///
/// ```no_run
/// use bayesretry_http::RetryClient;
/// use bayesretry_policy::RetryPolicy;
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let client = RetryClient::new(reqwest::Client::new(), RetryPolicy::new());
/// let mut request = client
///     .post("http://127.0.0.1:8080/v1/embeddings")
///     .body(r#"{"input":"hi"}"#)
///     .idempotent()
///     .endpoint("embeddings")
///     .build()?;
/// request.headers_mut().insert("x-signature", "sig".parse()?);
/// assert!(request.is_idempotent());
/// assert_eq!(request.endpoint_key(), Some("embeddings"));
/// let response = client.execute(request).await?; // replayed after a 503, as if sent
/// # let _ = response;
/// # Ok(())
/// # }
/// ```
pub struct Request {
    pub(crate) inner: reqwest::Request,
    pub(crate) idempotent: bool,
    pub(crate) endpoint: Option<String>,
    /// Its cancellation token and its own time limit.
    pub(crate) per_call: PerCall,
    /// Made by reqwest's builder and not handed out mutably since: its
    /// extensions hold at most its timeout, so a copy may skip them (see
    /// `client::copy`).
    pub(crate) built: bool,
}

impl Request {
    /// `request`, with the defaults: not opted in, and the endpoint key from
    /// the client's [`Config`](crate::Config).
    pub fn new(request: reqwest::Request) -> Request {
        Request {
            inner: request,
            idempotent: false,
            endpoint: None,
            per_call: PerCall::default(),
            built: false,
        }
    }

    /// Says that the request is safe to send twice whatever its method, as
    /// [`RequestBuilder::idempotent`](crate::RequestBuilder::idempotent) does.
    #[must_use]
    pub fn idempotent(mut self) -> Request {
        self.idempotent = true;
        self
    }

    /// The endpoint key of this request, as
    /// [`RequestBuilder::endpoint`](crate::RequestBuilder::endpoint) sets it:
    /// a route template, never the raw URL.
    #[must_use]
    pub fn endpoint(mut self, endpoint: impl Into<String>) -> Request {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// Ends the call when `token` is cancelled, as
    /// [`RequestBuilder::with_cancel`](crate::RequestBuilder::with_cancel) does.
    #[must_use]
    pub fn with_cancel(mut self, token: CancelToken) -> Request {
        self.per_call.cancel = Some(token);
        self
    }

    /// Gives this call at most `max_elapsed`, as
    /// [`RequestBuilder::with_max_elapsed`](crate::RequestBuilder::with_max_elapsed)
    /// does.
    #[must_use]
    pub fn with_max_elapsed(mut self, max_elapsed: Duration) -> Request {
        self.per_call.max_elapsed = Some(max_elapsed);
        self
    }

    /// Prices this call's retries, as
    /// [`RequestBuilder::with_cost_model`](crate::RequestBuilder::with_cost_model)
    /// does.
    #[must_use]
    pub fn with_cost_model(mut self, cost_model: CostModel) -> Request {
        self.per_call.cost_model = Some(cost_model);
        self
    }

    /// Whether the request was said to be safe to send twice.
    pub fn is_idempotent(&self) -> bool {
        self.idempotent
    }

    /// The request's own endpoint key, if it was given one; `None` when the
    /// client's [`Config`](crate::Config) gives it.
    pub fn endpoint_key(&self) -> Option<&str> {
        self.endpoint.as_deref()
    }

    /// The request's cancellation token, if it was given one
    /// ([`with_cancel`](Request::with_cancel)).
    pub fn cancel_token(&self) -> Option<&CancelToken> {
        self.per_call.cancel.as_ref()
    }

    /// The request's own time limit, if it was given one
    /// ([`with_max_elapsed`](Request::with_max_elapsed)).
    pub fn max_elapsed(&self) -> Option<Duration> {
        self.per_call.max_elapsed
    }

    /// The request's own price, if it was given one
    /// ([`with_cost_model`](Request::with_cost_model)).
    pub fn cost_model(&self) -> Option<CostModel> {
        self.per_call.cost_model
    }

    /// The method.
    pub fn method(&self) -> &Method {
        self.inner.method()
    }

    /// The URL.
    pub fn url(&self) -> &Url {
        self.inner.url()
    }

    /// The headers.
    pub fn headers(&self) -> &HeaderMap {
        self.inner.headers()
    }

    /// The headers, to add one (a signature, a trace id) before the send.
    pub fn headers_mut(&mut self) -> &mut HeaderMap {
        self.inner.headers_mut()
    }

    /// The method, to change it before the send.
    ///
    /// Whether the request is replayed follows the method it has when it is
    /// sent: a GET made a POST here is replayed only if it was said to be
    /// [idempotent](Request::idempotent).
    pub fn method_mut(&mut self) -> &mut Method {
        self.inner.method_mut()
    }

    /// The URL, to change it before the send (a signer that adds a query
    /// parameter). A request without its own
    /// [endpoint key](Request::endpoint_key) is learned under the origin of
    /// the URL it has when it is sent.
    pub fn url_mut(&mut self) -> &mut Url {
        self.inner.url_mut()
    }

    /// The body, if any.
    pub fn body(&self) -> Option<&Body> {
        self.inner.body()
    }

    /// The body, to set or replace it before the send. A body that is a
    /// stream can be sent only once, so a request given one is not retried.
    pub fn body_mut(&mut self) -> &mut Option<Body> {
        self.inner.body_mut()
    }

    /// reqwest's timeout of each attempt, if any.
    pub fn timeout(&self) -> Option<&Duration> {
        self.inner.timeout()
    }

    /// reqwest's timeout of each attempt, to set or change it before the send.
    pub fn timeout_mut(&mut self) -> &mut Option<Duration> {
        self.inner.timeout_mut()
    }

    /// The HTTP version.
    pub fn version(&self) -> Version {
        self.inner.version()
    }

    /// The HTTP version, to change it before the send.
    pub fn version_mut(&mut self) -> &mut Version {
        self.inner.version_mut()
    }

    /// reqwest's request.
    pub fn inner(&self) -> &reqwest::Request {
        &self.inner
    }

    /// reqwest's request, to change anything in it; the retry options stay.
    pub fn inner_mut(&mut self) -> &mut reqwest::Request {
        // whatever is put in its place may carry extensions that a copy must keep
        self.built = false;
        &mut self.inner
    }

    /// reqwest's request, without the retry options: sent through this
    /// type's client again (`execute(request.into_inner())`), it has the
    /// defaults.
    pub fn into_inner(self) -> reqwest::Request {
        self.inner
    }

    /// A copy, with the same options, unless the body is a stream (which can
    /// be sent only once).
    pub fn try_clone(&self) -> Option<Request> {
        Some(Request {
            inner: self.inner.try_clone()?,
            idempotent: self.idempotent,
            endpoint: self.endpoint.clone(),
            per_call: self.per_call.clone(),
            built: self.built,
        })
    }
}

impl From<reqwest::Request> for Request {
    /// See [`Request::new`].
    fn from(request: reqwest::Request) -> Request {
        Request::new(request)
    }
}

impl fmt::Debug for Request {
    /// reqwest's request (method, URL and headers, the sensitive ones such as
    /// those of `bearer_auth` hidden; not the body), and the options.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Request")
            .field("inner", &self.inner)
            .field("idempotent", &self.idempotent)
            .field("endpoint", &self.endpoint)
            .field("cancel", &self.per_call.cancel)
            .field("max_elapsed", &self.per_call.max_elapsed)
            .field("cost_model", &self.per_call.cost_model)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get() -> reqwest::Request {
        let url = Url::parse("http://api.example.com/v1/models").unwrap();
        reqwest::Request::new(Method::GET, url)
    }

    #[test]
    fn a_request_handed_out_mutably_is_no_longer_taken_as_reqwest_built_it() {
        let mut request = Request {
            built: true,
            ..Request::new(get())
        };
        assert!(request.try_clone().unwrap().built);
        let _ = request.inner_mut();
        assert!(!request.built);
        assert!(!request.try_clone().unwrap().built);
    }

    #[test]
    fn the_debug_shows_the_options_and_hides_a_bearer_token() {
        let mut inner = get();
        let mut token = http::HeaderValue::from_static("Bearer sk-secret");
        token.set_sensitive(true);
        inner.headers_mut().insert("authorization", token);
        let request = Request::new(inner).idempotent().endpoint("models");

        let text = format!("{request:?}");

        assert!(text.contains("idempotent: true"), "{text}");
        assert!(text.contains("endpoint: Some(\"models\")"), "{text}");
        assert!(text.contains("api.example.com"), "{text}");
        assert!(!text.contains("sk-secret"), "{text}");
    }
}
