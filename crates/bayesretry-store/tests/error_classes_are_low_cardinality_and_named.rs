//! Error classes: statuses map to their own class (429, 500, 503 and 529 apart),
//! anything else to `Unknown`; I/O errors map by kind; each class has a stable
//! lowercase name.

use std::collections::HashSet;
use std::io::ErrorKind;

use bayesretry_store::{Context, ErrorClass};

#[test]
fn statuses_map_to_their_own_class_or_unknown() {
    let mut classes = HashSet::new();
    for status in 0..=u16::MAX {
        classes.insert(ErrorClass::from_status(status));
    }
    // 500 statuses and Unknown: nothing else, however many values come in.
    assert_eq!(classes.len(), 501);
    assert_eq!(ErrorClass::from_status(99), ErrorClass::Unknown);
    assert_eq!(ErrorClass::from_status(600), ErrorClass::Unknown);
    assert_eq!(ErrorClass::from_status(100), ErrorClass::Http(100));
    assert_eq!(ErrorClass::from_status(599), ErrorClass::Http(599));
    let distinct: HashSet<_> = [429, 500, 503, 529].map(ErrorClass::from_status).into();
    assert_eq!(distinct.len(), 4);
}

#[test]
fn predicates_pick_the_documented_statuses() {
    let rate_limited: Vec<u16> = (0..1000)
        .filter(|&s| ErrorClass::from_status(s).is_rate_limited())
        .collect();
    assert_eq!(rate_limited, [429]);
    let overloaded: Vec<u16> = (0..1000)
        .filter(|&s| ErrorClass::from_status(s).is_overloaded())
        .collect();
    assert_eq!(overloaded, [503, 529]);
    let server = (0..1000)
        .filter(|&s| ErrorClass::from_status(s).is_server_error())
        .count();
    assert_eq!(server, 100);
    assert!(!ErrorClass::Timeout.is_server_error());
}

#[test]
fn io_kinds_map_as_documented() {
    let cases = [
        (ErrorKind::TimedOut, ErrorClass::Timeout),
        (ErrorKind::ConnectionRefused, ErrorClass::ConnectionRefused),
        (ErrorKind::ConnectionReset, ErrorClass::ConnectionReset),
        (ErrorKind::ConnectionAborted, ErrorClass::ConnectionReset),
        (ErrorKind::NotConnected, ErrorClass::Connect),
        (ErrorKind::AddrNotAvailable, ErrorClass::Connect),
        (ErrorKind::PermissionDenied, ErrorClass::Unknown),
        (ErrorKind::Other, ErrorClass::Unknown),
    ];
    for (kind, class) in cases {
        assert_eq!(ErrorClass::from_io_kind(kind), class, "{kind:?}");
    }
}

#[test]
fn names_are_stable() {
    let names: Vec<String> = [
        ErrorClass::Http(429),
        ErrorClass::Timeout,
        ErrorClass::ConnectionRefused,
        ErrorClass::ConnectionReset,
        ErrorClass::Connect,
        ErrorClass::Custom("quota-exhausted"),
        ErrorClass::Unknown,
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    assert_eq!(
        names,
        [
            "http-429",
            "timeout",
            "connection-refused",
            "connection-reset",
            "connect",
            "quota-exhausted",
            "unknown"
        ]
    );
}

#[test]
fn contexts_are_plain_copyable_keys() {
    const CTX: Context<'static> = Context::new("api", 1, ErrorClass::Http(503));
    let next = CTX.with_attempt(2);
    assert_ne!(CTX, next);
    assert_eq!(next.with_attempt(1), CTX);
    let set: HashSet<Context<'_>> = [CTX, next, CTX].into();
    assert_eq!(set.len(), 2);
}
