//! A fleet that cannot reach Redis from its very first round — Redis down
//! when the service starts, a wrong password, a database index the server
//! does not have — says so in a warning, once, naming the URL with its
//! password hidden and the Redis client's error; a warning logged only when
//! a connected fleet lost Redis would leave such a service running on local
//! state, its operator told nothing. Once Redis answers, an info line says
//! the sync is on.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests: a broken expectation must fail the test"
)]

extern crate alloc;

mod common;

use alloc::sync::Arc;
use core::fmt;
use core::time::Duration;
use std::sync::{Mutex, PoisonError};

use bayesretry_redis::{Fleet, FleetConfig};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// An event seen: its level and its fields, each as text.
#[derive(Debug)]
struct Seen {
    level: Level,
    fields: Vec<(&'static str, String)>,
}

impl Seen {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

struct Fields<'a>(&'a mut Vec<(&'static str, String)>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.push((field.name(), format!("{value:?}")));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name(), value.to_owned()));
    }

    /// An error with its causes, as a subscriber that prints them shows it.
    fn record_error(&mut self, field: &Field, value: &(dyn core::error::Error + 'static)) {
        let mut text = value.to_string();
        let mut cause = value.source();
        while let Some(next) = cause {
            text = format!("{text}: {next}");
            cause = next.source();
        }
        self.0.push((field.name(), text));
    }
}

/// Keeps every event of this crate, for one thread's test.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Seen>>>);

impl Capture {
    fn events(&self) -> std::sync::MutexGuard<'_, Vec<Seen>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn warnings(&self) -> usize {
        self.events()
            .iter()
            .filter(|e| e.level == Level::WARN)
            .count()
    }
}

impl Subscriber for Capture {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target().starts_with("bayesretry_redis")
    }

    fn new_span(&self, _span: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _span: &Id, _values: &Record<'_>) {}

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = Vec::new();
        event.record(&mut Fields(&mut fields));
        self.events().push(Seen {
            level: *event.metadata().level(),
            fields,
        });
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}

/// Runs `test` on a runtime of this thread, with `capture` as its subscriber:
/// the fleet's sync task runs on this thread too, so its events reach it.
fn with_capture(capture: &Capture, test: impl core::future::Future<Output = ()>) {
    tracing::subscriber::with_default(capture.clone(), || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(test);
    });
}

fn config(url: &str) -> FleetConfig {
    // no interval round comes between the explicit ones but the first
    FleetConfig::new(url)
        .with_namespace(common::namespace("unreachable-from-the-start"))
        .with_interval(Duration::from_secs(60))
        .with_connect_timeout(Duration::from_secs(2))
}

/// Checks that a fleet at `url`, which cannot reach Redis, warns once over
/// three rounds, naming the URL shown as `shown` and an error holding `why`.
fn warns_once(url: &str, shown: &str, why: &str) {
    let capture = Capture::default();
    with_capture(&capture, async {
        let fleet = Fleet::without_evidence(config(url)).unwrap();
        for _ in 0..3 {
            assert!(fleet.sync_now().await.is_err(), "{url} reached redis");
        }
        assert!(!fleet.stats().connected);
    });
    let events = capture.events();
    let warnings: Vec<&Seen> = events.iter().filter(|e| e.level == Level::WARN).collect();
    assert_eq!(warnings.len(), 1, "{events:?}");
    assert_eq!(warnings[0].field("url"), Some(shown), "{events:?}");
    let error = warnings[0].field("error").unwrap_or_default();
    assert!(error.contains(why), "{events:?}");
    assert!(
        !format!("{events:?}").contains("s3cret"),
        "a password was logged: {events:?}"
    );
}

#[test]
fn redis_down_when_the_service_starts_is_a_warning() {
    let port = common::free_port();
    warns_once(
        &format!("redis://app:s3cret@127.0.0.1:{port}/0"),
        &format!("redis://app:***@127.0.0.1:{port}/0"),
        "refused",
    );
}

#[test]
fn a_wrong_password_is_a_warning() {
    let Some(url) = common::server_url("a_wrong_password_is_a_warning") else {
        return;
    };
    let Some(rest) = url.strip_prefix("redis://") else {
        panic!("BAYESRETRY_REDIS_URL is not a redis:// URL: {url}");
    };
    // the test server's default user has no such password
    let rest = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
    warns_once(
        &format!("redis://nobody-here:s3cret@{rest}"),
        &format!("redis://nobody-here:***@{rest}"),
        "authentication",
    );
}

#[test]
fn a_database_the_server_does_not_have_is_a_warning() {
    let Some(url) = common::server_url("a_database_the_server_does_not_have_is_a_warning") else {
        return;
    };
    let Some(rest) = url.strip_prefix("redis://") else {
        panic!("BAYESRETRY_REDIS_URL is not a redis:// URL: {url}");
    };
    let host = rest.split(['/', '?']).next().unwrap_or(rest);
    let url = format!("redis://{host}/100000");
    warns_once(&url, &url, "out of range");
}

#[test]
fn redis_answering_after_all_is_an_info_line_and_no_warning() {
    let Some(url) = common::server_url("redis_answering_after_all_is_an_info_line_and_no_warning")
    else {
        return;
    };
    let capture = Capture::default();
    with_capture(&capture, async {
        let fleet = Fleet::without_evidence(config(&url)).unwrap();
        fleet.sync_now().await.unwrap();
        fleet.sync_now().await.unwrap();
    });
    assert_eq!(capture.warnings(), 0, "{:?}", capture.events());
    let infos = capture
        .events()
        .iter()
        .filter(|e| e.level == Level::INFO)
        .count();
    assert_eq!(infos, 1, "{:?}", capture.events());
}
