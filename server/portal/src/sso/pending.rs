//! Sign-ins under way: what the portal sent a browser to its provider with, kept in the database
//! until the provider sends the browser back, to this replica or any other
//! (`Storage::keep_sso_sign_in` and `claim_sso_sign_in`, whose rules are storage's). A sign-in is
//! found by the digest of the `state` the provider returns, must be claimed by the browser that
//! started it (the digest of its `portal_sso` cookie), is used once, and lasts [`LIFETIME`].

use std::net::IpAddr;
use std::time::Duration;

use portal_store::{SsoSignIn, SsoSignInLimits};

use super::relying::Authorization;
use crate::sessions::{digest, network};

/// How long a sign-in may take at the provider. **Decision:** 10 minutes: enough to type a
/// password and a second factor, short enough that a stolen link is soon useless.
pub const LIFETIME: Duration = Duration::from_secs(10 * 60);

/// The most sign-ins under way at once, over every replica. **Decision:** 10,000 (rows of
/// under 1 KB each, with a return path of [`RETURN_PATH_MOST`] bytes): more than any
/// organisation starts in ten minutes; past it a new sign-in is refused rather than the table
/// grown.
pub const MOST: u64 = 10_000;

/// The most sign-ins under way from one client (an address, or an IPv6 /64). **Decision:** 100:
/// more than the people behind one office's address start at the same moment, and a flood from
/// one place fills a hundredth of [`MOST`], not all of it.
pub const FROM_ONE_CLIENT: u64 = 100;

/// The longest return path kept. **Decision:** 512 bytes, far more than the portal's own
/// addresses (`/c/<id>`).
pub const RETURN_PATH_MOST: usize = 512;

/// The limits storage keeps sign-ins under way to.
pub const LIMITS: SsoSignInLimits = SsoSignInLimits {
    lifetime_ms: LIFETIME.as_millis() as i64,
    most: MOST,
    from_one_client: FROM_ONE_CLIENT,
};

/// The sign-in `authorization` starts with `provider`, for the browser holding `binding`, at
/// `client`, as storage keeps it: the digests of its `state` and of the binding, never the
/// values, and the client's network ([`network`]: its address, or its IPv6 /64).
pub fn record(
    authorization: &Authorization,
    binding: &str,
    client: Option<IpAddr>,
    provider: &str,
    return_to: String,
) -> SsoSignIn {
    SsoSignIn {
        state_sha256: digest(&authorization.state),
        binding_sha256: digest(binding),
        client: client.map(|address| network(address).to_string()),
        provider: provider.to_string(),
        verifier: authorization.verifier.clone(),
        nonce: authorization.nonce.clone(),
        return_to,
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

    // Storage keeps the digests of the state and the binding, never the values, and counts a
    // client's sign-ins by its network: an IPv6 /64 is one client.
    #[test]
    fn a_sign_in_is_kept_by_the_digests_of_its_state_and_binding_and_its_clients_network() {
        let authorization = Authorization {
            url: "https://idp.example/authorize".into(),
            state: "abc".into(),
            nonce: "the nonce".into(),
            verifier: "the verifier".into(),
        };
        let kept = |client: &str| {
            record(
                &authorization,
                "the binding",
                Some(client.parse().expect("an address")),
                "idp",
                "/c/1".into(),
            )
        };
        let sign_in = kept("2001:db8:1:2::7");
        assert_eq!(
            sign_in.state_sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            "SHA-256 of the state, in hexadecimal"
        );
        assert_eq!(sign_in.binding_sha256, digest("the binding"));
        assert_ne!(sign_in.binding_sha256, "the binding");
        assert_eq!(
            (
                sign_in.provider.as_str(),
                sign_in.verifier.as_str(),
                sign_in.nonce.as_str(),
                sign_in.return_to.as_str()
            ),
            ("idp", "the verifier", "the nonce", "/c/1")
        );
        assert_eq!(sign_in.client.as_deref(), Some("2001:db8:1:2::"));
        assert_eq!(kept("2001:db8:1:2::99").client, sign_in.client);
        assert_eq!(
            kept("2001:db8:1:3::7").client.as_deref(),
            Some("2001:db8:1:3::")
        );
        assert_eq!(kept("192.0.2.7").client.as_deref(), Some("192.0.2.7"));
    }
}
