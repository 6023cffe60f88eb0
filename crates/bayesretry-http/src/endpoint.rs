//! [`Target`]: the parts of a request an endpoint key may be made of.

use core::fmt::Write as _;

use http::Method;

/// What an endpoint key is made from: the method, the origin and the path of a
/// request (never its query).
#[derive(Clone, Copy, Debug)]
pub struct Target<'a> {
    method: &'a Method,
    scheme: &'a str,
    host: &'a str,
    port: Option<u16>,
    path: &'a str,
}

impl<'a> Target<'a> {
    /// A target; `port` is the URL's port unless it is the scheme's default
    /// (80 for `http`, 443 for `https`), which is `None`, as a URL parser writes
    /// it.
    pub const fn new(
        method: &'a Method,
        scheme: &'a str,
        host: &'a str,
        port: Option<u16>,
        path: &'a str,
    ) -> Target<'a> {
        Target {
            method,
            scheme,
            host,
            port,
            path,
        }
    }

    /// The request's method.
    pub const fn method(&self) -> &'a Method {
        self.method
    }

    /// The scheme, `http` or `https`.
    pub const fn scheme(&self) -> &'a str {
        self.scheme
    }

    /// The host, a name or an address: in lower case in the targets the
    /// adapters make (a host names the same server in any case).
    pub const fn host(&self) -> &'a str {
        self.host
    }

    /// The port, when it is not the scheme's default.
    pub const fn port(&self) -> Option<u16> {
        self.port
    }

    /// The path, ids and all: map it to a route template before putting it in
    /// a key.
    pub const fn path(&self) -> &'a str {
        self.path
    }

    /// The default endpoint key, the origin: `scheme://host:port`, or
    /// `scheme://host` on the scheme's default port — a URL's own spelling of
    /// it. Every path of one server shares it.
    pub fn origin(&self) -> String {
        let mut key = String::with_capacity(self.scheme.len() + self.host.len() + 9);
        key.push_str(self.scheme);
        key.push_str("://");
        key.push_str(self.host);
        if let Some(port) = self.port {
            // writing to a String cannot fail
            let _ = write!(key, ":{port}");
        }
        key
    }
}

/// The port a scheme implies when the URL names none.
pub(crate) fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" | "ws" => Some(80),
        "https" | "wss" => Some(443),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_origin_names_scheme_host_and_port_only() {
        let get = Method::GET;
        let target = Target::new(&get, "https", "api.example.com", None, "/v1/users/42");
        assert_eq!(target.origin(), "https://api.example.com");
        let other = Target::new(&get, "http", "127.0.0.1", Some(8080), "/v1/users/42");
        assert_eq!(other.origin(), "http://127.0.0.1:8080");
        assert_eq!(default_port("http"), Some(80));
        assert_eq!(default_port("gopher"), None);
    }
}
