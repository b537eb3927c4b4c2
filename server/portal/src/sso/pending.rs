//! Sign-ins under way: what the portal sent a browser to its provider with, kept until the
//! provider sends it back. A record is found by the `state` the provider returns, must be
//! claimed by the browser that started it (the random value of the `portal_sso` cookie), is used
//! once, and lasts [`LIFETIME`].

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// How long a sign-in may take at the provider. **Decision:** 10 minutes: enough to type a
/// password and a second factor, short enough that a stolen link is soon useless.
pub const LIFETIME: Duration = Duration::from_secs(10 * 60);

/// The most sign-ins under way at once. **Decision:** 10,000 (9.4 MiB measured when each holds a
/// return path of [`RETURN_PATH_MOST`] bytes): more than any organisation starts in ten
/// minutes; past it a new sign-in is refused rather than memory taken.
pub const MOST: usize = 10_000;

/// The most sign-ins under way from one client (an address, or an IPv6 /64). **Decision:** 100:
/// more than the people behind one office's address start at the same moment, and a flood from
/// one place fills a hundredth of [`MOST`], not all of it.
pub const FROM_ONE_CLIENT: usize = 100;

/// The longest return path kept. **Decision:** 512 bytes, far more than the portal's own
/// addresses (`/c/<id>`).
pub const RETURN_PATH_MOST: usize = 512;

/// What a sign-in under way remembers.
#[derive(Debug, Clone)]
pub struct Pending {
    pub provider: String,
    /// The PKCE code verifier.
    pub verifier: String,
    pub nonce: String,
    /// Where the browser goes once signed in: a path of this portal.
    pub return_to: String,
    /// The SHA-256 digest of the browser's `portal_sso` cookie value.
    binding: [u8; 32],
    /// The client that started it ([`crate::sessions::network`] of its address), when known.
    client: Option<IpAddr>,
    expires: Instant,
}

/// The sign-ins under way, by `state`.
#[derive(Debug, Default)]
pub struct PendingSignIns {
    records: Mutex<HashMap<String, Pending>>,
}

/// Why a returning browser's sign-in is not found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unclaimed {
    /// Unknown `state`, already used, expired, or another browser's.
    Unknown,
    /// Too many sign-ins are under way.
    Full,
}

impl PendingSignIns {
    /// Remembers a sign-in `state` names, for the browser holding `binding`, started by
    /// `client`.
    #[allow(clippy::too_many_arguments)]
    pub fn keep(
        &self,
        state: String,
        binding: &str,
        client: Option<IpAddr>,
        provider: String,
        verifier: String,
        nonce: String,
        return_to: String,
        now: Instant,
    ) -> Result<(), Unclaimed> {
        let client = client.map(crate::sessions::network);
        let mut records = self.records.lock().unwrap_or_else(|e| e.into_inner());
        records.retain(|_, r| r.expires > now);
        let from_client = || {
            records
                .values()
                .filter(|r| client.is_some() && r.client == client)
                .count()
        };
        if records.len() >= MOST || from_client() >= FROM_ONE_CLIENT {
            return Err(Unclaimed::Full);
        }
        records.insert(
            state,
            Pending {
                provider,
                verifier,
                nonce,
                return_to,
                binding: Sha256::digest(binding.as_bytes()).into(),
                client,
                expires: now + LIFETIME,
            },
        );
        Ok(())
    }

    /// Takes the sign-in `state` names, when the browser holds its `binding` and it has not
    /// expired. Taken once: a second claim of the same `state` finds nothing, and a claim with a
    /// wrong binding uses it up too, so a stolen `state` cannot be tried twice.
    pub fn claim(
        &self,
        state: &str,
        binding: Option<&str>,
        now: Instant,
    ) -> Result<Pending, Unclaimed> {
        let record = self
            .records
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(state)
            .ok_or(Unclaimed::Unknown)?;
        let presented: [u8; 32] = Sha256::digest(binding.unwrap_or_default().as_bytes()).into();
        if binding.is_none() || !bool::from(presented.ct_eq(&record.binding)) {
            return Err(Unclaimed::Unknown);
        }
        if record.expires <= now {
            return Err(Unclaimed::Unknown);
        }
        Ok(record)
    }
}

/// The path a browser may be sent back to after signing in: a path of this portal, never
/// another site. Anything else is `/`.
pub fn return_path(asked: Option<&str>) -> String {
    let Some(path) = asked else {
        return "/".into();
    };
    let same_site = path.starts_with('/')
        && !path.starts_with("//")
        && !path.starts_with("/\\")
        && !path.chars().any(|c| c.is_control() || c == '\\')
        && path.len() <= RETURN_PATH_MOST;
    if same_site { path.into() } else { "/".into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn return_paths_stay_on_the_portal() {
        for (asked, kept) in [
            (None, "/"),
            (Some("/"), "/"),
            (Some("/c/123?x=1#y"), "/c/123?x=1#y"),
            (Some("https://evil.example"), "/"),
            (Some("//evil.example/x"), "/"),
            (Some("/\\evil.example"), "/"),
            (Some("/x\\y"), "/"),
            (Some("javascript:alert(1)"), "/"),
            (Some("/\tevil"), "/"),
            (Some("evil.example"), "/"),
            (Some(""), "/"),
        ] {
            assert_eq!(return_path(asked), kept, "{asked:?}");
        }
        let longest = format!("/{}", "a".repeat(RETURN_PATH_MOST - 1));
        assert_eq!(return_path(Some(&longest)), longest);
        assert_eq!(return_path(Some(&format!("{longest}a"))), "/");
    }

    fn keep(store: &PendingSignIns, state: &str, binding: &str, now: Instant) {
        keep_from(store, state, binding, None, now).expect("kept");
    }

    fn keep_from(
        store: &PendingSignIns,
        state: &str,
        binding: &str,
        client: Option<IpAddr>,
        now: Instant,
    ) -> Result<(), Unclaimed> {
        store.keep(
            state.into(),
            binding,
            client,
            "p".into(),
            "v".into(),
            "n".into(),
            "/".into(),
            now,
        )
    }

    #[test]
    fn a_sign_in_is_claimed_once_by_its_browser_before_it_expires() {
        let now = Instant::now();
        let store = PendingSignIns::default();
        keep(&store, "s1", "b1", now);
        assert!(store.claim("s1", Some("b1"), now).is_ok());
        assert_eq!(
            store.claim("s1", Some("b1"), now).err(),
            Some(Unclaimed::Unknown)
        );
        keep(&store, "s2", "b2", now);
        assert_eq!(
            store.claim("s2", Some("other"), now).err(),
            Some(Unclaimed::Unknown)
        );
        assert_eq!(
            store.claim("s2", Some("b2"), now).err(),
            Some(Unclaimed::Unknown)
        );
        keep(&store, "s3", "b3", now);
        assert_eq!(store.claim("s3", None, now).err(), Some(Unclaimed::Unknown));
        keep(&store, "s4", "b4", now);
        assert_eq!(
            store.claim("s4", Some("b4"), now + LIFETIME).err(),
            Some(Unclaimed::Unknown)
        );
    }

    #[test]
    fn past_the_most_sign_ins_under_way_a_new_one_is_refused_until_old_ones_expire() {
        let now = Instant::now();
        let store = PendingSignIns::default();
        for n in 0..MOST {
            keep(&store, &format!("s{n}"), "b", now);
        }
        let one_more = keep_from(&store, "more", "b", None, now);
        assert_eq!(one_more, Err(Unclaimed::Full));
        keep(&store, "later", "b", now + LIFETIME);
        assert!(store.claim("later", Some("b"), now + LIFETIME).is_ok());
    }

    #[test]
    fn one_client_holds_at_most_its_share_of_the_sign_ins_under_way() {
        let now = Instant::now();
        let store = PendingSignIns::default();
        let flooder: IpAddr = "2001:db8:1:2::7".parse().expect("address");
        let same_64: IpAddr = "2001:db8:1:2::99".parse().expect("address");
        let other: IpAddr = "2001:db8:1:3::7".parse().expect("address");
        for n in 0..FROM_ONE_CLIENT {
            keep_from(&store, &format!("s{n}"), "b", Some(flooder), now).expect("kept");
        }
        for (client, kept) in [(flooder, false), (same_64, false), (other, true)] {
            let result = keep_from(&store, &format!("{client}"), "b", Some(client), now);
            assert_eq!(result.is_ok(), kept, "{client}");
        }
        assert!(store.claim("s0", Some("b"), now).is_ok());
        assert!(keep_from(&store, "again", "b", Some(flooder), now).is_ok());
    }
}
