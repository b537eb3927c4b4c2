//! API keys, which a person makes for the OpenAI-compatible API (docs/api.md): `GET /api/keys`
//! lists the caller's, `POST /api/keys` makes one and answers its secret once, and
//! `DELETE /api/keys/{id}` revokes one. Storage keeps only the secret's SHA-256 digest.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{delete, get};
use axum::{Json, Router};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

use portal_identity::Caller;
use portal_store::{NewApiKey, StorageError, StoredApiKey};

use super::{ApiError, AppState, owner_of};
use crate::sessions::digest;

/// What every secret starts with, so that a secret found in a log or a repository says what it
/// is (and secret scanners can be taught it).
pub const SECRET_PREFIX: &str = "psk_";

/// How many characters of the secret the owner sees again, to recognise a key by: the prefix and
/// 6 of its 43 random characters.
const HINT_CHARS: usize = SECRET_PREFIX.len() + 6;

/// The longest key name, in characters.
const NAME_CHARS: usize = 80;

/// The longest lifetime a key may be given, in days.
const MOST_DAYS: u32 = 365;

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/api/keys", get(list).post(create))
        .route("/api/keys/{id}", delete(revoke))
}

/// A key as its owner sees it: never its secret.
#[derive(Debug, Serialize)]
struct KeyEntry {
    id: String,
    name: String,
    hint: String,
    agents: Vec<String>,
    created_at_ms: i64,
    expires_at_ms: Option<i64>,
    revoked_at_ms: Option<i64>,
}

impl From<StoredApiKey> for KeyEntry {
    fn from(key: StoredApiKey) -> Self {
        KeyEntry {
            id: key.id,
            name: key.name,
            hint: key.hint,
            agents: key.agents,
            created_at_ms: key.created_at_ms,
            expires_at_ms: key.expires_at_ms,
            revoked_at_ms: key.revoked_at_ms,
        }
    }
}

#[derive(Debug, Serialize)]
struct KeyList {
    keys: Vec<KeyEntry>,
}

async fn list(State(state): State<AppState>, caller: Caller) -> Result<Json<KeyList>, ApiError> {
    let keys = state.turns.storage().api_keys(&owner_of(&caller)).await?;
    Ok(Json(KeyList {
        keys: keys.into_iter().map(KeyEntry::from).collect(),
    }))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyRequest {
    name: String,
    /// The agents the key may use; none: every agent its owner may use.
    #[serde(default)]
    agents: Vec<String>,
    /// How many days the key lives; none: until revoked.
    #[serde(default)]
    expires_in_days: Option<u32>,
}

#[derive(Debug, Serialize)]
struct MadeKey {
    key: KeyEntry,
    /// The secret, answered this once.
    secret: String,
}

async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Json(request): Json<KeyRequest>,
) -> Result<(StatusCode, Json<MadeKey>), ApiError> {
    let name = request.name.trim();
    if name.is_empty() || name.chars().count() > NAME_CHARS {
        return Err(refused(format!(
            "a key's name must have 1 to {NAME_CHARS} characters; name it for what will use it \
             (\"nightly report\")"
        )));
    }
    let mut agents = request.agents;
    agents.sort();
    agents.dedup();
    if let Some(unknown) = agents
        .iter()
        .find(|id| state.identity.agent(&caller, id).is_none())
    {
        let shown: String = unknown.chars().take(60).collect();
        return Err(refused(format!(
            "there is no agent `{shown}` here; choose among those GET /api/agents lists"
        )));
    }
    if let Some(days) = request.expires_in_days
        && !(1..=MOST_DAYS).contains(&days)
    {
        return Err(refused(format!(
            "a key lives 1 to {MOST_DAYS} days, or until revoked; `expires_in_days` was {days}"
        )));
    }
    let secret = format!("{SECRET_PREFIX}{}", URL_SAFE_NO_PAD.encode(random::<32>()?));
    let key = NewApiKey {
        id: format!("key_{}", URL_SAFE_NO_PAD.encode(random::<12>()?)),
        key_sha256: digest(&secret),
        hint: secret[..HINT_CHARS].to_string(),
        owner: owner_of(&caller),
        name: name.to_string(),
        agents,
        lifetime_ms: request.expires_in_days.map(|d| i64::from(d) * DAY_MS),
    };
    let kept = state
        .turns
        .storage()
        .create_api_key(key, state.limits.api_keys_per_user)
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(MadeKey {
            key: kept.into(),
            secret,
        }),
    ))
}

async fn revoke(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    if state
        .turns
        .storage()
        .revoke_api_key(&owner_of(&caller), &id)
        .await?
    {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError(
            StatusCode::NOT_FOUND,
            "you have no such API key; GET /api/keys lists yours".into(),
        ))
    }
}

/// `N` random bytes, for a secret and its id: an API key's, a share link's.
pub(super) fn random<const N: usize>() -> Result<[u8; N], ApiError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|e| {
        ApiError::from(StorageError::Interrupted {
            detail: format!("no randomness for a secret: {e}"),
        })
    })?;
    Ok(bytes)
}

fn refused(sentence: String) -> ApiError {
    ApiError(StatusCode::UNPROCESSABLE_ENTITY, sentence)
}
