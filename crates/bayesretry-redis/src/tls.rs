//! TLS through rustls: the crypto provider the `redis` crate's rustls
//! connector needs.

/// Installs rustls's `ring` provider as the process default, unless one is
/// installed already (by the application, or an earlier fleet).
pub(crate) fn install_provider() {
    // an error only says a provider is already installed, which is fine
    let _ = rustls::crypto::ring::default_provider().install_default();
}
