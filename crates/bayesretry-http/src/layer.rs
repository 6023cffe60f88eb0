//! [`RetryLayer`] and [`Retry`]: the same retries for any
//! `tower::Service<http::Request<B>>` whose body can be cloned.

use alloc::borrow::Cow;
use alloc::sync::Arc;
use core::fmt;
use core::future::{Future, poll_fn};
use core::pin::{Pin, pin};
use core::sync::atomic::{AtomicBool, Ordering};
use core::task::{Context, Poll};
use std::sync::{Mutex, PoisonError};

use bayesretry_policy::{Classification, RetryPolicy};
use http::{Request, Response};
use tower::{Layer, Service};

use crate::classify::is_failure_to_connect;
use crate::config::{Config, Idempotent};
use crate::endpoint::{Target, default_port};
use crate::error::{Error, Stop};
use crate::exchange::{OnlyRefusals, PerCall, exchange};

/// How a service's error (no response arrived) is classified.
///
/// Any `Fn(&E) -> Classification` is one; [`Unclassified`] is the default.
/// For an error type that implements `std::error::Error`,
/// [`classify_service_error`](crate::classify_service_error) reads the I/O
/// error underneath: `.with_classifier(|e: &MyError| classify_service_error(e))`.
pub trait ClassifyError<E>: Clone + Send + Sync + 'static {
    /// What the error says about retrying.
    fn classify_error(&self, err: &E) -> Classification;
}

impl<E, F> ClassifyError<E> for F
where
    F: Fn(&E) -> Classification + Clone + Send + Sync + 'static,
{
    fn classify_error(&self, err: &E) -> Classification {
        self(err)
    }
}

/// The default [`ClassifyError`]: every service error is retryable as
/// [`ErrorClass::Unknown`](bayesretry_policy::ErrorClass::Unknown), as a classic
/// retry loop treats it; the policy's posterior for that class then learns
/// whether retrying it pays.
#[derive(Clone, Copy, Debug, Default)]
pub struct Unclassified;

impl<E> ClassifyError<E> for Unclassified {
    fn classify_error(&self, _err: &E) -> Classification {
        Classification::default()
    }
}

/// A [`tower::Layer`] that retries requests under a [`RetryPolicy`], with the
/// same rules as [`RetryClient`](crate::RetryClient): failure statuses by the
/// policy's table, `Retry-After` and `retry-after-ms` honoured and capped,
/// only idempotent requests (or those with an idempotency key, or an
/// [`Idempotent`] extension) replayed after any failure, others only after a
/// refusal ([`Config::with_refusal_statuses`], or an error the classifier
/// calls a failure to connect), failed bodies drained. A
/// [`CancelToken`](bayesretry_policy::CancelToken) in the request's
/// extensions ends the call when cancelled,
/// with [`Error::Cancelled`], as
/// [`RequestBuilder::with_cancel`](crate::RequestBuilder::with_cancel) does,
/// a [`MaxElapsed`](crate::MaxElapsed) there gives the call a time limit
/// of its own, as
/// [`RequestBuilder::with_max_elapsed`](crate::RequestBuilder::with_max_elapsed)
/// does, and a [`CostModel`](bayesretry_cost::CostModel) there prices its
/// retries, as
/// [`RequestBuilder::with_cost_model`](crate::RequestBuilder::with_cost_model)
/// does.
///
/// The request body must be `Clone` (`String`, `Bytes`, `Full<Bytes>` …): each
/// attempt sends a copy. The endpoint key is the URI's origin (or the `Host`
/// header for a relative URI), its host in lower case as `RetryClient` writes
/// it, unless [`Config::with_endpoint`] says otherwise.
///
/// ```
/// use bayesretry_http::RetryLayer;
/// use bayesretry_policy::RetryPolicy;
/// use tower::Layer;
///
/// let layer = RetryLayer::new(RetryPolicy::new());
/// # let service = tower::service_fn(|_req: http::Request<String>| async {
/// #     Ok::<_, std::io::Error>(http::Response::new(String::new()))
/// # });
/// let retried = layer.layer(service);
/// # let _ = retried;
/// ```
#[derive(Clone)]
pub struct RetryLayer<C = Unclassified> {
    policy: RetryPolicy,
    config: Arc<Config>,
    classify: C,
}

impl<C> fmt::Debug for RetryLayer<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryLayer")
            .field("policy", &self.policy)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl RetryLayer {
    /// A layer retrying under `policy` with the default [`Config`], every
    /// service error retryable as `Unknown`.
    pub fn new(policy: RetryPolicy) -> RetryLayer {
        RetryLayer {
            policy,
            config: Arc::new(Config::new()),
            classify: Unclassified,
        }
    }
}

impl<C> RetryLayer<C> {
    /// The same layer with these settings.
    #[must_use]
    pub fn with_config(mut self, config: Config) -> RetryLayer<C> {
        self.config = Arc::new(config);
        self
    }

    /// The same layer with service errors classified by `classify`.
    pub fn with_classifier<D>(self, classify: D) -> RetryLayer<D> {
        RetryLayer {
            policy: self.policy,
            config: self.config,
            classify,
        }
    }
}

impl<S, C: Clone> Layer<S> for RetryLayer<C> {
    type Service = Retry<S, C>;

    fn layer(&self, inner: S) -> Retry<S, C> {
        Retry {
            inner,
            policy: self.policy.clone(),
            config: Arc::clone(&self.config),
            classify: self.classify.clone(),
        }
    }
}

/// The service [`RetryLayer`] makes: ready when the inner service is; each
/// call makes its first attempt on the service that readiness was for, and
/// each retry on a fresh clone of it, once that clone is ready. A call whose
/// policy waits before the first attempt (for an open breaker, under
/// [`with_wait_while_open`](bayesretry_policy::Builder::with_wait_while_open))
/// lets go of that readiness while it waits, and the attempt waits for a
/// clone's, as a retry does.
#[derive(Clone)]
pub struct Retry<S, C = Unclassified> {
    inner: S,
    policy: RetryPolicy,
    config: Arc<Config>,
    classify: C,
}

impl<S: fmt::Debug, C> fmt::Debug for Retry<S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Retry")
            .field("inner", &self.inner)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl<S> Retry<S> {
    /// `inner`, retried under `policy` with the default [`Config`].
    pub fn new(inner: S, policy: RetryPolicy) -> Retry<S> {
        RetryLayer::new(policy).layer(inner)
    }
}

impl<S, C> Retry<S, C> {
    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }
}

/// The future of [`Retry::call`].
pub type ResponseFuture<T, E> = Pin<Box<dyn Future<Output = Result<T, E>> + Send>>;

impl<S, C, B, RB> Service<Request<B>> for Retry<S, C>
where
    S: Service<Request<B>, Response = Response<RB>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Send + 'static,
    C: ClassifyError<S::Error>,
    B: Clone + Send + 'static,
    RB: http_body::Body + Send + 'static,
{
    type Response = Response<RB>;
    type Error = Error<S::Error, Response<RB>>;
    type Future = ResponseFuture<Response<RB>, Self::Error>;

    /// Ready when the inner service is. A call's first attempt is made on the
    /// service this readiness is for, so the layers above — load shedding, a
    /// concurrency limit, a buffer — see the inner service's backpressure, as
    /// they would without retries; each retry waits for the readiness of its
    /// own clone of the inner service. What readiness reserves for a call (a
    /// concurrency limit's slot, a buffer's place) is held only while an
    /// attempt is in flight: a call waiting for an open breaker before its
    /// first attempt lets go of it, and that attempt waits for a clone's
    /// readiness as a retry does. That wait is part of the attempt: under a
    /// per-attempt timeout
    /// ([`with_attempt_timeout`](bayesretry_policy::Builder::with_attempt_timeout)),
    /// an attempt held behind a full limit below can time out before it is
    /// sent, and is learned as a timeout of the endpoint; give attempts room
    /// for the wait, or put the limit above the layer.
    ///
    /// An error is the inner service's failure (in tower's contract, a service
    /// whose `poll_ready` fails is done): [`Error::Transport`] with no attempt
    /// made and [`Stop::Permanent`](crate::Stop::Permanent), never retried. So
    /// is a retry's: a clone whose readiness fails ends the call with that
    /// error and [`Stop::Permanent`](crate::Stop::Permanent), the retry counted
    /// among the attempts, and the breaker does not count it against the
    /// endpoint.
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner
            .poll_ready(cx)
            .map_err(|source| Error::Transport {
                source,
                attempts: 0,
                stop: Stop::Permanent,
            })
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        // the service `poll_ready` made ready makes the first attempt, and a
        // fresh clone waits for the next call (tower's pattern for a service
        // that is moved into its call's future)
        let fresh = self.inner.clone();
        let ready = core::mem::replace(&mut self.inner, fresh);
        let inner = ready.clone();
        // the ready service, until the first attempt takes it; let go of if
        // the policy does not start that attempt at the call's first poll
        let first = Mutex::new(Some(ready));
        let policy = self.policy.clone();
        let config = Arc::clone(&self.config);
        let classify = self.classify.clone();
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let endpoint = endpoint_of(&config, &parts);
            let opted_in = parts.extensions.get::<Idempotent>().is_some();
            let per_call = PerCall::from_extensions(&parts.extensions);
            // the inner service's responses do not say whether it followed a
            // redirect: each is taken as the answer to the request sent
            let only_refusals = config
                .replayable(&parts.method, &parts.headers, opted_in)
                .err()
                .map(|why| OnlyRefusals {
                    why,
                    never_sent: |err: &S::Error| {
                        is_failure_to_connect(&classify.classify_error(err))
                    },
                    redirected: |_: &Response<RB>| false,
                });
            // set when a retry's clone fails its readiness: the inner service
            // is done (tower's contract), so its error ends the call, as a
            // permanent failure — a local one, for the breaker not to count
            let done = &AtomicBool::new(false);
            let first = &first;
            let exchange = exchange(
                &policy,
                &config,
                &endpoint,
                |err: &S::Error| {
                    if done.load(Ordering::Relaxed) {
                        Classification::Permanent
                    } else {
                        classify.classify_error(err)
                    }
                },
                only_refusals,
                per_call,
                move || {
                    let request = Request::from_parts(parts.clone(), body.clone());
                    match take(first) {
                        Some(ready) => attempt(ready, None, request),
                        None => attempt(inner.clone(), Some(done), request),
                    }
                },
            );
            // The first poll starts the first attempt on the ready service,
            // unless the policy waits first (for an open breaker to admit a
            // probe, `with_wait_while_open`). Readiness may be a resource
            // held for this call — a concurrency limit's slot, a buffer's
            // place — that no other call may have until it is let go of: so
            // a call that waits before its first attempt lets go of it, and
            // that attempt waits for the readiness of a clone, as a retry
            // does, instead of shutting every other call out while it sends
            // nothing.
            let mut exchange = pin!(exchange);
            poll_fn(|cx| {
                let polled = exchange.as_mut().poll(cx);
                if polled.is_pending() {
                    drop(take(first));
                }
                polled
            })
            .await
        })
    }
}

/// The ready service of a call, if its first attempt has not taken it.
fn take<S>(first: &Mutex<Option<S>>) -> Option<S> {
    first.lock().unwrap_or_else(PoisonError::into_inner).take()
}

/// Calls `service`, once it is ready: at once for the first attempt (`done`
/// is `None`: the caller's `poll_ready` readied the service), else after
/// waiting for its readiness (a retry, on a fresh clone); a readiness that
/// fails sets `done` and is the attempt's error.
async fn attempt<S, Req>(
    mut service: S,
    done: Option<&AtomicBool>,
    request: Req,
) -> Result<S::Response, S::Error>
where
    S: Service<Req>,
{
    if let Some(done) = done {
        if let Err(err) = poll_fn(|cx| service.poll_ready(cx)).await {
            done.store(true, Ordering::Relaxed);
            return Err(err);
        }
    }
    service.call(request).await
}

/// The endpoint key of a request head.
fn endpoint_of(config: &Config, parts: &http::request::Parts) -> String {
    let uri = &parts.uri;
    let scheme = uri.scheme_str().unwrap_or("http");
    let host_header = || {
        parts
            .headers
            .get(http::header::HOST)
            .and_then(|value| value.to_str().ok())
    };
    let (host, port) = match uri.host() {
        Some(host) => (host, uri.port_u16()),
        None => {
            // a relative URI: the Host header names the origin, port included
            let header = host_header().unwrap_or_default();
            match header
                .rsplit_once(':')
                .and_then(|(host, port)| Some((host, port.parse::<u16>().ok()?)))
            {
                Some((host, port)) => (host, Some(port)),
                None => (header, None),
            }
        }
    };
    let port = port.filter(|port| Some(*port) != default_port(scheme));
    // a host is the same in any case (RFC 3986 §3.2.2): in lower case, as
    // reqwest's URL parser writes it, so that every spelling of a server is one
    // endpoint, the client's too
    let host: Cow<'_, str> = if host.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(host.to_ascii_lowercase())
    } else {
        Cow::Borrowed(host)
    };
    let target = Target::new(&parts.method, scheme, &host, port, uri.path());
    config.endpoint_of(&target)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(request: Request<()>) -> String {
        let (parts, ()) = request.into_parts();
        endpoint_of(&Config::new(), &parts)
    }

    #[test]
    fn the_key_is_the_one_the_client_gives_the_same_url() {
        // a host names the same server in any case (RFC 3986 §3.2.2), and the
        // client's URL parser writes it in lower case: the layer must not make
        // another endpoint, with its own breaker, of another spelling
        for url in [
            "http://API.Example.COM:8080/v1/users/42",
            "https://Api.Example.com/v1",
            "http://[::1]:9000/x",
            "http://127.0.0.1/x",
        ] {
            let request = Request::get(url).body(());
            let reqwest =
                reqwest::Url::parse(url).map(|url| reqwest::Request::new(http::Method::GET, url));
            let client = reqwest
                .as_ref()
                .map(|request| crate::client::endpoint_of(&Config::new(), request).into_owned());
            assert_eq!(request.map(key).ok(), client.ok(), "{url}");
        }
        let relative = Request::get("/v1/users/42")
            .header("host", "SVC.Internal:9000")
            .body(());
        assert_eq!(
            relative.map(key).ok().as_deref(),
            Some("http://svc.internal:9000")
        );
    }

    #[test]
    fn the_key_is_the_origin_of_absolute_and_relative_uris() {
        let absolute = Request::get("http://127.0.0.1:8080/v1/users/42?x=1").body(());
        assert_eq!(
            absolute.map(key).ok().as_deref(),
            Some("http://127.0.0.1:8080")
        );
        let default_port = Request::get("https://api.example.com:443/a").body(());
        assert_eq!(
            default_port.map(key).ok().as_deref(),
            Some("https://api.example.com")
        );
        let relative = Request::get("/v1/users/42")
            .header("host", "svc.internal:9000")
            .body(());
        assert_eq!(
            relative.map(key).ok().as_deref(),
            Some("http://svc.internal:9000")
        );
        let no_host = Request::get("/x").body(());
        assert_eq!(no_host.map(key).ok().as_deref(), Some("http://"));
    }
}
