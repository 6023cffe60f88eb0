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
/// // everything before the last `@` is user info, an unencoded `/` too
/// assert_eq!(RedisUrl::new("redis://app:to/ken@h/1").to_string(), "redis://app:***@h/1");
/// // a `?` or `#` before it may begin a query holding a secret: scheme only
/// assert_eq!(RedisUrl::new("redis://app:to?ken@h/1").to_string(), "redis://***");
/// assert_eq!(RedisUrl::new("redis://h/0?password=pass@word").to_string(), "redis://***");
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

    /// Whether the URL asks for TLS: its scheme, in any case, is `rediss` or
    /// `valkeys`, as the client reads it.
    pub(crate) fn is_tls(&self) -> bool {
        split_scheme(&self.0).is_some_and(|(scheme, _)| {
            scheme.eq_ignore_ascii_case("rediss") || scheme.eq_ignore_ascii_case("valkeys")
        })
    }

    /// The URL with the password, if any, replaced by `***`.
    pub fn redacted(&self) -> String {
        redact(&self.0)
    }

    /// Why the URL is not a Redis URL at all, if it is not: no scheme (a
    /// bare `host:port`), or a scheme the Redis client does not take. The
    /// text names the schemes taken, and shows of the URL its scheme alone.
    pub(crate) fn scheme_problem(&self) -> Option<String> {
        /// The schemes the Redis client connects to (compared ignoring case,
        /// as the URL parser lowercases them).
        const TAKEN: [&str; 7] = [
            "redis",
            "rediss",
            "redis+unix",
            "unix",
            "valkey",
            "valkeys",
            "valkey+unix",
        ];
        const EXPECTED: &str = "a redis url begins redis://, rediss:// (tls), redis+unix:// or unix:// \
             (or valkey://, valkeys://, valkey+unix://)";
        match split_scheme(&self.0) {
            Some((scheme, _)) if TAKEN.iter().any(|t| t.eq_ignore_ascii_case(scheme)) => None,
            Some((scheme, _)) => Some(format!("{EXPECTED}, got scheme {scheme:?}")),
            None => Some(format!("{EXPECTED}, got no scheme")),
        }
    }
}

/// The scheme of `url` and what follows its `://`, if what comes before the
/// first `://` looks like a scheme (letters, digits, `+`, `-`, `.`, at most 16
/// of them). Anything else there may hold a secret (`app:pw@redis://h`,
/// `h?password=pw&x=redis://h2`): such a URL has no scheme to show. Leading
/// blanks and control characters are skipped, as the client's URL parser
/// skips them.
fn split_scheme(url: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = url.trim_start_matches(|c| c <= ' ').split_once("://")?;
    let scheme_like = !scheme.is_empty()
        && scheme.len() <= 16
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    scheme_like.then_some((scheme, rest))
}

/// `url` with the password of its authority and its query replaced by `***`. A URL that
/// cannot be split is replaced whole by its scheme, so nothing unparsed leaks; one
/// without a scheme (see [`split_scheme`]) is shown as unparsable.
///
/// Everything between `://` and the last `@` is taken for the user info, even
/// a `/`, `?` or `#`: a password is often a token with such characters left
/// unencoded, and cutting the authority at the first of them would print the
/// rest of it. An `@` further on (in a socket path, say) hides a little more
/// than the password, never less. But a `?` or `#` before the last `@` may
/// as well begin the query (or fragment), with the `@` inside a secret
/// there (`?password=pass@word`): what follows the `@` would be printed as
/// the host. Such a URL is shown as its scheme only.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = split_scheme(url) else {
        return String::from("<unparsable redis url>");
    };
    let (userinfo, rest) = match rest.rsplit_once('@') {
        Some((userinfo, _)) if userinfo.contains(['?', '#']) => {
            return format!("{scheme}://***");
        }
        Some((userinfo, rest)) => (Some(userinfo), rest),
        None => (None, rest),
    };
    let host_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (host, path) = rest.split_at(host_end);
    // the query is dropped: it is no place for a secret, but one may be there
    let path = match path.split_once('?') {
        Some((path, _query)) => format!("{path}?***"),
        None => path.to_owned(),
    };
    match userinfo {
        None => format!("{scheme}://{host}{path}"),
        Some(userinfo) => match userinfo.split_once(':') {
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
    use super::{RedisUrl, redact};

    #[test]
    fn a_url_asks_for_tls_by_its_scheme_in_any_case() {
        for (url, tls) in [
            ("rediss://h:6380", true),
            ("REDISS://h:6380", true),
            ("valkeys://h", true),
            ("  Valkeys://u:p@h", true),
            ("redis://h", false),
            ("valkey://h", false),
            ("redis+unix:///run/redis.sock", false),
            ("app:p@rediss://h", false),
            ("h:6380", false),
        ] {
            assert_eq!(RedisUrl::new(url).is_tls(), tls, "{url}");
        }
    }

    #[test]
    fn passwords_never_survive_redaction() {
        for (url, want) in [
            ("redis://u:p@h:1/0", "redis://u:***@h:1/0"),
            ("rediss://u:p%40x@h", "rediss://u:***@h"),
            ("redis://p@h", "redis://***@h"),
            ("redis://u:a@b@h/3", "redis://u:***@h/3"),
            ("redis://h:1/0?password=p", "redis://h:1/0?***"),
            ("nonsense", "<unparsable redis url>"),
            ("app:p@redis://h:1/0", "<unparsable redis url>"),
            (":p@rediss://h", "<unparsable redis url>"),
            ("h:1/0?password=p&x=redis://h2", "<unparsable redis url>"),
            (" redis://u:p@h", "redis://u:***@h"),
        ] {
            assert_eq!(redact(url), want, "{url}");
        }
    }

    #[test]
    fn passwords_with_unencoded_reserved_characters_never_survive_redaction() {
        for (url, want) in [
            (
                "redis://app:s3cr/etTOKEN@cache:6379/0",
                "redis://app:***@cache:6379/0",
            ),
            ("redis://app:s3cr#etTOKEN@cache:6379", "redis://***"),
            ("redis://app:s3cr?etTOKEN@cache:6379", "redis://***"),
            ("redis://:s3cr/etTOKEN@cache", "redis://:***@cache"),
            ("redis://s3cr/et@cache/1?x=y", "redis://***@cache/1?***"),
            (
                "redis://app:s3cr/et@cache/1?password=p",
                "redis://app:***@cache/1?***",
            ),
        ] {
            assert_eq!(redact(url), want, "{url}");
        }
    }

    #[test]
    fn a_secret_in_the_query_holding_an_at_sign_never_survives_redaction() {
        for url in [
            "redis+unix:///run/redis.sock?db=0&pass=hunter@2SECRET",
            "redis://cache:6379/0?password=abc@defSECRET",
            "redis://app:pw@cache:6379/0?token=x@ySECRET",
            "redis://cache:6379/0#abc@defSECRET",
        ] {
            let shown = redact(url);
            assert!(
                !shown.contains("SECRET") && !shown.contains("abc") && !shown.contains("pw"),
                "{url} -> {shown}"
            );
        }
        assert_eq!(
            redact("redis+unix:///run/redis.sock?db=0&pass=hunter@2SECRET"),
            "redis+unix://***"
        );
    }

    #[test]
    fn a_fleet_config_and_its_url_error_never_show_such_a_password() {
        // `/` ends the authority for the URL parser: "app" is read as the
        // host and "s3cr" as its port, which fails to parse
        let config = crate::FleetConfig::new("redis://app:s3cr/etTOKEN@cache:6379/0");
        assert!(!format!("{config:?}").contains("s3cr"), "{config:?}");
        let Err(e) = config.client() else {
            panic!("the URL parses");
        };
        assert!(!e.to_string().contains("s3cr"), "{e}");
        assert!(!format!("{e:?}").contains("s3cr"), "{e:?}");
    }
}
