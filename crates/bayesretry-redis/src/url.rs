//! [`RedisUrl`]: where Redis is, with the credentials kept out of every log.

use core::fmt;

/// A Redis URL (`redis://`, `rediss://` with the `tls` feature, or
/// `redis+unix://`), whose password never appears in `Debug`, `Display` or a
/// tracing event: both print the URL with the password replaced by `***`.
///
/// ```
/// use bayesretry_redis::RedisUrl;
///
/// let url = RedisUrl::new("redis://app:hunter2@cache.internal:6380/2");
/// assert_eq!(url.to_string(), "redis://app:***@cache.internal:6380/2");
/// assert!(!format!("{url:?}").contains("hunter2"));
/// assert_eq!(RedisUrl::new("redis://:hunter2@h").to_string(), "redis://:***@h");
/// assert_eq!(RedisUrl::new("redis://127.0.0.1:6379").to_string(), "redis://127.0.0.1:6379");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct RedisUrl(String);

impl RedisUrl {
    /// The URL `url`, unchecked until the fleet connects (see
    /// [`FleetConfig::new`](crate::FleetConfig::new), which checks it).
    pub fn new(url: impl Into<String>) -> RedisUrl {
        RedisUrl(url.into())
    }

    /// The URL as given, credentials included: for the connection only.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the URL asks for TLS.
    pub(crate) fn is_tls(&self) -> bool {
        self.0.starts_with("rediss://")
    }

    /// The URL with the password, if any, replaced by `***`.
    pub fn redacted(&self) -> String {
        redact(&self.0)
    }
}

/// `url` with the password of its authority and its query replaced by `***`. A URL that
/// cannot be split is replaced whole by its scheme, so nothing unparsed leaks.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return String::from("<unparsable redis url>");
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    // the query is dropped: it is no place for a secret, but one may be there
    let path = match path.split_once('?') {
        Some((path, _query)) => format!("{path}?***"),
        None => path.to_owned(),
    };
    match authority.rsplit_once('@') {
        None => format!("{scheme}://{authority}{path}"),
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _password)) => format!("{scheme}://{user}:***@{host}{path}"),
            // a lone user part is a password for Redis URLs of the form
            // redis://secret@host, so it is hidden too
            None => format!("{scheme}://***@{host}{path}"),
        },
    }
}

impl fmt::Display for RedisUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl fmt::Debug for RedisUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RedisUrl").field(&self.redacted()).finish()
    }
}

/// A password kept out of `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Secret(pub(crate) String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"***\"")
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn passwords_never_survive_redaction() {
        for (url, want) in [
            ("redis://u:p@h:1/0", "redis://u:***@h:1/0"),
            ("rediss://u:p%40x@h", "rediss://u:***@h"),
            ("redis://p@h", "redis://***@h"),
            ("redis://u:a@b@h/3", "redis://u:***@h/3"),
            ("redis://h:1/0?password=p", "redis://h:1/0?***"),
            ("nonsense", "<unparsable redis url>"),
        ] {
            assert_eq!(redact(url), want, "{url}");
        }
    }
}
