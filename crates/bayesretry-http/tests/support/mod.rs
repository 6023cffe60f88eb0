//! A real HTTP/1.1 server on 127.0.0.1 for the tests: hyper, answering from a
//! script, counting requests and connections.

#![allow(
    dead_code,
    unreachable_pub,
    reason = "each test file uses a different part of the support module"
)]
#![allow(
    clippy::expect_used,
    reason = "test support: a server that cannot start must fail the test"
)]

extern crate alloc;

use alloc::sync::Arc;
use core::convert::Infallible;
use core::net::SocketAddr;
use core::sync::atomic::{AtomicUsize, Ordering};
use core::time::Duration;
use std::sync::{Mutex, PoisonError};

use bayesretry_http::RetryClient;
use bayesretry_policy::{ManualClock, RetryPolicy, VirtualSleeper};
use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// An inner service for the tower layer, in process: it answers every
/// request with `status` and an empty body, and counts the requests.
pub fn inner_answering(
    status: u16,
) -> (
    impl tower::Service<
        Request<String>,
        Response = Response<String>,
        Error = std::io::Error,
        Future: Send,
    > + Clone
    + Send
    + 'static,
    Arc<AtomicUsize>,
) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let service = tower::service_fn(move |_request: Request<String>| {
        counted.fetch_add(1, Ordering::Relaxed);
        async move {
            Ok::<_, std::io::Error>(
                Response::builder()
                    .status(status)
                    .body(String::new())
                    .expect("a status and an empty body make a response"),
            )
        }
    });
    (service, calls)
}

/// What the script sees of a request: its number (0-based), method, path
/// and query, headers and body.
#[derive(Clone, Debug)]
pub struct Seen {
    pub index: usize,
    pub method: Method,
    pub uri: http::Uri,
    pub headers: HeaderMap,
    pub body: Bytes,
}

type Script = dyn Fn(&Seen) -> Response<Full<Bytes>> + Send + Sync;

/// A running test server.
#[derive(Clone, Debug)]
pub struct Server {
    pub addr: SocketAddr,
    requests: Arc<AtomicUsize>,
    connections: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    /// `http://127.0.0.1:PORT` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Requests answered so far (by a raw server: request heads read).
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// Every request seen, in order.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Starts a server on a fresh loopback port.
pub async fn serve(
    script: impl Fn(&Seen) -> Response<Full<Bytes>> + Send + Sync + 'static,
) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind a loopback port");
    serve_on(listener, script)
}

/// Starts a server on `listener`.
pub fn serve_on(
    listener: TcpListener,
    script: impl Fn(&Seen) -> Response<Full<Bytes>> + Send + Sync + 'static,
) -> Server {
    let addr = listener
        .local_addr()
        .expect("a bound listener has an address");
    let server = Server {
        addr,
        requests: Arc::default(),
        connections: Arc::default(),
        seen: Arc::default(),
    };
    let script: Arc<Script> = Arc::new(script);
    let state = server.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            state.connections.fetch_add(1, Ordering::SeqCst);
            let state = state.clone();
            let script = Arc::clone(&script);
            tokio::spawn(async move {
                let service = service_fn(move |request: Request<Incoming>| {
                    let state = state.clone();
                    let script = Arc::clone(&script);
                    async move {
                        let index = state.requests.fetch_add(1, Ordering::SeqCst);
                        let (head, body) = request.into_parts();
                        let body = body
                            .collect()
                            .await
                            .map(|b| b.to_bytes())
                            .unwrap_or_default();
                        let seen = Seen {
                            index,
                            method: head.method,
                            uri: head.uri,
                            headers: head.headers,
                            body,
                        };
                        state
                            .seen
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .push(seen.clone());
                        Ok::<_, Infallible>(script(&seen))
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    server
}

/// A response with `status`, `headers` and a short body.
pub fn answer(status: u16, headers: &[(&str, &str)]) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(b"{\"error\":\"busy\"}")));
    *response.status_mut() = StatusCode::from_u16(status).expect("a valid status");
    for (name, value) in headers {
        response.headers_mut().insert(
            http::HeaderName::from_bytes(name.as_bytes()).expect("a valid header name"),
            http::HeaderValue::from_str(value).expect("a valid header value"),
        );
    }
    response
}

/// Starts a server that answers the first request with `status` and
/// `headers`, and every later one with a `200`.
pub async fn serve_failing_once(status: u16, headers: &[(&'static str, &'static str)]) -> Server {
    let headers = headers.to_vec();
    serve(move |seen| match seen.index {
        0 => answer(status, &headers),
        _ => answer(200, &[]),
    })
    .await
}

/// A learning policy on virtual time: every sleep is recorded, none is waited.
pub fn virtual_policy() -> (RetryPolicy, VirtualSleeper) {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let policy = RetryPolicy::builder()
        .with_virtual_time(sleeper.clone())
        .with_seed(7)
        .build()
        .expect("a valid policy");
    (policy, sleeper)
}

/// A client on [`virtual_policy`], and the sleeper that records its waits.
pub fn virtual_client() -> (RetryClient, VirtualSleeper) {
    let (policy, sleeper) = virtual_policy();
    (RetryClient::new(reqwest::Client::new(), policy), sleeper)
}

/// Classic mode, `attempts` attempts in all, each retry sent at once.
pub fn classic_at_once(attempts: u32) -> RetryPolicy {
    RetryPolicy::builder()
        .classic()
        .with_max_attempts(attempts)
        .with_sleeper(|_| core::future::ready(()))
        .build()
        .expect("a valid policy")
}

/// A loopback address nothing listens on: bound, then released.
pub fn closed_port() -> SocketAddr {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("bind a loopback port")
}

/// The first backoff of the default schedule is at most this (500 ms, full
/// jitter): a recorded delay above it came from the server's hint.
pub const FIRST_BACKOFF_CAP: Duration = Duration::from_millis(500);

/// A response with `status`, `headers` and a body of `len` bytes.
pub fn answer_sized(status: u16, headers: &[(&str, &str)], len: usize) -> Response<Full<Bytes>> {
    let mut response = answer(status, headers);
    *response.body_mut() = Full::new(Bytes::from(vec![b'x'; len]));
    response
}

/// Starts a server that writes raw bytes on a fresh loopback port: for each
/// request, in order on any connection, the answer `script` gives for its
/// number (0-based). A connection stays open after its answer, so an answer
/// that declares more body than it sends leaves the client waiting for the
/// rest; an empty answer closes the connection instead, the request read and
/// not answered. It counts request heads and connections; it records no
/// [`Seen`]. A request's body, if any, must arrive with its head and is not
/// read.
pub async fn serve_raw(script: impl Fn(usize) -> Vec<u8> + Send + Sync + 'static) -> Server {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind a loopback port");
    let server = Server {
        addr: listener
            .local_addr()
            .expect("a bound listener has an address"),
        requests: Arc::default(),
        connections: Arc::default(),
        seen: Arc::default(),
    };
    let script: Arc<dyn Fn(usize) -> Vec<u8> + Send + Sync> = Arc::new(script);
    let state = server.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            state.connections.fetch_add(1, Ordering::SeqCst);
            let (state, script) = (state.clone(), Arc::clone(&script));
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0_u8; 1024];
                // one request head after another, until the client hangs up
                for _ in 0..64 {
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    head.clear();
                    let index = state.requests.fetch_add(1, Ordering::SeqCst);
                    let answer = script(index);
                    if answer.is_empty() || stream.write_all(&answer).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    server
}

/// A `503` that declares a body of 1000 bytes, sends 3, and then nothing.
pub const STALLED_503: &[u8] =
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 1000\r\n\r\nabc";

/// A complete `200` with a two-byte body.
pub const OK_200: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";

/// A request body that can be sent only once: `{"a":1}` read in two chunks
/// from a stream, which reqwest cannot clone.
pub fn streamed_body() -> reqwest::Body {
    reqwest::Body::wrap_stream(Chunks([Ok("{\"a\":"), Ok("1}")].into_iter()))
}

/// A stream over fixed chunks, without a futures dependency.
struct Chunks(core::array::IntoIter<Result<&'static str, std::io::Error>, 2>);

impl futures_core::Stream for Chunks {
    type Item = Result<&'static str, std::io::Error>;

    fn poll_next(
        mut self: core::pin::Pin<&mut Self>,
        _cx: &mut core::task::Context<'_>,
    ) -> core::task::Poll<Option<Self::Item>> {
        core::task::Poll::Ready(self.0.next())
    }
}
