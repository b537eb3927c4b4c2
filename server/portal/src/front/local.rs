//! Local mode has no sign-in, so the portal itself must make sure only its own user reaches it:
//! it listens on loopback unless told otherwise, answers only requests addressed to a loopback
//! name (a web page that rebinds its own name to 127.0.0.1 is refused), and answers the API only
//! for its own pages (another site's page cannot post to it).

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::{StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::sessions::origin::is_origin_of_host;
use portal_identity::Mode;

/// Why `portal serve` refuses to start: local mode would serve its API, which has no sign-in,
/// beyond this machine.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--host {address} is not a loopback address, so other machines could reach the portal, and without users (local mode) it has no sign-in: anyone who reaches it could read and write every conversation; listen on 127.0.0.1 (the default), configure users with --config (docs/identity.md), or pass --allow-remote-without-sign-in if every machine that can reach it is trusted"
)]
pub struct RemoteWithoutSignIn {
    pub address: IpAddr,
}

/// Checks the address `portal serve` is about to listen on. A non-loopback address in local mode
/// is refused unless `allow_remote_without_sign_in`; then the warning to print comes back.
pub fn check_listen_address(
    address: IpAddr,
    mode: Mode,
    allow_remote_without_sign_in: bool,
) -> Result<Option<String>, RemoteWithoutSignIn> {
    if mode == Mode::Users || address.to_canonical().is_loopback() {
        return Ok(None);
    }
    if !allow_remote_without_sign_in {
        return Err(RemoteWithoutSignIn { address });
    }
    Ok(Some(format!(
        "the portal has no sign-in (local mode) and listens on {address}: anyone who can reach this address can read and write every conversation; configure users with --config to sign them in"
    )))
}

/// What local mode lets through.
#[derive(Debug, Clone, Copy)]
pub struct LocalOnly {
    /// With `--allow-remote-without-sign-in`, requests addressed to any IP address are served
    /// too; names other than `localhost` still are not, as a rebound name would be one.
    pub allow_remote: bool,
}

/// A request local mode does not serve.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error(
        "this portal runs without sign-in (local mode), so it answers only requests addressed to localhost, 127.0.0.1 or [::1], and this one was addressed to {host}; open the portal at http://localhost:<port> or http://127.0.0.1:<port>, or configure users with --config"
    )]
    ForeignHost { host: String },
    #[error(
        "this portal runs without sign-in (local mode), so its API answers only its own pages, and this request came from {from}; use the portal's own page, or configure users with --config"
    )]
    CrossOrigin { from: String },
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        (
            StatusCode::FORBIDDEN,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            )],
            self.to_string(),
        )
            .into_response()
    }
}

impl LocalOnly {
    /// Whether local mode serves a request to `uri` with these `headers`: every request must be
    /// addressed to a loopback name; an API request must also come from the portal's own origin
    /// (or from no web page at all, as a command-line client's does).
    pub fn check(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), Refused> {
        let host = headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .or_else(|| uri.authority().map(|a| a.as_str()))
            .unwrap_or_default();
        if !self.serves_host(host) {
            return Err(Refused::ForeignHost {
                host: shown(host, "no name"),
            });
        }
        let path = uri.path();
        if path != "/api" && !path.starts_with("/api/") {
            return Ok(());
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or_default();
            if !is_origin_of_host(origin, host) {
                return Err(Refused::CrossOrigin {
                    from: format!("the page at {}", shown(origin, "an unnamed origin")),
                });
            }
        }
        let site = headers
            .get("sec-fetch-site")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        if site.eq_ignore_ascii_case("cross-site") || site.eq_ignore_ascii_case("same-site") {
            return Err(Refused::CrossOrigin {
                from: format!("a page of another site (Sec-Fetch-Site: {site})"),
            });
        }
        Ok(())
    }

    /// Whether `host` (a `Host` header: a name or address and maybe a port) is served.
    fn serves_host(&self, host: &str) -> bool {
        let name = match host.strip_prefix('[') {
            Some(rest) => match rest.split_once(']') {
                Some((address, port)) if port.is_empty() || is_port(port) => address,
                _ => return false,
            },
            None => match host.rsplit_once(':') {
                Some((name, port)) if is_port(port) => name,
                _ => host,
            },
        };
        if name.eq_ignore_ascii_case("localhost") {
            return true;
        }
        match name.parse::<IpAddr>() {
            Ok(address) => self.allow_remote || address.to_canonical().is_loopback(),
            Err(_) => false,
        }
    }
}

/// `:digits`, the port part of a `Host` header.
fn is_port(text: &str) -> bool {
    text.strip_prefix(':')
        .unwrap_or(text)
        .bytes()
        .all(|b| b.is_ascii_digit())
}

/// `text` quoted for a refusal, cut short; `missing` when it is empty.
fn shown(text: &str, missing: &str) -> String {
    if text.is_empty() {
        return missing.to_string();
    }
    let cut: String = text.chars().take(100).collect();
    format!("`{cut}`")
}

/// Refuses what local mode does not serve, before anything else looks at the request.
pub async fn guard(State(local): State<Arc<LocalOnly>>, request: Request, next: Next) -> Response {
    match local.check(request.uri(), request.headers()) {
        Ok(()) => next.run(request).await,
        Err(refused) => refused.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(name, value)| {
                (
                    header::HeaderName::from_bytes(name.as_bytes()).expect("name"),
                    HeaderValue::from_str(value).expect("value"),
                )
            })
            .collect()
    }

    fn check(allow_remote: bool, path: &str, pairs: &[(&str, &str)]) -> bool {
        let uri: Uri = path.parse().expect("uri");
        LocalOnly { allow_remote }
            .check(&uri, &headers(pairs))
            .is_ok()
    }

    #[test]
    fn loopback_names_with_any_port_are_served() {
        for host in [
            "localhost",
            "LocalHost:8080",
            "127.0.0.1",
            "127.0.0.1:41234",
            "127.1.2.3:80",
            "[::1]",
            "[::1]:8080",
        ] {
            assert!(check(false, "/api/info", &[("host", host)]), "{host}");
        }
    }

    #[test]
    fn other_names_and_addresses_are_refused() {
        for host in [
            "evil.example",
            "evil.example:8080",
            "localhost.evil.example",
            "localhost.",
            "127.0.0.1.nip.io",
            "192.168.1.5:8080",
            "[::1",
            "[::1]x",
            "",
        ] {
            assert!(!check(false, "/", &[("host", host)]), "{host}");
        }
    }

    #[test]
    fn allowing_remote_serves_addresses_but_never_names() {
        assert!(check(true, "/", &[("host", "192.168.1.5:8080")]));
        assert!(check(true, "/", &[("host", "[2001:db8::1]:8080")]));
        assert!(!check(true, "/", &[("host", "rebound.example:8080")]));
    }

    #[test]
    fn the_api_answers_its_own_origin_and_no_other() {
        let host = ("host", "127.0.0.1:8080");
        assert!(check(false, "/api/conversations", &[host]));
        assert!(check(
            false,
            "/api/conversations",
            &[
                host,
                ("origin", "http://127.0.0.1:8080"),
                ("sec-fetch-site", "same-origin")
            ]
        ));
        assert!(check(
            false,
            "/api/info",
            &[host, ("sec-fetch-site", "none")]
        ));
        for origin in [
            "http://evil.example",
            "http://localhost:8080",
            "http://127.0.0.1:8081",
            "https://127.0.0.1:8080",
            "http://127.0.0.1",
            "null",
        ] {
            assert!(
                !check(false, "/api/conversations", &[host, ("origin", origin)]),
                "{origin}"
            );
        }
        for site in ["cross-site", "same-site"] {
            assert!(!check(
                false,
                "/api/conversations",
                &[host, ("sec-fetch-site", site)]
            ));
        }
    }

    #[test]
    fn another_site_may_still_link_to_the_app() {
        let pairs = [("host", "127.0.0.1:8080"), ("sec-fetch-site", "cross-site")];
        assert!(check(false, "/", &pairs));
        assert!(check(false, "/c/some-conversation", &pairs));
    }

    #[test]
    fn only_local_mode_on_a_remote_address_needs_the_flag() {
        let any: IpAddr = "0.0.0.0".parse().expect("ip");
        let loopback: IpAddr = "127.0.0.1".parse().expect("ip");
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().expect("ip");
        assert_eq!(check_listen_address(loopback, Mode::Local, false), Ok(None));
        assert_eq!(check_listen_address(mapped, Mode::Local, false), Ok(None));
        assert_eq!(check_listen_address(any, Mode::Users, false), Ok(None));
        assert_eq!(
            check_listen_address(any, Mode::Local, false),
            Err(RemoteWithoutSignIn { address: any })
        );
        let warning = check_listen_address(any, Mode::Local, true)
            .expect("allowed")
            .expect("a warning");
        assert!(warning.contains("no sign-in"), "{warning}");
    }
}
