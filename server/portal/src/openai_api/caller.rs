//! Who calls the OpenAI-compatible API: the owner of an API key (`psk_…`, made in the page),
//! held to the key's agents, or a user of a configured bearer token, with every agent of theirs.
//! Local mode's one user needs neither.

use axum::http::{HeaderMap, StatusCode, Uri, header};

use portal_identity::{Caller, Mode};
use portal_store::Owner;

use super::OpenAiError;
use crate::api::AppState;
use crate::api::keys::SECRET_PREFIX;
use crate::sessions::{digest, now_ms};

/// A signed-in caller of `/v1`.
#[derive(Debug, Clone)]
pub struct ApiCaller {
    pub caller: Caller,
    /// The agents their key may use; `None`: every agent the caller may use.
    pub agents: Option<Vec<String>>,
}

impl ApiCaller {
    /// Whether the caller may use agent `id` (one of their organisation's).
    pub fn may_use(&self, id: &str) -> bool {
        self.agents
            .as_ref()
            .is_none_or(|agents| agents.iter().any(|a| a == id))
    }
}

/// Signs a request in, from its `Authorization` header only: a key in the URL is refused, as
/// URLs are written to logs and browser histories.
pub(super) async fn authenticate(
    state: &AppState,
    uri: &Uri,
    headers: &HeaderMap,
) -> Result<ApiCaller, OpenAiError> {
    if uri.query().is_some_and(carries_secret) {
        return Err(unauthorized(
            "an API key must never be sent in the URL, where logs and histories keep it; send \
             it as `Authorization: Bearer <key>`, and revoke this one in the page if the URL \
             was shared",
        ));
    }
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let bearer = authorization
        .and_then(|value| value.trim().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim());
    match bearer {
        Some(secret)
            if secret.starts_with(SECRET_PREFIX) && state.identity.mode() != Mode::Local =>
        {
            key_owner(state, secret).await
        }
        _ => state
            .identity
            .authenticate(authorization)
            .map(|caller| ApiCaller {
                caller,
                agents: None,
            })
            .map_err(|e| unauthorized(&e.to_string())),
    }
}

/// The owner of the key `secret`, while it is live and its owner is still a user.
async fn key_owner(state: &AppState, secret: &str) -> Result<ApiCaller, OpenAiError> {
    let storage = state.turns.storage();
    let key = storage
        .api_key(&digest(secret))
        .await?
        .filter(|key| key.live(now_ms()))
        .ok_or_else(|| {
            unauthorized(
                "the API key is not valid: it was revoked, has expired or never existed; make a \
                 new one in the page (your name, API keys)",
            )
        })?;
    let owner: &Owner = &key.owner;
    let user = state.identity.user(&owner.org_id, &owner.user_id).is_some()
        || storage.sso_account_of(owner).await?.is_some();
    if !user {
        return Err(unauthorized(
            "the API key's user is no longer one of the portal's; ask your administrator",
        ));
    }
    Ok(ApiCaller {
        caller: state.identity.caller(&owner.org_id, &owner.user_id),
        agents: (!key.agents.is_empty()).then_some(key.agents),
    })
}

/// Whether a query string carries what looks like a secret: a key of the portal's, or a
/// parameter named as clients name one.
fn carries_secret(query: &str) -> bool {
    query.contains(SECRET_PREFIX)
        || query.split('&').any(|pair| {
            let name = pair.split('=').next().unwrap_or_default();
            [
                "api_key",
                "api-key",
                "apikey",
                "key",
                "token",
                "access_token",
            ]
            .contains(&name.to_ascii_lowercase().as_str())
        })
}

fn unauthorized(message: &str) -> OpenAiError {
    OpenAiError {
        status: StatusCode::UNAUTHORIZED,
        message: message.to_string(),
        param: None,
        code: Some("invalid_api_key"),
    }
}
