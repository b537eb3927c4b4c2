//! Whether a request that changes state comes from the portal's own pages: a cookie is sent by
//! the browser whichever site asks, so a request signed in by cookie must also show it was
//! made by the portal's origin (cross-site request forgery).

use axum::http::{HeaderMap, Method, header};

/// Whether `method` changes state (everything but `GET`, `HEAD` and `OPTIONS`).
pub fn changes_state(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// Whether the request says it comes from the portal's own origin: `Sec-Fetch-Site:
/// same-origin`, or else an `Origin` equal to `public_origin` (`--public-url`), or without one,
/// naming the host the request was sent to. A request that says neither is not.
pub fn same_origin(headers: &HeaderMap, public_origin: Option<&str>) -> bool {
    if let Some(site) = headers.get("sec-fetch-site") {
        return site.as_bytes() == b"same-origin";
    }
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    match public_origin {
        Some(public) => is_origin(origin, public),
        None => headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|host| is_origin_of_host(origin, host)),
    }
}

/// Whether `origin` (an `Origin` header) is the origin of the portal reached at `host` (a `Host`
/// header) when it is served directly: `http://` and that host, whose port is 80 when it names
/// none. `portal serve` speaks plain http; served over https, through a proxy, it is told its
/// address with `--public-url`.
pub fn is_origin_of_host(origin: &str, host: &str) -> bool {
    is_origin(origin, &format!("http://{host}"))
}

/// Whether two origins are one: the same scheme, host and port, letters in either case and a
/// scheme's default port (80 for http, 443 for https) written or not.
fn is_origin(origin: &str, expected: &str) -> bool {
    canonical(origin) == canonical(expected)
}

/// `origin` in lower case, without a trailing `/` and without its scheme's default port.
fn canonical(origin: &str) -> String {
    let origin = origin.trim_end_matches('/').to_ascii_lowercase();
    for (scheme, port) in [("http://", ":80"), ("https://", ":443")] {
        if origin.starts_with(scheme)
            && let Some(without) = origin.strip_suffix(port)
        {
            return without.to_string();
        }
    }
    origin
}

/// Whether the request says it comes from another site (an `Origin` or `Sec-Fetch-Site` that is
/// not the portal's). Unlike [`same_origin`], saying nothing passes: API clients send neither.
pub fn from_another_site(headers: &HeaderMap, public_origin: Option<&str>) -> bool {
    let says = headers.contains_key("sec-fetch-site") || headers.contains_key(header::ORIGIN);
    says && !same_origin(headers, public_origin)
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_static(value));
        }
        map
    }

    fn check(pairs: &[(&'static str, &'static str)], public: Option<&str>, expected: bool) {
        assert_eq!(
            same_origin(&headers(pairs), public),
            expected,
            "{pairs:?} {public:?}"
        );
    }

    #[test]
    fn origins() {
        check(&[("sec-fetch-site", "same-origin")], None, true);
        check(
            &[
                ("sec-fetch-site", "cross-site"),
                ("origin", "http://a:1"),
                ("host", "a:1"),
            ],
            None,
            false,
        );
        check(&[("sec-fetch-site", "same-site")], None, false);
        check(
            &[
                ("origin", "http://127.0.0.1:8080"),
                ("host", "127.0.0.1:8080"),
            ],
            None,
            true,
        );
        check(
            &[
                ("origin", "http://evil.example"),
                ("host", "127.0.0.1:8080"),
            ],
            None,
            false,
        );
        check(
            &[("origin", "null"), ("host", "127.0.0.1:8080")],
            None,
            false,
        );
        check(&[("host", "127.0.0.1:8080")], None, false);
        check(
            &[("origin", "https://chat.example.com")],
            Some("https://chat.example.com"),
            true,
        );
        check(
            &[
                ("origin", "http://chat.example.com"),
                ("host", "chat.example.com"),
            ],
            Some("https://chat.example.com"),
            false,
        );
    }

    #[test]
    fn an_origin_matches_only_with_its_scheme_and_port() {
        check(
            &[
                ("origin", "https://127.0.0.1:8080"),
                ("host", "127.0.0.1:8080"),
            ],
            None,
            false,
        );
        check(
            &[
                ("origin", "http://127.0.0.1:8081"),
                ("host", "127.0.0.1:8080"),
            ],
            None,
            false,
        );
        check(
            &[("origin", "http://127.0.0.1"), ("host", "127.0.0.1:8080")],
            None,
            false,
        );
        check(
            &[("origin", "HTTP://LocalHost:80"), ("host", "localhost")],
            None,
            true,
        );
        check(
            &[("origin", "https://chat.example.com:443")],
            Some("https://chat.example.com"),
            true,
        );
        check(
            &[("origin", "https://chat.example.com:8443")],
            Some("https://chat.example.com"),
            false,
        );
        assert!(is_origin_of_host("http://[::1]:80", "[::1]"));
        assert!(!is_origin_of_host("https://[::1]", "[::1]"));
    }

    #[test]
    fn saying_nothing_is_not_another_site() {
        assert!(!from_another_site(&headers(&[]), None));
        assert!(from_another_site(
            &headers(&[("origin", "http://evil.example"), ("host", "a")]),
            None
        ));
        assert!(!from_another_site(
            &headers(&[("origin", "http://a"), ("host", "a")]),
            None
        ));
    }
}
