//! [`RetryClient`], a `reqwest::Client` whose sends are retried, and its
//! [`RequestBuilder`].

use alloc::borrow::Cow;
use alloc::sync::Arc;
use core::fmt;
use core::time::Duration;

use bayesretry_cost::CostModel;
use bayesretry_policy::{CancelToken, RetryPolicy};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Version};
use reqwest::{Body, IntoUrl, Response};

use crate::classify::classify_reqwest_error;
use crate::config::{Config, NotRetried};
use crate::endpoint::Target;
use crate::error::Error;
use crate::exchange::{OnlyRefusals, PerCall, exchange, once};
use crate::request::Request;

/// A `reqwest::Client` whose requests are retried under a [`RetryPolicy`].
///
/// The request-building calls are reqwest's — `get`, `post`, `put`, `patch`,
/// `delete`, `head`, `request(method, url)`, then `header`, `body`, `timeout`
/// … and `.send().await` — so adopting it changes the line that makes the
/// client and nothing else. Cheap to clone: the client, the policy and the
/// settings are all shared.
///
/// ```no_run
/// use bayesretry_http::RetryClient;
/// use bayesretry_policy::RetryPolicy;
///
/// # async fn demo() -> Result<(), bayesretry_http::Error> {
/// let client = RetryClient::new(reqwest::Client::new(), RetryPolicy::new());
/// let response = client.get("http://127.0.0.1:8080/v1/models").send().await?;
/// println!("{}", response.status());
/// # Ok(())
/// # }
/// ```
///
/// What a send returns: see [`Error`]. In short, a response is returned whatever
/// its status once the policy stops retrying, as reqwest does; an error means no
/// response, or a `Retry-After` the policy would not honour.
#[derive(Clone)]
pub struct RetryClient {
    client: reqwest::Client,
    shared: Arc<Shared>,
}

/// What every request of a client shares: one `Arc` for a builder to hold.
#[derive(Debug)]
struct Shared {
    policy: RetryPolicy,
    config: Config,
}

impl fmt::Debug for RetryClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryClient")
            .field("policy", &self.shared.policy)
            .field("config", &self.shared.config)
            .finish_non_exhaustive()
    }
}

impl RetryClient {
    /// Wraps `client`: its sends are retried under `policy`, with the default
    /// [`Config`].
    pub fn new(client: reqwest::Client, policy: RetryPolicy) -> RetryClient {
        RetryClient {
            client,
            shared: Arc::new(Shared {
                policy,
                config: Config::new(),
            }),
        }
    }

    /// The same client with these settings.
    #[must_use]
    pub fn with_config(mut self, config: Config) -> RetryClient {
        self.shared = Arc::new(Shared {
            policy: self.shared.policy.clone(),
            config,
        });
        self
    }

    /// The wrapped reqwest client, for a request that must not be retried.
    pub fn inner(&self) -> &reqwest::Client {
        &self.client
    }

    /// The policy: what it learned, its breakers.
    pub fn policy(&self) -> &RetryPolicy {
        &self.shared.policy
    }

    /// The settings.
    pub fn config(&self) -> &Config {
        &self.shared.config
    }

    /// A GET request.
    pub fn get<U: IntoUrl>(&self, url: U) -> RequestBuilder {
        self.request(Method::GET, url)
    }

    /// A POST request: replayed after any failure only with an idempotency key
    /// or [`RequestBuilder::idempotent`], otherwise only after a failure to
    /// connect or a refusal status ([`Config::with_refusal_statuses`]).
    pub fn post<U: IntoUrl>(&self, url: U) -> RequestBuilder {
        self.request(Method::POST, url)
    }

    /// A PUT request.
    pub fn put<U: IntoUrl>(&self, url: U) -> RequestBuilder {
        self.request(Method::PUT, url)
    }

    /// A PATCH request: replayed after any failure only with an idempotency
    /// key or [`RequestBuilder::idempotent`], otherwise only after a failure to
    /// connect or a refusal status ([`Config::with_refusal_statuses`]).
    pub fn patch<U: IntoUrl>(&self, url: U) -> RequestBuilder {
        self.request(Method::PATCH, url)
    }

    /// A DELETE request.
    pub fn delete<U: IntoUrl>(&self, url: U) -> RequestBuilder {
        self.request(Method::DELETE, url)
    }

    /// A HEAD request.
    pub fn head<U: IntoUrl>(&self, url: U) -> RequestBuilder {
        self.request(Method::HEAD, url)
    }

    /// A request with any method.
    pub fn request<U: IntoUrl>(&self, method: Method, url: U) -> RequestBuilder {
        RequestBuilder {
            shared: Arc::clone(&self.shared),
            inner: self.client.request(method, url),
            idempotent: false,
            endpoint: None,
            per_call: PerCall::default(),
        }
    }

    /// Sends a built request under the policy: a [`Request`] from
    /// [`RequestBuilder::build`], with the options its builder was given, or
    /// a plain `reqwest::Request`, with the defaults (not opted in, the
    /// endpoint key from the [`Config`]).
    ///
    /// # Errors
    ///
    /// See [`Error`].
    pub async fn execute(&self, request: impl Into<Request>) -> Result<Response, Error> {
        let Request {
            inner,
            idempotent,
            endpoint,
            per_call,
            built,
        } = request.into();
        let options = Options {
            opted_in: idempotent,
            endpoint,
            per_call,
        };
        dispatch(&self.client, &self.shared, inner, options, built).await
    }
}

/// A request's retry options, beside reqwest's request.
struct Options {
    /// Said to be safe to send twice.
    opted_in: bool,
    /// Its own endpoint key.
    endpoint: Option<String>,
    /// Its cancellation token and its own time limit.
    per_call: PerCall,
}

/// Sends `request` under the client's policy; `built` says it was made by
/// reqwest's builder (see [`copy`]).
async fn dispatch(
    client: &reqwest::Client,
    shared: &Shared,
    request: reqwest::Request,
    options: Options,
    built: bool,
) -> Result<Response, Error> {
    let Options {
        opted_in,
        endpoint,
        per_call,
    } = options;
    let config = &shared.config;
    let endpoint = match endpoint {
        Some(endpoint) => Cow::Owned(endpoint),
        None => endpoint_of(config, &request),
    };
    let only_refusals = match replay_of(config, &request, opted_in) {
        Ok(only_refusals) => only_refusals,
        Err(why) => {
            // sent once: the request itself, no copy
            let endpoint = endpoint.into_owned();
            return once(
                &endpoint,
                why,
                per_call.cancel.as_ref(),
                client.execute(request),
            )
            .await;
        }
    };
    let only_refusals = only_refusals.map(|why| OnlyRefusals {
        why,
        // a failure to connect to where a redirect led reads as one before
        // the request was sent: reqwest reports it with the URL requested and
        // keeps no trace of the redirect (see Config::with_refusal_statuses)
        never_sent: reqwest::Error::is_connect,
        redirected: |response: &Response| redirected(&request, response),
    });
    exchange(
        &shared.policy,
        config,
        &endpoint,
        classify_reqwest_error,
        only_refusals,
        per_call,
        || {
            let request = copy(&request, built);
            // reqwest's timeout of a request starts when its send is called:
            // called here, at the attempt's first poll, after the drain of the
            // failed response before it, so that the drain is not counted in it
            async move { client.execute(request).await }
        },
    )
    .await
}

/// The endpoint key of a reqwest request. The default key, the origin, is
/// borrowed from the URL's own text when it has no credentials in it: nothing
/// is allocated for it.
pub(crate) fn endpoint_of<'r>(config: &Config, request: &'r reqwest::Request) -> Cow<'r, str> {
    let url = request.url();
    if config.endpoint.is_none() && url.username().is_empty() && url.password().is_none() {
        return Cow::Borrowed(&url[..url::Position::BeforePath]);
    }
    let target = Target::new(
        request.method(),
        url.scheme(),
        url.host_str().unwrap_or_default(),
        url.port(),
        url.path(),
    );
    Cow::Owned(config.endpoint_of(&target))
}

/// Whether `response` answers another request than `request`: one that a
/// redirect led to. reqwest follows redirects, and a response's URL is that of
/// the last request made. The URLs are compared without their credentials,
/// which reqwest moves into a header before sending, and their fragments,
/// which are never sent.
///
/// A redirect back to the URL requested cannot be told apart: reqwest keeps
/// no other trace of the redirects it followed. Nor can a failure to connect
/// on the way: reqwest reports it with the URL first requested.
pub(crate) fn redirected(request: &reqwest::Request, response: &Response) -> bool {
    resource(request.url()) != resource(response.url())
}

/// What of a URL names the resource requested: its scheme, and its host,
/// port, path and query.
fn resource(url: &url::Url) -> (&str, &str) {
    (
        url.scheme(),
        &url[url::Position::BeforeHost..url::Position::AfterQuery],
    )
}

/// How a reqwest request may be replayed: not at all when its body is a stream
/// (`Err`), after a refusal only when it is not safe to replay (`Ok(Some(why))`:
/// neither an idempotent method, nor a key, nor an opt-in), otherwise after any
/// failure (`Ok(None)`).
pub(crate) fn replay_of(
    config: &Config,
    request: &reqwest::Request,
    opted_in: bool,
) -> Result<Option<NotRetried>, NotRetried> {
    if request.body().is_some_and(|body| body.as_bytes().is_none()) {
        return Err(NotRetried::BodyNotClonable);
    }
    Ok(config
        .replayable(request.method(), request.headers(), opted_in)
        .err())
}

/// A copy of a request whose body is in memory, for one attempt.
///
/// reqwest's `try_clone` always sets up the copy's extensions, the map where a
/// request keeps its per-request settings, even when there is nothing in it:
/// most of the cost of a copy. A request made by reqwest's builder (`built`)
/// keeps only its timeout there, so one without a timeout and without a body is
/// copied field by field instead; any other goes through `try_clone`, which
/// copies whatever the extensions hold.
#[expect(
    clippy::expect_used,
    reason = "called only for a request whose body was checked to be in memory \
              (Body::as_bytes), which reqwest's try_clone always copies"
)]
pub(crate) fn copy(request: &reqwest::Request, built: bool) -> reqwest::Request {
    if built && request.body().is_none() && request.timeout().is_none() {
        let mut copy = reqwest::Request::new(request.method().clone(), request.url().clone());
        *copy.headers_mut() = request.headers().clone();
        *copy.version_mut() = request.version();
        return copy;
    }
    request
        .try_clone()
        .expect("a request with an in-memory body clones")
}

/// A request being built: reqwest's builder, with the retry options beside it.
///
/// Every call reqwest's builder has without a cargo feature is here under the
/// same name, and so are `json`, `query` and `form`, behind this crate's
/// features of the same names (which turn on reqwest's); for the others
/// (`multipart`, turned on in your reqwest dependency) use
/// [`with`](RequestBuilder::with).
#[must_use = "a request does nothing until sent"]
pub struct RequestBuilder {
    shared: Arc<Shared>,
    inner: reqwest::RequestBuilder,
    idempotent: bool,
    endpoint: Option<String>,
    per_call: PerCall,
}

impl fmt::Debug for RequestBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestBuilder")
            .field("inner", &self.inner)
            .field("idempotent", &self.idempotent)
            .field("endpoint", &self.endpoint)
            .field("cancel", &self.per_call.cancel)
            .field("max_elapsed", &self.per_call.max_elapsed)
            .field("cost_model", &self.per_call.cost_model)
            .finish_non_exhaustive()
    }
}

impl RequestBuilder {
    /// Adds a header.
    pub fn header<K, V>(mut self, key: K, value: V) -> RequestBuilder
    where
        HeaderName: TryFrom<K>,
        <HeaderName as TryFrom<K>>::Error: Into<http::Error>,
        HeaderValue: TryFrom<V>,
        <HeaderValue as TryFrom<V>>::Error: Into<http::Error>,
    {
        self.inner = self.inner.header(key, value);
        self
    }

    /// Adds headers.
    pub fn headers(mut self, headers: HeaderMap) -> RequestBuilder {
        self.inner = self.inner.headers(headers);
        self
    }

    /// HTTP basic authentication.
    pub fn basic_auth<U: fmt::Display, P: fmt::Display>(
        mut self,
        username: U,
        password: Option<P>,
    ) -> RequestBuilder {
        self.inner = self.inner.basic_auth(username, password);
        self
    }

    /// HTTP bearer authentication.
    pub fn bearer_auth<T: fmt::Display>(mut self, token: T) -> RequestBuilder {
        self.inner = self.inner.bearer_auth(token);
        self
    }

    /// The body. A stream body makes the request one that is sent once
    /// ([`NotRetried::BodyNotClonable`]).
    pub fn body<T: Into<Body>>(mut self, body: T) -> RequestBuilder {
        self.inner = self.inner.body(body);
        self
    }

    /// The body, `json` serialized as JSON, with `Content-Type:
    /// application/json` unless a content type is set already: reqwest's
    /// `json`. The body is in memory, so the request can be replayed.
    /// Feature `json`.
    ///
    /// A value that does not serialize (a map with keys that are not strings)
    /// makes the request fail to build, with [`Error::Build`], as reqwest's
    /// `send` fails: nothing is sent.
    #[cfg(feature = "json")]
    #[cfg_attr(docsrs, doc(cfg(feature = "json")))]
    pub fn json<T: serde::Serialize + ?Sized>(mut self, json: &T) -> RequestBuilder {
        self.inner = self.inner.json(json);
        self
    }

    /// Adds `query`, serialized as URL-encoded pairs, to the URL's query:
    /// reqwest's `query`. Feature `query`.
    ///
    /// A value that does not serialize as pairs makes the request fail to
    /// build, with [`Error::Build`]: nothing is sent.
    #[cfg(feature = "query")]
    #[cfg_attr(docsrs, doc(cfg(feature = "query")))]
    pub fn query<T: serde::Serialize + ?Sized>(mut self, query: &T) -> RequestBuilder {
        self.inner = self.inner.query(query);
        self
    }

    /// The body, `form` URL-encoded, with `Content-Type:
    /// application/x-www-form-urlencoded`: reqwest's `form`. Feature `form`.
    ///
    /// A value that does not serialize as pairs makes the request fail to
    /// build, with [`Error::Build`]: nothing is sent.
    #[cfg(feature = "form")]
    #[cfg_attr(docsrs, doc(cfg(feature = "form")))]
    pub fn form<T: serde::Serialize + ?Sized>(mut self, form: &T) -> RequestBuilder {
        self.inner = self.inner.form(form);
        self
    }

    /// A timeout for each attempt, from its start to the end of its response
    /// headers and body; a timed-out attempt is retryable as
    /// [`ErrorClass::Timeout`](bayesretry_policy::ErrorClass::Timeout).
    pub fn timeout(mut self, timeout: Duration) -> RequestBuilder {
        self.inner = self.inner.timeout(timeout);
        self
    }

    /// The HTTP version.
    pub fn version(mut self, version: Version) -> RequestBuilder {
        self.inner = self.inner.version(version);
        self
    }

    /// Any other change to reqwest's builder: `.with(|b| b.multipart(form))`.
    pub fn with(
        mut self,
        change: impl FnOnce(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
    ) -> RequestBuilder {
        self.inner = change(self.inner);
        self
    }

    /// Says that the request is safe to send twice whatever its method: the
    /// server deduplicates it, or a duplicate does no harm. It is then replayed
    /// after any failure the policy retries, not only after a refusal.
    pub fn idempotent(mut self) -> RequestBuilder {
        self.idempotent = true;
        self
    }

    /// The endpoint key of this request, instead of the one
    /// [`Config::with_endpoint`] or the origin gives: a route template, never the
    /// raw URL.
    pub fn endpoint(mut self, endpoint: impl Into<String>) -> RequestBuilder {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// Ends the call when `token` is cancelled: a pending backoff or
    /// `Retry-After` wait is cut short, no further attempt starts, and the send
    /// fails with [`Error::Cancelled`] and the reason given to
    /// [`CancelToken::cancel`] (an attempt in flight runs to its end first; drop
    /// the send's future to cut that short too). For an agent whose user
    /// pressed stop, or a job whose caller went away. A request whose body is
    /// a stream is sent once, outside the policy: a token cancelled before the
    /// send keeps it from going out (`attempts: 0`), but once sent it runs to
    /// its end; drop its future to cut it short.
    pub fn with_cancel(mut self, token: CancelToken) -> RequestBuilder {
        self.per_call.cancel = Some(token);
        self
    }

    /// Gives this call at most `max_elapsed`, counted from the send on the
    /// policy's clock: for a caller that knows how long it has (an agent's step
    /// with 12 s left, a handler whose own client set a deadline). No attempt
    /// starts after it and no backoff or `Retry-After` wait that would cross it
    /// is slept: the send returns the last failed response, as when the policy
    /// stops for any other reason, or fails with the last transport error
    /// ([`Error::Transport`], stopped by
    /// [`Reason::Deadline`](bayesretry_policy::Reason::Deadline)), with
    /// [`Error::RetryAfterPastDeadline`] (the server's wait crossed it where the
    /// backoff would not), or, when the policy's per-attempt timeout cut the
    /// last attempt off, with [`Error::AttemptTimedOut`] — where a timeout
    /// around the send's future would drop all of them. With the policy's own
    /// [`max_elapsed`](bayesretry_policy::Builder::with_max_elapsed), the
    /// earlier of the two holds (see
    /// [`Call::with_max_elapsed`](bayesretry_policy::Call::with_max_elapsed)).
    /// An attempt in flight runs to its end; reqwest's
    /// [`timeout`](RequestBuilder::timeout) bounds each attempt. A request
    /// whose body is a stream is sent once, and this does not bound it.
    pub fn with_max_elapsed(mut self, max_elapsed: Duration) -> RequestBuilder {
        self.per_call.max_elapsed = Some(max_elapsed);
        self
    }

    /// Prices this call's retries with its own success value and attempt
    /// cost, over the odds its endpoint has taught the policy: an answer a
    /// user waits for against a prefetch's, at the same endpoint. See
    /// [`Call::with_cost_model`](bayesretry_policy::Call::with_cost_model);
    /// an endpoint is priced apart with
    /// [`Builder::with_endpoint_cost`](bayesretry_policy::Builder::with_endpoint_cost).
    /// A request whose body is a stream is sent once, and this does not
    /// price it.
    pub fn with_cost_model(mut self, cost_model: CostModel) -> RequestBuilder {
        self.per_call.cost_model = Some(cost_model);
        self
    }

    /// A copy of the builder, unless its body is a stream.
    pub fn try_clone(&self) -> Option<RequestBuilder> {
        Some(RequestBuilder {
            shared: Arc::clone(&self.shared),
            inner: self.inner.try_clone()?,
            idempotent: self.idempotent,
            endpoint: self.endpoint.clone(),
            per_call: self.per_call.clone(),
        })
    }

    /// The request, built, with its retry options: for a caller that logs or
    /// signs it before [`RetryClient::execute`] sends it. The options
    /// ([`idempotent`](RequestBuilder::idempotent),
    /// [`endpoint`](RequestBuilder::endpoint),
    /// [`with_cancel`](RequestBuilder::with_cancel),
    /// [`with_max_elapsed`](RequestBuilder::with_max_elapsed),
    /// [`with_cost_model`](RequestBuilder::with_cost_model)) stay with it,
    /// so it is sent as [`send`](RequestBuilder::send) would send it; reqwest's
    /// request is [`Request::inner`] (or [`into_inner`](Request::into_inner),
    /// which leaves them behind).
    ///
    /// # Errors
    ///
    /// reqwest's builder error (a bad URL or header).
    pub fn build(self) -> Result<Request, reqwest::Error> {
        let inner = self.inner.build()?;
        Ok(Request {
            inner,
            idempotent: self.idempotent,
            endpoint: self.endpoint,
            per_call: self.per_call,
            built: true,
        })
    }

    /// Sends the request under the policy.
    ///
    /// # Errors
    ///
    /// See [`Error`]; [`Error::Build`] when the request could not be built.
    pub async fn send(self) -> Result<Response, Error> {
        let RequestBuilder {
            shared,
            inner,
            idempotent,
            endpoint,
            per_call,
        } = self;
        let (client, request) = inner.build_split();
        let request = request.map_err(Error::Build)?;
        let options = Options {
            opted_in: idempotent,
            endpoint,
            per_call,
        };
        dispatch(&client, &shared, request, options, true).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resource_of_a_url_leaves_out_its_credentials_and_fragment() {
        let url = url::Url::parse("http://user:secret@api.example.com:8080/v1/jobs?x=1#top");
        assert_eq!(
            url.as_ref().map(resource).ok(),
            Some(("http", "api.example.com:8080/v1/jobs?x=1"))
        );
        let plain = url::Url::parse("https://api.example.com/v1/jobs");
        assert_eq!(
            plain.as_ref().map(resource).ok(),
            Some(("https", "api.example.com/v1/jobs"))
        );
    }
}
