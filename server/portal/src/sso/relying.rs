//! The OpenID Connect relying party, on the `openidconnect` crate: discovery, the authorization
//! code flow with PKCE (S256), and the ID token's checks (issuer, audience, expiry, nonce, and a
//! signature by one of the provider's keys, its keys fetched again once when none matches, as
//! after a rotation). Only asymmetric signatures are accepted: `alg: none` and HMAC (whose key
//! would be the client secret) are refused.

use std::sync::Mutex;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use openidconnect::core::{
    CoreAuthenticationFlow, CoreClient, CoreIdToken, CoreJwsSigningAlgorithm,
};
use openidconnect::{
    AuthorizationCode, ClaimsVerificationError, ClientId, ClientSecret, CsrfToken, IssuerUrl,
    Nonce, OAuth2TokenResponse, PkceCodeChallenge, PkceCodeVerifier, ProviderMetadataWithLogout,
    RedirectUrl, Scope, SignatureVerificationError, TokenResponse,
};
use serde_json::{Map, Value};

use super::claims::Claims;
use portal_identity::sso::Provider;

/// How long the portal waits for a provider. **Decision:** 10 seconds.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The signature algorithms an ID token may use: the asymmetric ones.
const SIGNATURES: [CoreJwsSigningAlgorithm; 9] = [
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256,
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha384,
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha512,
    CoreJwsSigningAlgorithm::RsaSsaPssSha256,
    CoreJwsSigningAlgorithm::RsaSsaPssSha384,
    CoreJwsSigningAlgorithm::RsaSsaPssSha512,
    CoreJwsSigningAlgorithm::EcdsaP256Sha256,
    CoreJwsSigningAlgorithm::EcdsaP384Sha384,
    CoreJwsSigningAlgorithm::EdDsa,
];

/// Why the provider did not sign someone in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    #[error("the provider could not be reached: {0}")]
    Unreachable(String),
    #[error("the provider refused the sign-in: {0}")]
    Refused(String),
    #[error("the provider's answer cannot be trusted: {0}")]
    Untrusted(String),
}

/// Where the browser goes to sign in, and what checks its return.
#[derive(Debug)]
pub struct Authorization {
    pub url: String,
    pub state: String,
    pub nonce: String,
    pub verifier: String,
}

/// One provider as the portal talks to it.
#[derive(Debug)]
pub struct RelyingParty {
    provider: Provider,
    http: reqwest::Client,
    redirect: String,
    metadata: Mutex<Option<ProviderMetadataWithLogout>>,
}

impl RelyingParty {
    /// Talks to `provider`, which sends browsers back to `redirect`.
    pub fn new(provider: Provider, redirect: String) -> Result<Self, String> {
        let mut http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(TIMEOUT);
        if let Some(pem) = &provider.ca_certificate {
            http = http.add_root_certificate(
                reqwest::Certificate::from_pem(pem).map_err(|e| e.to_string())?,
            );
        }
        Ok(RelyingParty {
            http: http.build().map_err(|e| e.to_string())?,
            provider,
            redirect,
            metadata: Mutex::new(None),
        })
    }

    pub fn provider(&self) -> &Provider {
        &self.provider
    }

    /// The provider's discovery document with its keys, fetched once and again when `fresh`.
    async fn metadata(&self, fresh: bool) -> Result<ProviderMetadataWithLogout, Failure> {
        if !fresh && let Some(known) = self.lock().clone() {
            return Ok(known);
        }
        let issuer = IssuerUrl::new(self.provider.issuer.clone())
            .map_err(|e| Failure::Unreachable(e.to_string()))?;
        let metadata = ProviderMetadataWithLogout::discover_async(issuer, &self.http)
            .await
            .map_err(|e| Failure::Unreachable(error_chain(&e)))?;
        *self.lock() = Some(metadata.clone());
        Ok(metadata)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<ProviderMetadataWithLogout>> {
        self.metadata.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn client_id(&self) -> ClientId {
        ClientId::new(self.provider.client_id.clone())
    }

    fn secret(&self) -> Option<ClientSecret> {
        Some(ClientSecret::new(self.provider.client_secret.0.clone()))
    }

    fn redirect(&self) -> Result<RedirectUrl, Failure> {
        RedirectUrl::new(self.redirect.clone()).map_err(|e| Failure::Untrusted(e.to_string()))
    }

    /// Where to send a browser whose session ended so that the provider ends its own too, when
    /// the provider offers it (RP-initiated logout): back to `home` after.
    pub async fn sign_out_address(&self, home: &str) -> Option<String> {
        let metadata = self.metadata(false).await.ok()?;
        let endpoint = metadata
            .additional_metadata()
            .end_session_endpoint
            .as_ref()?;
        let mut url = endpoint.url().clone();
        url.query_pairs_mut()
            .append_pair("client_id", &self.provider.client_id)
            .append_pair("post_logout_redirect_uri", home);
        Some(url.to_string())
    }

    /// Starts a sign-in: the provider's authorization address with a fresh `state`, `nonce` and
    /// PKCE challenge.
    pub async fn authorize(&self) -> Result<Authorization, Failure> {
        let metadata = self.metadata(false).await?;
        let client = CoreClient::from_provider_metadata(metadata, self.client_id(), self.secret())
            .set_redirect_uri(self.redirect()?);
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = client.authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        );
        for scope in &self.provider.scopes {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        let (url, state, nonce) = request.set_pkce_challenge(challenge).url();
        Ok(Authorization {
            url: url.to_string(),
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            verifier: verifier.secret().clone(),
        })
    }

    /// Trades the authorization `code` for the person's verified claims: the ID token's, with
    /// those `wanted` it lacks asked of the userinfo endpoint.
    pub async fn finish(
        &self,
        code: String,
        verifier: String,
        nonce: &str,
        wanted: &[&str],
    ) -> Result<Claims, Failure> {
        let metadata = self.metadata(false).await?;
        let client =
            CoreClient::from_provider_metadata(metadata.clone(), self.client_id(), self.secret())
                .set_redirect_uri(self.redirect()?);
        let token = client
            .exchange_code(AuthorizationCode::new(code))
            .map_err(|e| Failure::Untrusted(e.to_string()))?
            .set_pkce_verifier(PkceCodeVerifier::new(verifier))
            .request_async(&self.http)
            .await
            .map_err(|e| match e {
                openidconnect::RequestTokenError::Request(e) => {
                    Failure::Unreachable(error_chain(&e))
                }
                openidconnect::RequestTokenError::ServerResponse(e) => {
                    Failure::Refused(e.error().to_string())
                }
                other => Failure::Untrusted(error_chain(&other)),
            })?;
        let id_token = token
            .id_token()
            .ok_or_else(|| Failure::Untrusted("no ID token came with the code".into()))?;
        let nonce = Nonce::new(nonce.to_string());
        let subject = match self.verify(&metadata, id_token, &nonce) {
            Err(ClaimsVerificationError::SignatureVerification(e)) if key_may_be_new(&e) => {
                let fresh = self.metadata(true).await?;
                self.verify(&fresh, id_token, &nonce)
            }
            verified => verified,
        }
        .map_err(|e| Failure::Untrusted(e.to_string()))?;
        let mut claims = Claims(payload(id_token)?);
        if wanted.iter().any(|name| claims.lacks(name))
            && let Some(endpoint) = metadata.userinfo_endpoint()
        {
            let more = self
                .userinfo(endpoint.url().as_str(), token.access_token().secret())
                .await?;
            if more.get("sub").and_then(Value::as_str) != Some(subject.as_str()) {
                return Err(Failure::Untrusted(
                    "userinfo is about someone else than the ID token".into(),
                ));
            }
            claims.complete(more);
        }
        Ok(claims)
    }

    /// The ID token's subject, once its claims and signature are checked.
    fn verify(
        &self,
        metadata: &ProviderMetadataWithLogout,
        id_token: &CoreIdToken,
        nonce: &Nonce,
    ) -> Result<String, ClaimsVerificationError> {
        let client =
            CoreClient::from_provider_metadata(metadata.clone(), self.client_id(), self.secret());
        let verifier = client.id_token_verifier().set_allowed_algs(SIGNATURES);
        Ok(id_token
            .claims(&verifier, nonce)?
            .subject()
            .as_str()
            .to_string())
    }

    async fn userinfo(
        &self,
        endpoint: &str,
        access_token: &str,
    ) -> Result<Map<String, Value>, Failure> {
        let response = self
            .http
            .get(endpoint)
            .bearer_auth(access_token)
            .send()
            .await
            .map_err(|e| Failure::Unreachable(error_chain(&e)))?;
        if !response.status().is_success() {
            return Err(Failure::Refused(format!(
                "userinfo answered {}",
                response.status()
            )));
        }
        response
            .json()
            .await
            .map_err(|e| Failure::Untrusted(format!("userinfo is not a JSON object: {e}")))
    }
}

/// A signature that matched no key the portal holds may be by a key the provider added since.
fn key_may_be_new(error: &SignatureVerificationError) -> bool {
    matches!(
        error,
        SignatureVerificationError::NoMatchingKey | SignatureVerificationError::AmbiguousKeyId(_)
    )
}

/// The claims of an ID token already verified, every one of them (groups and roles too).
fn payload(id_token: &CoreIdToken) -> Result<Map<String, Value>, Failure> {
    let jwt = id_token.to_string();
    let part = jwt
        .split('.')
        .nth(1)
        .ok_or_else(|| Failure::Untrusted("the ID token has no claims".into()))?;
    let bytes = URL_SAFE_NO_PAD
        .decode(part)
        .map_err(|e| Failure::Untrusted(e.to_string()))?;
    serde_json::from_slice(&bytes).map_err(|e| Failure::Untrusted(e.to_string()))
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
