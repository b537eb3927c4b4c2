//! Share links (docs/share.md): `POST /api/conversations/{id}/shares` keeps a read-only snapshot
//! of one of the caller's conversations behind a link, `GET /api/shares` lists the caller's links
//! and `DELETE /api/shares/{id}` revokes one. `GET /api/shared/{token}` opens a link, signed out
//! too for a public one, and `POST /api/shared/{token}/continue` copies its snapshot into the
//! caller's own conversations.

use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Extension, Json, Router};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

use portal_core::Transcript;
use portal_exchange::import::{Imported, attachments_used, leave_out_attachments};
use portal_exchange::share::snapshot;
use portal_identity::{Caller, DEFAULT_AGENT};
use portal_store::{ImportedConversation, ImportedWork, NewShareLink, ShareLink, ShareVisibility};

use super::keys::random;
use super::{ApiError, AppState, owner_of};
use crate::sessions::now_ms;

/// The longest lifetime a link may be given, in days.
const MOST_DAYS: u32 = 365;

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// A token is 24 random bytes (192 bits), 32 characters once encoded; anything much longer is
/// not one, and is not looked up.
const TOKEN_CHARS: usize = 32;

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/api/conversations/{id}/shares", post(create))
        .route("/api/shares", get(list))
        .route("/api/shares/{id}", delete(revoke))
        .route("/api/shared/{token}", get(open))
        .route("/api/shared/{token}/continue", post(continue_as_copy))
}

/// Whether a request may go on signed out: opening a link, which decides for itself whom it
/// shows its snapshot to.
pub(crate) fn opens_signed_out(method: &axum::http::Method, path: &str) -> bool {
    method == axum::http::Method::GET
        && path
            .strip_prefix("/api/shared/")
            .is_some_and(|token| !token.is_empty() && !token.contains('/'))
}

/// A link as its owner sees it.
#[derive(Debug, Serialize)]
struct LinkEntry {
    id: String,
    /// The link's address on this portal, `/s/<token>`.
    url: String,
    conversation: String,
    title: String,
    visibility: &'static str,
    turns: u32,
    created: i64,
    expires: Option<i64>,
    revoked: Option<i64>,
}

impl From<ShareLink> for LinkEntry {
    fn from(link: ShareLink) -> Self {
        LinkEntry {
            id: link.id,
            url: format!("/s/{}", link.token),
            conversation: link.conversation.as_str().to_string(),
            title: link.title,
            visibility: link.visibility.as_str(),
            turns: link.turns,
            created: link.created_at_ms,
            expires: link.expires_at_ms,
            revoked: link.revoked_at_ms,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkRequest {
    /// `organisation` or `public`.
    visibility: String,
    /// How many days the link opens; none: until revoked.
    #[serde(default)]
    expires_in_days: Option<u32>,
}

async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(request): Json<LinkRequest>,
) -> Result<(StatusCode, Json<LinkEntry>), ApiError> {
    let visibility = ShareVisibility::named(&request.visibility).ok_or_else(|| {
        refused("`visibility` is `organisation` or `public`; say who may open the link".into())
    })?;
    if let Some(days) = request.expires_in_days
        && !(1..=MOST_DAYS).contains(&days)
    {
        return Err(refused(format!(
            "a link opens 1 to {MOST_DAYS} days, or until revoked; `expires_in_days` was {days}"
        )));
    }
    if visibility == ShareVisibility::Public && !public_allowed(&state, &caller.organisation) {
        return Err(ApiError(
            StatusCode::FORBIDDEN,
            "your organisation does not allow links that anyone can open; share it with your \
             organisation instead, or ask an administrator to set `public_links = true` in its \
             organisation.toml"
                .into(),
        ));
    }
    let conversation = state.conversation(&caller, &id).await?;
    let storage = state.turns.storage();
    let owner = owner_of(&caller);
    let summary = storage
        .conversation_summary(&owner, &conversation.id)
        .await?;
    let transcript = storage
        .load_transcript(&caller.organisation, &conversation.id)
        .await?;
    let snapshot = snapshot(&transcript);
    if snapshot.turns.is_empty() {
        return Err(ApiError(
            StatusCode::CONFLICT,
            "there is nothing to share yet: wait for the first reply to end, then share".into(),
        ));
    }
    let link = NewShareLink {
        id: format!("share_{}", URL_SAFE_NO_PAD.encode(random::<12>()?)),
        token: URL_SAFE_NO_PAD.encode(random::<24>()?),
        owner,
        conversation: conversation.id,
        title: summary.title,
        visibility,
        snapshot,
        lifetime_ms: request.expires_in_days.map(|d| i64::from(d) * DAY_MS),
    };
    let kept = storage
        .create_share_link(link, state.limits.share_links_per_user)
        .await?;
    Ok((StatusCode::CREATED, Json(kept.into())))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    /// Only the links of this conversation.
    #[serde(default)]
    conversation: Option<String>,
}

#[derive(Debug, Serialize)]
struct LinkList {
    links: Vec<LinkEntry>,
    /// Whether the caller's organisation lets them make links anyone can open.
    public_allowed: bool,
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<ListQuery>,
) -> Result<Json<LinkList>, ApiError> {
    let links = state
        .turns
        .storage()
        .share_links(&owner_of(&caller))
        .await?;
    Ok(Json(LinkList {
        links: links
            .into_iter()
            .filter(|link| {
                query
                    .conversation
                    .as_deref()
                    .is_none_or(|id| link.conversation.as_str() == id)
            })
            .map(LinkEntry::from)
            .collect(),
        public_allowed: public_allowed(&state, &caller.organisation),
    }))
}

async fn revoke(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    if state
        .turns
        .storage()
        .revoke_share_link(&owner_of(&caller), &id)
        .await?
    {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError(
            StatusCode::NOT_FOUND,
            "you have no such share link; GET /api/shares lists yours".into(),
        ))
    }
}

/// What a link shows whoever may open it.
#[derive(Debug, Serialize)]
struct Shared {
    title: String,
    /// The owner's name.
    shared_by: String,
    visibility: &'static str,
    created: i64,
    turns: u32,
    transcript: Transcript,
    /// Whether the reader may continue it as their own conversation: signed in, of the owner's
    /// organisation.
    can_continue: bool,
}

async fn open(
    State(state): State<AppState>,
    caller: Option<Extension<Caller>>,
    Path(token): Path<String>,
) -> Result<Response, ApiError> {
    let caller = caller.map(|Extension(caller)| caller);
    let (link, transcript) = readable(&state, caller.as_ref(), &token).await?;
    let shared_by = state
        .identity
        .user(&link.owner.org_id, &link.owner.user_id)
        .map_or_else(|| link.owner.user_id.clone(), |user| user.name.clone());
    let can_continue = caller
        .as_ref()
        .is_some_and(|caller| caller.organisation == link.owner.org_id);
    let mut answer = Json(Shared {
        title: link.title,
        shared_by,
        visibility: link.visibility.as_str(),
        created: link.created_at_ms,
        turns: link.turns,
        transcript,
        can_continue,
    })
    .into_response();
    // A snapshot may be taken back: no cache keeps it, and no search engine lists it.
    let headers = answer.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert("x-robots-tag", HeaderValue::from_static("noindex"));
    Ok(answer)
}

#[derive(Debug, Serialize)]
struct Continued {
    id: String,
}

async fn continue_as_copy(
    State(state): State<AppState>,
    caller: Caller,
    Path(token): Path<String>,
) -> Result<(StatusCode, Json<Continued>), ApiError> {
    let (link, transcript) = readable(&state, Some(&caller), &token).await?;
    if caller.organisation != link.owner.org_id {
        return Err(ApiError(
            StatusCode::FORBIDDEN,
            "only people of the organisation it was shared from can continue this conversation; \
             read it here, or ask its owner for an export"
                .into(),
        ));
    }
    let storage = state.turns.storage();
    let owner = owner_of(&caller);
    // The copy is in none of the reader's projects, and the owner's project stays theirs: its
    // instructions are the owner's own writing, never in a snapshot (docs/share.md).
    let mut copy = Imported {
        title: link.title,
        agent: None,
        project: None,
        pinned: false,
        transcript,
        notes: Vec::new(),
    };
    let mut theirs = std::collections::HashSet::new();
    for id in attachments_used(&copy.transcript) {
        if storage.attachment(&owner, &id).await.is_ok() {
            theirs.insert(id);
        }
    }
    leave_out_attachments(&mut copy, |id| theirs.contains(id));
    let agent_id = match storage
        .conversation(&link.owner.org_id, &link.conversation)
        .await
    {
        Ok(original) if state.identity.agent(&caller, &original.agent_id).is_some() => {
            original.agent_id
        }
        _ => state
            .identity
            .agents(&caller)
            .first()
            .map_or_else(|| DEFAULT_AGENT.to_string(), |a| a.id.clone()),
    };
    let ids = storage
        .import_conversations(
            &owner,
            ImportedWork::conversations(vec![ImportedConversation::new(
                agent_id,
                copy.title,
                copy.transcript,
            )]),
        )
        .await?;
    let id = ids.into_iter().next().ok_or_else(|| {
        ApiError(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the copy could not be made; try again".into(),
        )
    })?;
    Ok((
        StatusCode::CREATED,
        Json(Continued {
            id: id.as_str().to_string(),
        }),
    ))
}

/// The link `token` names with its snapshot, when `caller` may read it: live, and either public
/// in an organisation that still allows public links, or shared with the caller's organisation.
/// Anything else is not found, as an unknown token is, except an organisation's link opened
/// signed out, which asks to sign in.
async fn readable(
    state: &AppState,
    caller: Option<&Caller>,
    token: &str,
) -> Result<(ShareLink, Transcript), ApiError> {
    let gone = || {
        ApiError(
            StatusCode::NOT_FOUND,
            "this link does not exist, was revoked or has expired; ask whoever shared it for a new one"
                .into(),
        )
    };
    if token.len() > TOKEN_CHARS + 8 {
        return Err(gone());
    }
    let (link, transcript) = state
        .turns
        .storage()
        .shared(token)
        .await?
        .ok_or_else(gone)?;
    if !link.live(now_ms()) {
        return Err(gone());
    }
    let public =
        link.visibility == ShareVisibility::Public && public_allowed(state, &link.owner.org_id);
    if public {
        return Ok((link, transcript));
    }
    match caller {
        Some(caller) if caller.organisation == link.owner.org_id => Ok((link, transcript)),
        Some(_) => Err(gone()),
        None => Err(ApiError(
            StatusCode::UNAUTHORIZED,
            "this conversation is shared with its organisation: sign in to see it".into(),
        )),
    }
}

/// Whether `organisation` lets its users share with anyone who has the link.
fn public_allowed(state: &AppState, organisation: &str) -> bool {
    state
        .identity
        .organisation(organisation)
        .is_some_and(|o| o.public_links)
}

fn refused(sentence: String) -> ApiError {
    ApiError(StatusCode::UNPROCESSABLE_ENTITY, sentence)
}
