//! Turns: `POST …/messages` opens one; `GET …/turns/{turn}/events` streams it as server-sent
//! events (numbered, so `Last-Event-ID`, or `?after=<id>`, resumes); `POST …/turns/{turn}/cancel` stops it;
//! `POST …/turns/{turn}/decision` approves or declines a call; `POST …/turns/{turn}/answer`
//! answers its question.

use std::convert::Infallible;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::StreamExt;
use portal_core::effort::Effort;
use portal_core::hold::next_call;
use portal_core::new_turn::{NewMessage, NewTurnError, open_turn};
use serde::{Deserialize, Serialize};

use portal_host::lifecycle::RECONNECT_AFTER;
use portal_identity::Caller;
use portal_store::quota::{Hold, Spender};
use portal_store::{AtOnce, ConversationInfo, NewTurn};

use super::checks::{TurnPath, attachment_list, text_within};
use super::{ApiError, AppState, owner_of};

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/api/conversations/{id}/messages", post(send))
        .route("/api/conversations/{id}/turns/{turn}/events", get(events))
        .route("/api/conversations/{id}/turns/{turn}/cancel", post(cancel))
        .route(
            "/api/conversations/{id}/turns/{turn}/decision",
            post(decide),
        )
        .route("/api/conversations/{id}/turns/{turn}/answer", post(answer))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SentMessage {
    text: String,
    /// Overrides the agent's effort for this message (rule E1).
    #[serde(default)]
    effort: Option<Effort>,
    /// Ids of attachments uploaded with `POST /api/attachments`.
    #[serde(default)]
    attachments: Vec<String>,
    /// The latest turn, whose message this one answers again (Regenerate, an edited latest
    /// message): the page shows them as versions of one turn.
    #[serde(default)]
    again: Option<u32>,
}

#[derive(Debug, Serialize)]
struct Sent {
    turn: u32,
}

async fn send(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(message): Json<SentMessage>,
) -> Result<(StatusCode, Json<Sent>), ApiError> {
    let conversation = state.conversation(&caller, &id).await?;
    let turn = open(
        &state,
        &caller,
        &conversation,
        Outgoing {
            text: message.text,
            effort: message.effort,
            attachments: message.attachments,
            again: message.again,
        },
    )
    .await?;
    Ok((StatusCode::ACCEPTED, Json(Sent { turn })))
}

/// A message that opens a turn.
pub(crate) struct Outgoing {
    pub text: String,
    /// Overrides the agent's effort for this message (rule E1).
    pub effort: Option<Effort>,
    /// Ids of attachments uploaded with `POST /api/attachments`.
    pub attachments: Vec<String>,
    /// The latest turn, whose message this one answers again.
    pub again: Option<u32>,
}

/// Opens a turn of the caller's `conversation` with `message` and starts it, after every check
/// a message meets, in the page and over the OpenAI-compatible API alike: its length and
/// attachments, its skills (rules S1–S6), the turn's opening (rule E1), the quotas with the
/// turn's hold, and the user's turns at once. A refused message records nothing. Returns the
/// turn's index.
pub(crate) async fn open(
    state: &AppState,
    caller: &Caller,
    conversation: &ConversationInfo,
    message: Outgoing,
) -> Result<u32, ApiError> {
    if message.text.trim().is_empty() {
        return Err(ApiError(
            StatusCode::UNPROCESSABLE_ENTITY,
            "the message is empty; write something before sending".into(),
        ));
    }
    text_within(
        "message",
        &message.text,
        state.limits.message_chars,
        "shorten it, or attach the text as a file",
    )?;
    attachment_list(&message.attachments, state.limits.attachments_per_message)?;
    let skills = state.message_skills(caller, conversation, &message.text)?;
    let trace = skills.trace.clone();
    let project_instructions = state.project_instructions(caller, conversation).await?;
    let setup = state.setup(
        caller,
        conversation,
        project_instructions,
        message.effort,
        skills,
    );
    let mut attachments = Vec::new();
    for id in &message.attachments {
        attachments.push(
            state
                .turns
                .storage()
                .attachment(&owner_of(caller), id)
                .await?,
        );
    }
    let mut transcript = state
        .turns
        .storage()
        .load_transcript(&caller.organisation, &conversation.id)
        .await?;
    open_turn(
        &mut transcript,
        NewMessage {
            text: message.text,
            attachments,
            again: message.again,
        },
        setup.effort,
        setup.model.capabilities(),
    )
    .map_err(|e| {
        let status = match e {
            NewTurnError::Attachment(_) => StatusCode::UNPROCESSABLE_ENTITY,
            _ => StatusCode::CONFLICT,
        };
        ApiError(status, e.to_string())
    })?;
    let (most, cost) = next_call(
        &transcript,
        setup.model.capabilities(),
        setup.price.as_ref(),
    );
    let opened = transcript.turns.pop().expect("open_turn appended the turn");
    let turn = NewTurn {
        kind: opened.kind,
        effort: opened.effort,
        trace: opened.trace.into_iter().chain(trace).collect(),
        message: opened
            .messages
            .into_iter()
            .next()
            .expect("the user's message"),
        quotas: state.identity.quotas(caller),
        hold: Hold {
            tokens: most.total(),
            cost,
        },
        at_once: Some(AtOnce {
            user: Spender::User {
                org_id: caller.organisation.clone(),
                user_id: caller.user.clone(),
            },
            most: state.limits.turns_at_once as u64,
        }),
    };
    Ok(state.turns.start(&conversation.id, turn, setup).await?)
}

/// Where a reader resumes when it cannot send `Last-Event-ID` (a new `EventSource` after a
/// paused turn resumed): the id of the last event it read. Read as text, so that a value that is
/// not an id is answered in words.
#[derive(Debug, Default, Deserialize)]
struct After {
    #[serde(default)]
    after: Option<String>,
}

async fn events(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    TurnPath { id, turn }: TurnPath,
    Query(after): Query<After>,
) -> Result<impl IntoResponse, ApiError> {
    let conversation = state.conversation(&caller, &id).await?;
    let seen = last_seen(&headers, after.after.as_deref())?;
    let log = state
        .turns
        .log(&caller.organisation, &conversation.id, turn)
        .await?;
    let open = state.gates.streams.take(&caller).ok_or_else(|| {
        ApiError(
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "you have {} event streams open, the most one user may have at once; close one \
                 (another tab or window) or wait for a turn to end, then reconnect",
                state.gates.streams.limit()
            ),
        )
    })?;
    let streams = *state.turns.streams();
    // The stream holds the user's place until it ends or its reader is gone.
    let stream = log.read_from(seen, streams.idle).map(move |(id, event)| {
        let _open = &open;
        let data = serde_json::to_string(&event).unwrap_or_default();
        Ok::<_, Infallible>(
            Event::default()
                .id(id.to_string())
                .event(event.name())
                .data(data),
        )
    });
    // A server that stops asks its readers to reconnect, from the last id they have, to
    // another replica or to itself restarted (rule D3).
    let stream = state
        .turns
        .lifecycle()
        .until_closing(stream, Ok(reconnect_hint()));
    // A proxy that buffers answers (nginx does by default) would hold the events back.
    Ok((
        [("x-accel-buffering", "no")],
        Sse::new(stream).keep_alive(KeepAlive::new().interval(streams.heartbeat)),
    ))
}

/// The last event of a stream its stopping server ends: named `reconnect` (a browser's page
/// listens to turn events only, so it reads nothing), with no id, so that the reader reconnects
/// after `retry` from the last turn event it read.
fn reconnect_hint() -> Event {
    Event::default()
        .event("reconnect")
        .retry(RECONNECT_AFTER)
        .data(
            serde_json::json!({
                "reason": "this server is stopping; reconnect to go on from the last event read"
            })
            .to_string(),
        )
}

/// The id of the last event the reader has: `Last-Event-ID` (what a browser sends when it
/// reconnects on its own, so it wins), else `?after=`, else 0 (from the start).
fn last_seen(headers: &HeaderMap, after: Option<&str>) -> Result<u64, ApiError> {
    if let Some(value) = headers.get("last-event-id") {
        let text = value.to_str().map_err(|_| {
            bad_event_id(
                "the Last-Event-ID header",
                &String::from_utf8_lossy(value.as_bytes()),
            )
        })?;
        return event_id("the Last-Event-ID header", text);
    }
    after.map_or(Ok(0), |text| event_id("`after`", text))
}

/// An event id as sent: a whole number, or nothing (from the start).
fn event_id(what: &str, text: &str) -> Result<u64, ApiError> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(0);
    }
    text.parse().map_err(|_| bad_event_id(what, text))
}

fn bad_event_id(what: &str, text: &str) -> ApiError {
    let shown: String = text.chars().take(40).collect();
    let cut = if shown.len() < text.len() { "…" } else { "" };
    ApiError(
        StatusCode::BAD_REQUEST,
        format!(
            "{what} `{shown}{cut}` is not an event id; send the id of the last event read (a whole \
             number from 0 to {}), or leave it out to read the turn from its start",
            u64::MAX
        ),
    )
}

async fn cancel(
    State(state): State<AppState>,
    caller: Caller,
    TurnPath { id, turn }: TurnPath,
) -> Result<(StatusCode, Json<Sent>), ApiError> {
    let conversation = state.conversation(&caller, &id).await?;
    state
        .turns
        .cancel(&caller.organisation, &conversation.id, turn)
        .await?;
    Ok(accepted(turn))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Decision {
    call_id: String,
    approve: bool,
}

async fn decide(
    State(state): State<AppState>,
    caller: Caller,
    TurnPath { id, turn }: TurnPath,
    Json(decision): Json<Decision>,
) -> Result<(StatusCode, Json<Sent>), ApiError> {
    let conversation = state.conversation(&caller, &id).await?;
    let setup = resumed_setup(&state, &caller, &conversation, turn).await?;
    state
        .turns
        .decide(
            &conversation.id,
            turn,
            &decision.call_id,
            decision.approve,
            setup,
        )
        .await?;
    Ok(accepted(turn))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer {
    text: String,
}

async fn answer(
    State(state): State<AppState>,
    caller: Caller,
    TurnPath { id, turn }: TurnPath,
    Json(answer): Json<Answer>,
) -> Result<(StatusCode, Json<Sent>), ApiError> {
    let conversation = state.conversation(&caller, &id).await?;
    text_within(
        "answer",
        &answer.text,
        state.limits.answer_chars,
        "shorten it, and say the rest in a message once the turn has ended",
    )?;
    let setup = resumed_setup(&state, &caller, &conversation, turn).await?;
    state
        .turns
        .answer(&conversation.id, turn, &answer.text, setup)
        .await?;
    Ok(accepted(turn))
}

/// The answer to a cancel, a decision or an answer: taken, and the turn it acts on.
fn accepted(turn: u32) -> (StatusCode, Json<Sent>) {
    (StatusCode::ACCEPTED, Json(Sent { turn }))
}

/// A resumed turn runs with the effort it recorded (rule E2), the skills it selected, checked
/// again (rule S4), and its project's instructions as they are now.
async fn resumed_setup(
    state: &AppState,
    caller: &portal_identity::Caller,
    conversation: &portal_store::ConversationInfo,
    turn: u32,
) -> Result<portal_host::turn::TurnSetup, ApiError> {
    let transcript = state
        .turns
        .storage()
        .load_transcript(&caller.organisation, &conversation.id)
        .await?;
    let resumed = transcript.turn(turn);
    let effort = resumed.and_then(|t| t.effort);
    let trace = resumed.map(|t| t.trace.as_slice()).unwrap_or_default();
    let skills = state.resumed_skills(caller, conversation, trace)?;
    let project_instructions = state.project_instructions(caller, conversation).await?;
    Ok(state.setup(caller, conversation, project_instructions, effort, skills))
}
