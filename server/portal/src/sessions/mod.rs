//! Sign-in sessions: a person signs in with a password once and their browser carries a session
//! cookie after that (docs/identity.md, "Signing in").
//!
//! The cookie holds a random 256-bit id; storage keeps only its SHA-256 digest, the user, a
//! fingerprint of the password hash they signed in with, and an expiry that slides with use.
//! Sessions are kept in storage, so a restart keeps people signed in. This layer knows nothing of
//! passwords beyond asking [`Identity::check_password`], so another way of proving who someone
//! is (single sign-on) can start a session through [`Sessions::start`] later.

mod forwarded;
pub mod origin;
mod throttle;

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use cookie::{Cookie, SameSite};
use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;

use portal_identity::{Caller, Identity};
use portal_store::{AsyncStorage, Owner, StorageError, StoredSession};

pub use forwarded::{client_address, parse_trusted_proxy};
pub use throttle::{FAILURES, Guess, Throttle, WINDOW, network, rule};

/// The stamp of a session single sign-on started begins so, and goes on with the provider's id:
/// it lasts while the account single sign-on made exists (a password's stamp is the hexadecimal
/// fingerprint of its hash).
const SSO_STAMP: &str = "sso:";

/// The session cookie's name.
pub const COOKIE: &str = "portal_session";
/// Password checks that run at once. **Decision:** 2, the machine's cores: each takes 19 MiB and
/// tens of milliseconds of a core, so a flood of sign-ins waits its turn instead of taking the
/// memory and the blocking threads storage needs.
const CHECKS_AT_ONCE: usize = 2;

/// How long a session lasts without use when `--session-lifetime` is not given.
/// **Decision:** 14 days.
pub const DEFAULT_LIFETIME: Duration = Duration::from_secs(14 * 24 * 60 * 60);

/// How sessions are kept.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// How long a session lasts after its last use.
    pub lifetime: Duration,
    /// The origin the portal is served at (`--public-url`), when known: cross-site checks compare
    /// with it, and an `https` origin makes the cookie `Secure`.
    pub public_origin: Option<String>,
    /// The proxies whose `X-Forwarded-For` names the client (`--trusted-proxy`), for the failed
    /// sign-in counts.
    pub trusted_proxies: Vec<ipnet::IpNet>,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            lifetime: DEFAULT_LIFETIME,
            public_origin: None,
            trusted_proxies: Vec::new(),
        }
    }
}

impl SessionConfig {
    fn secure(&self) -> bool {
        self.public_origin
            .as_deref()
            .is_some_and(|o| o.starts_with("https://"))
    }
}

/// Signing in, finding the session a cookie names, and signing out.
#[derive(Debug, Clone)]
pub struct Sessions {
    storage: AsyncStorage,
    identity: Arc<Identity>,
    config: SessionConfig,
    throttle: Throttle,
    checks: Arc<Semaphore>,
}

/// A sign-in that did not start a session.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignInError {
    #[error("the organisation, user or password is wrong; check them and try again")]
    Wrong,
    #[error("too many failed sign-ins; try again in {} seconds", wait.as_secs().max(1))]
    TooMany { wait: Duration },
    #[error("storage failed: {0}")]
    Storage(String),
}

/// A session found from its cookie.
#[derive(Debug, Clone)]
pub struct Found {
    pub caller: Caller,
    /// A fresh cookie to send back when the session's expiry moved.
    pub renewed: Option<String>,
}

impl Sessions {
    pub fn new(storage: AsyncStorage, identity: Arc<Identity>, config: SessionConfig) -> Self {
        Sessions {
            throttle: Throttle::new(storage.clone()),
            storage,
            identity,
            config,
            checks: Arc::new(Semaphore::new(CHECKS_AT_ONCE)),
        }
    }

    /// The configuration sessions are kept with.
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// Checks a password sign-in and starts a session; returns the caller and the `Set-Cookie`
    /// value. Refused without checking while the user or the client address failed too often;
    /// the sign-in takes its place among the failures before it waits for its check, so guesses
    /// sent at once are counted before any of them is checked.
    pub async fn sign_in(
        &self,
        organisation: &str,
        user: &str,
        password: &str,
        client: Option<IpAddr>,
    ) -> Result<(Caller, String), SignInError> {
        let known = self
            .identity
            .user(organisation, user)
            .map(|u| format!("{}/{}", u.organisation, u.id));
        let guess = self
            .throttle
            .guess(known.as_deref(), client)
            .await
            .map_err(|e| SignInError::Storage(e.to_string()))?
            .map_err(|wait| SignInError::TooMany { wait })?;
        let _turn = Arc::clone(&self.checks)
            .acquire_owned()
            .await
            .map_err(|e| SignInError::Storage(e.to_string()))?;
        let identity = Arc::clone(&self.identity);
        let (organisation, user, password) = (
            organisation.to_string(),
            user.to_string(),
            password.to_string(),
        );
        let checked = tokio::task::spawn_blocking(move || {
            identity.check_password(&organisation, &user, &password)
        })
        .await
        .map_err(|e| SignInError::Storage(e.to_string()))?;
        let Some(caller) = checked else {
            guess.wrong();
            return Err(SignInError::Wrong);
        };
        guess.right().await;
        let cookie = self
            .start(&caller)
            .await
            .map_err(|e| SignInError::Storage(e.to_string()))?;
        Ok((caller, cookie))
    }

    /// Starts a session for a caller whose identity was proven, and returns its `Set-Cookie`
    /// value. Expired sessions are cleared out on the way.
    pub async fn start(&self, caller: &Caller) -> Result<String, StorageError> {
        let stamp = self.identity.password_stamp(caller).unwrap_or_default();
        self.start_stamped(caller, stamp).await
    }

    /// Starts a session for a caller single sign-on signed into the account it made for them,
    /// through `provider`.
    pub async fn start_sso(&self, caller: &Caller, provider: &str) -> Result<String, StorageError> {
        self.start_stamped(caller, format!("{SSO_STAMP}{provider}"))
            .await
    }

    async fn start_stamped(&self, caller: &Caller, stamp: String) -> Result<String, StorageError> {
        let now = now_ms();
        self.storage.remove_expired_sessions(now).await?;
        let mut id = [0u8; 32];
        getrandom::fill(&mut id).map_err(|e| StorageError::Interrupted {
            detail: format!("no randomness for a session id: {e}"),
        })?;
        let id = URL_SAFE_NO_PAD.encode(id);
        self.storage
            .create_session(StoredSession {
                id_sha256: digest(&id),
                owner: Owner::new(caller.organisation.clone(), caller.user.clone()),
                stamp,
                created_at_ms: now,
                expires_at_ms: now.saturating_add(millis(self.config.lifetime)),
            })
            .await?;
        Ok(self.cookie(id, self.config.lifetime))
    }

    /// The caller a session cookie's value names, when the session exists, has not expired, and
    /// the user still has the password they signed in with (or, signed in by single sign-on,
    /// their account). A session used after a tenth of its
    /// lifetime (at most an hour) has its expiry moved and a renewed cookie.
    pub async fn find(&self, id: &str) -> Result<Option<Found>, StorageError> {
        let id_sha256 = digest(id);
        let Some(session) = self.storage.session(&id_sha256).await? else {
            return Ok(None);
        };
        let now = now_ms();
        let caller = self
            .identity
            .caller(&session.owner.org_id, &session.owner.user_id);
        let current = if session.stamp.starts_with(SSO_STAMP) {
            self.storage
                .sso_account_of(&session.owner)
                .await?
                .map(|_| session.stamp.clone())
        } else {
            self.identity.password_stamp(&caller)
        };
        if session.expires_at_ms <= now || current.as_deref() != Some(session.stamp.as_str()) {
            self.storage.revoke_session(&id_sha256).await?;
            return Ok(None);
        }
        let lifetime = millis(self.config.lifetime);
        let renew_every = (lifetime / 10).min(60 * 60 * 1000);
        let renewed = if session.expires_at_ms - now < lifetime - renew_every {
            self.storage
                .extend_session(&id_sha256, now.saturating_add(lifetime))
                .await?;
            Some(self.cookie(id.to_string(), self.config.lifetime))
        } else {
            None
        };
        Ok(Some(Found { caller, renewed }))
    }

    /// Ends the session a cookie's value names, and returns the `Set-Cookie` value that removes
    /// the cookie.
    pub async fn sign_out(&self, id: Option<&str>) -> Result<String, StorageError> {
        Ok(self.end(id).await?.0)
    }

    /// [`Sessions::sign_out`], also returning the single sign-on provider the session was
    /// started through, if it was.
    pub async fn end(&self, id: Option<&str>) -> Result<(String, Option<String>), StorageError> {
        let mut provider = None;
        if let Some(id) = id {
            let id_sha256 = digest(id);
            provider = self
                .storage
                .session(&id_sha256)
                .await?
                .and_then(|s| s.stamp.strip_prefix(SSO_STAMP).map(String::from));
            self.storage.revoke_session(&id_sha256).await?;
        }
        Ok((self.cookie(String::new(), Duration::ZERO), provider))
    }

    fn cookie(&self, value: String, max_age: Duration) -> String {
        let max_age = i64::try_from(max_age.as_secs()).unwrap_or(i64::MAX);
        Cookie::build((COOKIE, value))
            .http_only(true)
            .same_site(SameSite::Strict)
            .secure(self.config.secure())
            .path("/")
            .max_age(cookie::time::Duration::seconds(max_age))
            .build()
            .to_string()
    }
}

/// Reads `--session-lifetime`: a whole number and a unit, `d`, `h`, `m` or `s`.
pub fn parse_lifetime(text: &str) -> Result<Duration, String> {
    let wrong =
        || format!("`{text}` is not a lifetime; write a number and a unit: 14d, 12h, 30m or 45s");
    let unit = text.chars().last().ok_or_else(wrong)?;
    let seconds = match unit {
        'd' => 24 * 60 * 60,
        'h' => 60 * 60,
        'm' => 60,
        's' => 1,
        _ => return Err(wrong()),
    };
    let count: u64 = text[..text.len() - 1].parse().map_err(|_| wrong())?;
    let lifetime = count
        .checked_mul(seconds)
        .filter(|s| (1..=366 * 24 * 60 * 60).contains(s))
        .ok_or_else(|| {
            format!("`{text}` is not between one second and a year; pick a lifetime in that range")
        })?;
    Ok(Duration::from_secs(lifetime))
}

/// Reads `--public-url` as the origin it names: `https://host[:port]`, or `http://`, without a
/// path.
pub fn parse_public_url(text: &str) -> Result<String, String> {
    let wrong = || {
        format!(
            "`{text}` is not an address the portal is served at; write it as https://chat.example.com"
        )
    };
    let trimmed = text.trim_end_matches('/');
    let host = trimmed
        .strip_prefix("https://")
        .or_else(|| trimmed.strip_prefix("http://"))
        .ok_or_else(wrong)?;
    if host.is_empty() || host.contains(['/', '?', '#', '@', ' ']) {
        return Err(wrong());
    }
    Ok(trimmed.to_ascii_lowercase())
}

/// The session id a request's `Cookie` headers carry, if any.
pub fn cookie_value(headers: &axum::http::HeaderMap) -> Option<String> {
    headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(Cookie::split_parse)
        .filter_map(Result::ok)
        .find(|c| c.name() == COOKIE && !c.value().is_empty())
        .map(|c| c.value().to_string())
}

/// The SHA-256 digest of `id` in lowercase hexadecimal: what storage keeps of a session id, and
/// of a single sign-on's `state` and binding cookie.
pub(crate) fn digest(id: &str) -> String {
    Sha256::digest(id.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// The time now, in milliseconds since the Unix epoch, as sessions, sign-ins and API keys
/// compare their expiries.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifetimes() {
        assert_eq!(parse_lifetime("14d"), Ok(Duration::from_secs(14 * 86_400)));
        assert_eq!(parse_lifetime("30m"), Ok(Duration::from_secs(1_800)));
        assert_eq!(parse_lifetime("5s"), Ok(Duration::from_secs(5)));
        for wrong in [
            "",
            "d",
            "14",
            "-1d",
            "1.5h",
            "0s",
            "400d",
            "99999999999999999999d",
            "14 d",
        ] {
            assert!(parse_lifetime(wrong).is_err(), "{wrong}");
        }
    }

    #[test]
    fn public_urls() {
        assert_eq!(
            parse_public_url("https://Chat.Example.com/"),
            Ok("https://chat.example.com".to_string())
        );
        assert_eq!(
            parse_public_url("http://10.0.0.5:8080"),
            Ok("http://10.0.0.5:8080".to_string())
        );
        for wrong in [
            "chat.example.com",
            "https://",
            "https://a/b",
            "ftp://a",
            "https://u@a",
        ] {
            assert!(parse_public_url(wrong).is_err(), "{wrong}");
        }
    }

    #[test]
    fn the_session_cookie_is_found_among_others() {
        let mut headers = axum::http::HeaderMap::new();
        headers.insert(
            axum::http::header::COOKIE,
            "theme=dark; portal_session=abc; other=1"
                .parse()
                .expect("header"),
        );
        assert_eq!(cookie_value(&headers), Some("abc".to_string()));
        headers.insert(
            axum::http::header::COOKIE,
            "portal_session=".parse().expect("header"),
        );
        assert_eq!(cookie_value(&headers), None);
    }
}
