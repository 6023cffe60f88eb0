//! A call's `Result<T, RetryError<E>>` is a pointer beside `T`, whatever `E`
//! is, so that it comes back in registers; what the box holds is the whole
//! story of the call, to match on.

use core::mem::size_of;
use core::time::Duration;

use bayesretry_policy::{
    HttpStatus, ManualClock, Reason, RetryError, RetryErrorKind, RetryPolicy, VirtualSleeper,
};

#[test]
fn the_result_is_a_pointer_beside_the_value_whatever_the_error() {
    // two registers for a small value, one for none, for any error type
    assert_eq!(size_of::<Result<u32, RetryError<HttpStatus>>>(), 16);
    assert_eq!(size_of::<Result<u64, RetryError<[u8; 256]>>>(), 16);
    assert_eq!(size_of::<Result<(), RetryError<std::io::Error>>>(), 8);
    assert_eq!(size_of::<RetryError<String>>(), size_of::<usize>());
}

#[test]
fn the_kind_holds_everything_the_call_left() {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let policy = RetryPolicy::builder()
        .classic()
        .with_max_attempts(3)
        .with_virtual_time(sleeper)
        .build()
        .unwrap();
    let err = policy
        .run_blocking("api", |_| Err::<(), _>(HttpStatus(503)))
        .unwrap_err();

    // Debug and Display are the kind's: the box does not show
    assert_eq!(format!("{err:?}"), format!("{:?}", err.kind()));
    assert_eq!(err.to_string(), err.kind().to_string());
    let line = err.to_string();
    assert!(line.starts_with("gave up after 3 attempt(s)"), "{line}");
    assert!(!line.contains('\n'));
    assert_eq!(err.last_error(), Some(&HttpStatus(503)));
    // the last error is the source, not part of the line
    assert!(!line.contains("503"), "{line}");
    let source = core::error::Error::source(&err).map(ToString::to_string);
    assert_eq!(source.as_deref(), Some("http status 503"));

    match err.into_kind() {
        RetryErrorKind::Exhausted {
            last_error,
            attempts,
            decision,
            retry_after,
        } => {
            assert_eq!(last_error, HttpStatus(503));
            assert_eq!(attempts, 3);
            assert_eq!(decision.reason(), Reason::MaxAttempts);
            // a bare status carries no Retry-After
            assert_eq!(retry_after, None);
        }
        other => panic!("expected exhaustion, got {other:?}"),
    }
}

#[test]
fn a_kind_made_by_hand_becomes_the_same_error() {
    let err: RetryError<HttpStatus> = RetryErrorKind::CircuitOpen {
        endpoint: "api".to_owned(),
        retry_after: Some(Duration::from_millis(250)),
        last_error: None,
        attempts: 0,
    }
    .into();
    assert_eq!(
        err.to_string(),
        "circuit open for endpoint `api`, no attempt made (may admit a call in 250 ms)"
    );
    // refused after attempts the per-attempt timeout cut off: no last error,
    // but not "no attempt made"
    let after: RetryError<HttpStatus> = RetryErrorKind::CircuitOpen {
        endpoint: "api".to_owned(),
        retry_after: None,
        last_error: None,
        attempts: 2,
    }
    .into();
    assert_eq!(
        after.to_string(),
        "circuit open for endpoint `api` after 2 attempt(s)"
    );
    assert!(err.last_error().is_none());
    assert!(matches!(
        err.kind(),
        RetryErrorKind::CircuitOpen { endpoint, .. } if endpoint == "api"
    ));
    assert_eq!(err.into_last_error(), None);
}
