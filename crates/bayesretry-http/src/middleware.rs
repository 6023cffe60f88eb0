//! [`RetryMiddleware`]: the same retries as a `reqwest_middleware::Middleware`.

use alloc::sync::Arc;
use core::fmt;
use std::sync::{Mutex, PoisonError};

use bayesretry_policy::{Classification, RetryPolicy};
use http::Extensions;
use reqwest::{Request, Response};
use reqwest_middleware::{Middleware, Next};

use crate::classify::{classify_reqwest_error, classify_service_error, is_failure_to_connect};
use crate::client::{copy, endpoint_of, redirected, replay_of};
use crate::config::{Config, Idempotent};
use crate::error::Error;
use crate::exchange::{OnlyRefusals, PerCall, exchange, once};

/// A `reqwest_middleware::Middleware` (feature `middleware`) that retries the
/// rest of the chain under a [`RetryPolicy`], with the rules of
/// [`RetryClient`](crate::RetryClient). A request is marked safe to replay by
/// an [`Idempotent`] in the chain's extensions
/// (`.with_extension(Idempotent)`), or by an idempotency key. A
/// [`CancelToken`](bayesretry_policy::CancelToken) in the extensions
/// (`.with_extension(token)`) ends the call
/// when cancelled, with [`Error::Cancelled`], as
/// [`RequestBuilder::with_cancel`](crate::RequestBuilder::with_cancel) does,
/// a [`MaxElapsed`](crate::MaxElapsed) there gives the call a time limit
/// of its own, as
/// [`RequestBuilder::with_max_elapsed`](crate::RequestBuilder::with_max_elapsed)
/// does, and a [`CostModel`](bayesretry_cost::CostModel) there prices its
/// retries, as
/// [`RequestBuilder::with_cost_model`](crate::RequestBuilder::with_cost_model)
/// does.
///
/// Each attempt runs the rest of the chain with a copy of the extensions as
/// the call brought them; what the last attempt's chain wrote in them is
/// handed back, so the middlewares above see it as they would without
/// retries in between. That holds for a last attempt cut off by the policy's
/// per-attempt timeout too: what its chain had written by then comes back,
/// not the notes of the attempt before it.
///
/// A request not safe to replay is replayed after a refusal status only when
/// the response answers the URL the request had on reaching this middleware,
/// as [`RetryClient`](crate::RetryClient) checks for a redirect reqwest
/// followed: a middleware below that changes the URL (to another host, say)
/// makes its refusals look like those of a redirect's request, and such a
/// request is not replayed after them. Put such a middleware above this one,
/// or mark the request [`Idempotent`] when a replay is safe.
///
/// A call that ends without a response to return arrives as
/// `reqwest_middleware::Error::Middleware`, wrapping a [`MiddlewareError`]:
/// this crate's [`Error`] over the chain's error type and reqwest's response,
/// `Error<reqwest_middleware::Error, reqwest::Response>`. Downcast to that
/// type, not to the plain [`Error`] (whose transport error is a
/// `reqwest::Error`), which never matches.
///
/// A last attempt that failed in transport is the exception: by default its
/// error comes back as the chain gave it, so that the middlewares above and
/// the caller ask it what they ask any reqwest-middleware error
/// (`is_timeout()`, `is_connect()`, `status()`, `url()`), as they would
/// without retries in between. What that error cannot carry is the attempts
/// made and the [`Stop`](crate::Stop) — the attempt cap, the deadline, a
/// request not safe to replay — that [`RetryClient`](crate::RetryClient) and
/// the tower layer report beside it. A caller who wants those asks for
/// [`with_wrapped_transport_errors`](RetryMiddleware::with_wrapped_transport_errors).
///
/// Here the rest of the chain is a stand-in for a server that asks for a
/// two-hour wait, beyond the policy's limit:
///
/// ```
/// use bayesretry_http::{MiddlewareError, RetryMiddleware};
/// use bayesretry_policy::RetryPolicy;
/// use std::time::Duration;
/// # use http::Extensions;
/// # use reqwest_middleware::{Middleware, Next};
/// #
/// # /// Answers every request with a 429 that asks for two hours.
/// # struct Busy;
/// #
/// # #[async_trait::async_trait]
/// # impl Middleware for Busy {
/// #     async fn handle(
/// #         &self,
/// #         _req: reqwest::Request,
/// #         _extensions: &mut Extensions,
/// #         _next: Next<'_>,
/// #     ) -> reqwest_middleware::Result<reqwest::Response> {
/// #         let response = http::Response::builder().status(429).header("retry-after", "7200");
/// #         Ok(response.body("").unwrap().into())
/// #     }
/// # }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
///     .with(RetryMiddleware::new(RetryPolicy::new()))
/// #   .with(Busy)
///     .build();
///
/// let err = client.get("http://api.example.com/v1/chat").send().await.unwrap_err();
///
/// let reqwest_middleware::Error::Middleware(err) = err else {
///     panic!("the server's wait stops the call as this crate's error");
/// };
/// // not the plain `Error`, whose transport error is a `reqwest::Error`
/// assert!(err.downcast_ref::<bayesretry_http::Error>().is_none());
/// let err = err.downcast_ref::<MiddlewareError>().unwrap();
/// assert_eq!(err.retry_after(), Some(Duration::from_secs(7200)));
/// assert_eq!(err.response().map(|r| r.status().as_u16()), Some(429));
/// # });
/// ```
#[derive(Clone)]
pub struct RetryMiddleware {
    policy: RetryPolicy,
    config: Arc<Config>,
    /// Whether a transport failure comes back as a [`MiddlewareError`].
    wrap_transport: bool,
}

impl fmt::Debug for RetryMiddleware {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryMiddleware")
            .field("policy", &self.policy)
            .field("config", &self.config)
            .field("wrap_transport", &self.wrap_transport)
            .finish()
    }
}

impl RetryMiddleware {
    /// A middleware retrying under `policy` with the default [`Config`].
    pub fn new(policy: RetryPolicy) -> RetryMiddleware {
        RetryMiddleware {
            policy,
            config: Arc::new(Config::new()),
            wrap_transport: false,
        }
    }

    /// The same middleware with these settings.
    #[must_use]
    pub fn with_config(mut self, config: Config) -> RetryMiddleware {
        self.config = Arc::new(config);
        self
    }

    /// The same middleware, returning a last attempt's transport failure as
    /// `reqwest_middleware::Error::Middleware` holding a
    /// [`MiddlewareError::Transport`](Error::Transport): the chain's own error
    /// (`transport()`, and the error's `source()`) beside the attempts made
    /// and the [`Stop`](crate::Stop) that followed, as
    /// [`RetryClient`](crate::RetryClient) reports them.
    ///
    /// Off by default, because the wrapped error is a middleware's: its own
    /// `is_timeout()`, `is_connect()`, `status()` and `url()` answer `false`
    /// or `None`, for the caller and for every middleware above this one.
    /// Ask `transport()` instead. reqwest's error is not a link of the chain
    /// of causes as its own type either: reqwest-middleware's `Reqwest`
    /// variant is transparent, its `source()` that of reqwest's error, so a
    /// search of the causes (anyhow's `chain()` too) for a `reqwest::Error`
    /// finds none; search them for a `reqwest_middleware::Error` past the
    /// outer one. A request that could not be built, which sent nothing and
    /// has no stop to tell, comes back as the chain's error either way.
    #[must_use]
    pub fn with_wrapped_transport_errors(mut self) -> RetryMiddleware {
        self.wrap_transport = true;
        self
    }
}

/// The error [`RetryMiddleware`] wraps in `reqwest_middleware::Error::Middleware`
/// when a call ends without a response to return — the last attempt's
/// transport failure with the stop that followed it, the server's wait, the
/// breaker, a cancellation: this crate's [`Error`] over the chain's error type
/// and reqwest's response. The type to downcast to.
pub type MiddlewareError = Error<reqwest_middleware::Error, Response>;

/// The classification of the chain's error.
fn classify_chain_error(err: &reqwest_middleware::Error) -> Classification {
    match err {
        reqwest_middleware::Error::Reqwest(err) => classify_reqwest_error(err),
        reqwest_middleware::Error::Middleware(err) => {
            let err: &(dyn core::error::Error + Send + Sync + 'static) = err.as_ref();
            classify_service_error(err)
        }
    }
}

/// Whether the chain's error shows that the request was never sent: reqwest
/// could not connect, or another middleware's error is, by its I/O error, a
/// failure to connect.
fn chain_error_before_sending(err: &reqwest_middleware::Error) -> bool {
    match err {
        reqwest_middleware::Error::Reqwest(err) => err.is_connect(),
        reqwest_middleware::Error::Middleware(err) => {
            let err: &(dyn core::error::Error + Send + Sync + 'static) = err.as_ref();
            is_failure_to_connect(&classify_service_error(err))
        }
    }
}

/// One attempt's copy of the chain's extensions: handed back to `last` when
/// the attempt ends, whether its chain answered or its future was dropped
/// (cut off by the policy's per-attempt timeout), so that `last` always holds
/// the latest attempt's, never those of an attempt before it.
struct Attempt<'l> {
    extensions: Extensions,
    last: &'l Mutex<Option<Extensions>>,
}

impl Drop for Attempt<'_> {
    fn drop(&mut self) {
        let extensions = core::mem::take(&mut self.extensions);
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Some(extensions);
    }
}

#[async_trait::async_trait]
impl Middleware for RetryMiddleware {
    async fn handle(
        &self,
        request: Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<Response> {
        let config = &*self.config;
        let endpoint = endpoint_of(config, &request);
        let opted_in = extensions.get::<Idempotent>().is_some();
        let per_call = PerCall::from_extensions(extensions);
        let outcome = match replay_of(config, &request, opted_in) {
            Err(why) => {
                let endpoint = endpoint.into_owned();
                once(
                    &endpoint,
                    why,
                    per_call.cancel.as_ref(),
                    next.run(request, extensions),
                )
                .await
            }
            Ok(only_refusals) => {
                // each attempt runs with a copy of the extensions as the call
                // got them; the last attempt's, with whatever the chain below
                // wrote in them, are handed back to the chain above (also
                // when the policy's timeout cut that attempt off)
                let last: Mutex<Option<Extensions>> = Mutex::new(None);
                let shared: &Extensions = extensions;
                let only_refusals = only_refusals.map(|why| OnlyRefusals {
                    why,
                    never_sent: chain_error_before_sending,
                    redirected: |response: &Response| redirected(&request, response),
                });
                let outcome = exchange(
                    &self.policy,
                    config,
                    &endpoint,
                    classify_chain_error,
                    only_refusals,
                    per_call,
                    || {
                        let next = next.clone();
                        let request = copy(&request, false);
                        let attempt = Attempt {
                            extensions: shared.clone(),
                            last: &last,
                        };
                        async move {
                            let mut attempt = attempt;
                            next.run(request, &mut attempt.extensions).await
                        }
                    },
                )
                .await;
                if let Some(written) = last.into_inner().unwrap_or_else(PoisonError::into_inner) {
                    *extensions = written;
                }
                outcome
            }
        };
        outcome.map_err(|err| match err {
            Error::Build(source) => source,
            Error::Transport { source, .. } if !self.wrap_transport => source,
            other => reqwest_middleware::Error::middleware(other),
        })
    }
}
