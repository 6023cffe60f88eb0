//! With the facade's `redis-tls` feature, a `rediss://` URL starts a fleet
//! (`bayesretry::redis`), as `bayesretry-redis`'s own `tls` feature does: a
//! team that reaches the fleet through the facade, against a managed Redis
//! that only takes TLS, need not depend on the adapter crate beside it.

#![cfg(feature = "redis-tls")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

use bayesretry::redis::{Error, Fleet, FleetConfig};

#[test]
fn a_rediss_url_starts_a_fleet() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        // Nothing listens on port 1: starting succeeds all the same.
        match Fleet::without_evidence(FleetConfig::new("rediss://app:s3cret@127.0.0.1:1/0")) {
            Ok(fleet) => assert!(!fleet.stats().connected),
            Err(Error::TlsNotEnabled(url)) => panic!("TLS is not on for {url}"),
            Err(other) => panic!("{other}"),
        }
    });
}
