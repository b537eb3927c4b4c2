//! Single sign-on with OpenID Connect (docs/identity.md, "Single sign-on"): people sign in with
//! their organisation's identity provider, and get the same session cookie a password sign-in
//! gives. The providers come from the configuration directory (`portal_identity::sso`); the account rules
//! are [`claims`]; the protocol is [`relying`]; sign-ins under way, kept in the database so that
//! any replica finishes one, are [`pending`]; the addresses the browser visits are [`routes`].

pub mod claims;
pub mod pending;
pub mod relying;
mod routes;

use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

pub use portal_identity::sso::Provider;
pub use routes::router;

use claims::{Claims, Refusal};
use portal_identity::{Caller, Identity};
use portal_store::{AsyncStorage, Owner, SsoAccount, StorageError};
use relying::{Failure, RelyingParty};

use crate::sessions::now_ms;

/// The address providers send browsers back to, under `--public-url`.
pub const CALLBACK: &str = "/sso/callback";

/// The portal's relying parties, one per configured provider.
#[derive(Debug)]
pub struct Sso {
    parties: Vec<RelyingParty>,
    storage: AsyncStorage,
    identity: Arc<Identity>,
    secure: bool,
}

/// Why a sign-in through a provider ended without a session.
#[derive(Debug, thiserror::Error)]
pub enum SsoError {
    #[error("no provider is called `{0}`")]
    NoProvider(String),
    #[error("the person cancelled at the provider")]
    Cancelled,
    #[error("the sign-in is unknown, expired, already used or another browser's")]
    Unknown,
    #[error("too many sign-ins are under way")]
    Busy,
    #[error("{0}")]
    Provider(#[from] Failure),
    #[error("the account rules refuse them: {0:?}")]
    Refused(Refusal),
    #[error("they have no account, and first sign-ins make none")]
    NoAccount,
    #[error("storage failed: {0}")]
    Storage(#[from] StorageError),
}

impl Sso {
    /// The relying parties of `identity`'s providers, which send browsers back to
    /// `public_origin`. `None` when no provider is configured.
    pub fn new(
        identity: Arc<Identity>,
        storage: AsyncStorage,
        public_origin: Option<&str>,
    ) -> Result<Option<Sso>, String> {
        if identity.providers().is_empty() {
            return Ok(None);
        }
        let origin = public_origin.ok_or(
            "single sign-on needs the address the portal is served at, for providers to send people back to; start it with --public-url",
        )?;
        let parties = identity
            .providers()
            .iter()
            .map(|p| {
                RelyingParty::new(p.clone(), format!("{origin}{CALLBACK}"))
                    .map_err(|e| format!("provider `{}`: {e}", p.id))
            })
            .collect::<Result<_, _>>()?;
        Ok(Some(Sso {
            parties,
            storage,
            identity,
            secure: origin.starts_with("https://"),
        }))
    }

    fn party(&self, id: &str) -> Result<&RelyingParty, SsoError> {
        self.parties
            .iter()
            .find(|p| p.provider().id == id)
            .ok_or_else(|| SsoError::NoProvider(id.to_string()))
    }

    /// The providers the people of `organisation` sign in with.
    pub fn providers_of(&self, organisation: &str) -> impl Iterator<Item = &Provider> {
        self.parties
            .iter()
            .map(RelyingParty::provider)
            .filter(move |p| p.organisations.serves(organisation))
    }

    /// Starts a sign-in with provider `id` for the browser holding `binding`, at `client`:
    /// returns the provider's address to send it to.
    pub async fn start(
        &self,
        id: &str,
        binding: &str,
        client: Option<std::net::IpAddr>,
        return_to: String,
    ) -> Result<String, SsoError> {
        let party = self.party(id)?;
        let authorization = party.authorize().await?;
        let sign_in = pending::record(&authorization, binding, client, id, return_to);
        match self
            .storage
            .keep_sso_sign_in(sign_in, pending::LIMITS)
            .await
        {
            Ok(()) => Ok(authorization.url),
            Err(StorageError::SsoSignInsFull { .. }) => Err(SsoError::Busy),
            Err(error) => Err(error.into()),
        }
    }

    /// Finishes the sign-in `state` names, for the browser holding `binding`, whichever replica
    /// started it: the caller it signs in and where to send them, or why not. The sign-in is
    /// used up either way.
    pub async fn finish(
        &self,
        state: &str,
        binding: Option<&str>,
        code: Result<String, String>,
    ) -> Result<(Caller, String, &Provider), (SsoError, Option<&Provider>)> {
        let pending = self
            .storage
            .claim_sso_sign_in(
                crate::sessions::digest(state),
                binding.map(crate::sessions::digest),
            )
            .await
            .map_err(|e| (e.into(), None))?
            .ok_or((SsoError::Unknown, None))?;
        let party = self.party(&pending.provider).map_err(|e| (e, None))?;
        let provider = party.provider();
        let fail = |e: SsoError| (e, Some(provider));
        let code = code.map_err(|error| {
            fail(if error == "access_denied" {
                SsoError::Cancelled
            } else {
                SsoError::Provider(Failure::Refused(error))
            })
        })?;
        let claims = party
            .finish(
                code,
                pending.verifier,
                &pending.nonce,
                &claims::read_by(provider),
            )
            .await
            .map_err(|e| fail(e.into()))?;
        let caller = self.account(provider, &claims).await.map_err(fail)?;
        Ok((caller, pending.return_to, provider))
    }

    /// The caller whose account the provider's person has, made at their first sign-in when
    /// the provider allows it. Matched by the provider's `iss` and `sub`, never by email.
    async fn account(&self, provider: &Provider, claims: &Claims) -> Result<Caller, SsoError> {
        let organisation = claims::admit(provider, claims).map_err(SsoError::Refused)?;
        let subject = claims
            .0
            .get("sub")
            .and_then(serde_json::Value::as_str)
            .ok_or(SsoError::Refused(Refusal::NoOrganisation))?;
        if let Some(account) = self.storage.sso_account(&provider.issuer, subject).await? {
            if account.owner.org_id != organisation {
                return Err(SsoError::Refused(Refusal::NoOrganisation));
            }
            return Ok(self
                .identity
                .caller(&account.owner.org_id, &account.owner.user_id));
        }
        if !provider.rules.sign_up {
            return Err(SsoError::NoAccount);
        }
        let mut user = user_id(claims.handle(), &provider.issuer, subject);
        if self.identity.user(&organisation, &user).is_some() {
            user = user_id(None, &provider.issuer, subject);
        }
        let account = SsoAccount {
            issuer: provider.issuer.clone(),
            subject: subject.to_string(),
            owner: Owner::new(organisation.clone(), user.clone()),
            name: claims.display_name().unwrap_or(&user).to_string(),
            created_at_ms: now_ms(),
        };
        if let Err(error) = self.storage.create_sso_account(account).await {
            // Two first sign-ins at once: the one that lost finds the account the other made.
            return match self.storage.sso_account(&provider.issuer, subject).await? {
                Some(made) => Ok(self
                    .identity
                    .caller(&made.owner.org_id, &made.owner.user_id)),
                None => Err(error.into()),
            };
        }
        tracing::info!(
            "{organisation}/{user} signed up through provider {}",
            provider.id
        );
        Ok(self.identity.caller(&organisation, &user))
    }
}

/// A new user's id: their handle as a slug, and six hexadecimal digits of their provider
/// identity so that two people with the same handle never share an account.
fn user_id(handle: Option<&str>, issuer: &str, subject: &str) -> String {
    let words: String = handle
        .unwrap_or("user")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let words = words.trim_matches('-');
    let words: String = words.chars().take(32).collect();
    let words = words.trim_end_matches('-');
    let words = if words.is_empty() { "user" } else { words };
    let digest = Sha256::digest(format!("{issuer}\n{subject}").as_bytes());
    let tail: String = digest[..3].iter().map(|b| format!("{b:02x}")).collect();
    format!("{words}-{tail}")
}

/// A fresh random value for the `portal_sso` cookie.
fn random_binding() -> Result<String, StorageError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| StorageError::Interrupted {
        detail: format!("no randomness for a sign-in: {e}"),
    })?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

#[cfg(test)]
mod tests {
    #[test]
    fn user_ids_are_slugs_of_the_handle() {
        for (handle, starts) in [
            (Some("Alice.Example"), "alice-example-"),
            (Some("--"), "user-"),
            (None, "user-"),
            (Some("Ünïcode name"), "n-code-name-"),
        ] {
            let id = super::user_id(handle, "https://idp", "sub");
            assert!(id.starts_with(starts), "{id}");
            assert!(portal_core::skills::is_slug(&id), "{id}");
        }
        assert_ne!(
            super::user_id(Some("a"), "https://idp", "1"),
            super::user_id(Some("a"), "https://idp", "2")
        );
    }
}
