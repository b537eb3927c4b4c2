//! `POST /v1/chat/completions`: a turn of the agent `model` names, opened and run as the page
//! opens and runs one, answered whole or streamed as OpenAI's chunks (docs/api.md).

use std::convert::Infallible;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::{Extension, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use futures_util::StreamExt;
use futures_util::stream::{self, BoxStream};
use portal_core::TurnStatus;
use portal_core::stream::TurnEvent;
use portal_core::turn_state::TurnState;
use portal_core::usage::{ConversationUsage, Tally};
use serde_json::{Value, json};

use portal_store::{ConversationId, ConversationInfo, Owner};

use super::reply::Reply;
use super::request::{self, ChatRequest};
use super::{ApiCaller, OpenAiError};
use crate::api::turns::{Outgoing, open};
use crate::api::{ApiError, AppState, owner_of};

pub(super) fn router() -> Router<AppState> {
    Router::new().route("/v1/chat/completions", post(complete))
}

async fn complete(
    State(state): State<AppState>,
    Extension(who): Extension<ApiCaller>,
    body: Bytes,
) -> Result<Response, OpenAiError> {
    let request = request::parse(&body, state.limits.api_messages).map_err(OpenAiError::refused)?;
    let caller = &who.caller;
    let agent = state
        .identity
        .agent(caller, &request.agent)
        .filter(|agent| who.may_use(&agent.id))
        .ok_or_else(|| OpenAiError::no_agent(&request.agent))?;
    let (conversation, made) = match &request.conversation {
        Some(id) => (continued(&state, &who, &request, id).await?, false),
        None => {
            if !request.earlier.is_empty() {
                return Err(OpenAiError::bad_request(
                    "messages",
                    format!(
                        "the request carries an earlier conversation ({} user messages before \
                         the last), which the portal did not hold; send the first message \
                         alone, and continue with the `conversation` its answer names \
                         (docs/api.md, \"Conversations\")",
                        request.earlier.len()
                    ),
                ));
            }
            let id = state
                .turns
                .storage()
                .create_conversation(&owner_of(caller), &agent.id)
                .await?;
            (state.conversation(caller, id.as_str()).await?, true)
        }
    };
    let outgoing = Outgoing {
        text: request.text.clone(),
        effort: request.effort,
        attachments: Vec::new(),
        again: None,
    };
    let turn = match open(&state, caller, &conversation, outgoing).await {
        Ok(turn) => turn,
        Err(refused) => {
            if made {
                // A refused first message leaves no empty conversation behind.
                let _ = state
                    .turns
                    .storage()
                    .delete_conversation(&owner_of(caller), &conversation.id)
                    .await;
            }
            return Err(refused.into());
        }
    };
    let answer = Answer {
        id: format!("chatcmpl-{}-{turn}", conversation.id.as_str()),
        created: now_s(),
        model: agent.id.clone(),
        conversation: conversation.id.clone(),
        turn,
    };
    let watch = Watch {
        state: state.clone(),
        owner: owner_of(caller),
        conversation: conversation.id.clone(),
        turn,
        forget: !request.store,
        ended: false,
    };
    if request.stream {
        Ok(streamed(state, answer, watch, request.include_usage).into_response())
    } else {
        whole(state, answer, watch).await
    }
}

/// The caller's conversation `id`, to continue: it runs on the agent the request names, and the
/// user messages the request carries before its new one are the conversation's, in order.
async fn continued(
    state: &AppState,
    who: &ApiCaller,
    request: &ChatRequest,
    id: &str,
) -> Result<ConversationInfo, OpenAiError> {
    let conversation = state.conversation(&who.caller, id).await.map_err(|e| {
        let mut error = OpenAiError::from(e);
        if error.status == StatusCode::NOT_FOUND {
            let shown: String = id.chars().take(60).collect();
            error.message = format!(
                "there is no conversation `{shown}` of yours (it was deleted, never existed, \
                     or is someone else's); continue one an earlier answer named in \
                     `portal.conversation`"
            );
        }
        OpenAiError {
            param: Some("conversation".into()),
            ..error
        }
    })?;
    if conversation.agent_id != request.agent {
        return Err(OpenAiError::bad_request(
            "model",
            format!(
                "conversation `{id}` runs on agent `{}`; name it as `model` to continue it",
                conversation.agent_id
            ),
        ));
    }
    if !request.earlier.is_empty() {
        let transcript = state
            .turns
            .storage()
            .load_transcript(&who.caller.organisation, &conversation.id)
            .await?;
        let held: Vec<String> = transcript
            .turns
            .iter()
            .map(|turn| TurnState::stored(turn).user_text)
            .collect();
        if held != request.earlier {
            return Err(OpenAiError {
                status: StatusCode::CONFLICT,
                message: format!(
                    "the {} user messages before the last are not conversation `{id}`'s {} \
                     messages; send the new message alone, or the conversation as its answers \
                     gave it",
                    request.earlier.len(),
                    held.len()
                ),
                param: Some("messages".into()),
                code: None,
            });
        }
    }
    Ok(conversation)
}

/// What every answer of one request names.
struct Answer {
    id: String,
    created: u64,
    model: String,
    conversation: ConversationId,
    turn: u32,
}

impl Answer {
    /// The portal's own fields, beside OpenAI's: where the turn is kept, and how it ended.
    fn portal(&self, status: Option<TurnStatus>) -> Value {
        json!({
            "conversation": self.conversation.as_str(),
            "turn": self.turn,
            "status": status.map(TurnStatus::as_str),
        })
    }

    fn chunk(&self, delta: Value, finish: Option<&str>) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
        })
    }
}

/// Waits for the turn's end and answers it whole.
async fn whole(state: AppState, answer: Answer, mut watch: Watch) -> Result<Response, OpenAiError> {
    let mut reply = Reply::default();
    let mut events = watch.events();
    while let Some(event) = events.next().await {
        reply.handle(&event?);
    }
    watch.ended = true;
    let (status, reason) = reply.ended().unwrap_or((TurnStatus::CutOff, None));
    if status == TurnStatus::Failed {
        return Err(failed(reason));
    }
    let usage = usage(&state, &watch).await?;
    Ok(Json(json!({
        "id": answer.id,
        "object": "chat.completion",
        "created": answer.created,
        "model": answer.model,
        "choices": [{
            "index": 0,
            "message": { "role": "assistant", "content": reply.text(), "refusal": null },
            "finish_reason": "stop",
        }],
        "usage": usage,
        "portal": answer.portal(Some(status)),
    }))
    .into_response())
}

/// The turn as OpenAI's chunks: the assistant's role, its text as it comes, the end with the
/// portal's fields, usage when asked for, and `[DONE]`; a failed turn ends in an error chunk.
fn streamed(
    state: AppState,
    answer: Answer,
    watch: Watch,
    include_usage: bool,
) -> impl IntoResponse {
    let first = answer.chunk(json!({ "role": "assistant", "content": "" }), None);
    let events = watch.events();
    let streaming = Streaming {
        state: state.clone(),
        answer,
        watch,
        reply: Reply::default(),
        include_usage,
        events,
        tail: Vec::new(),
    };
    let chunks = stream::once(async move { first })
        .chain(stream::unfold(streaming, Streaming::next))
        .map(|chunk| Ok::<_, Infallible>(Event::default().data(chunk.to_string())))
        .chain(stream::once(async { Ok(Event::default().data("[DONE]")) }));
    let heartbeat = state.turns.streams().heartbeat;
    (
        [("x-accel-buffering", "no")],
        Sse::new(chunks).keep_alive(KeepAlive::new().interval(heartbeat)),
    )
}

/// A streamed answer under way.
struct Streaming {
    state: AppState,
    answer: Answer,
    watch: Watch,
    reply: Reply,
    include_usage: bool,
    events: BoxStream<'static, Result<TurnEvent, ApiError>>,
    /// The chunks left to send once the turn has ended, last first.
    tail: Vec<Value>,
}

impl Streaming {
    async fn next(mut self) -> Option<(Value, Self)> {
        loop {
            if let Some(chunk) = self.tail.pop() {
                return Some((chunk, self));
            }
            if self.watch.ended {
                return None;
            }
            match self.events.next().await {
                Some(Ok(event)) => {
                    if let Some(text) = self.reply.handle(&event) {
                        let chunk = self.answer.chunk(json!({ "content": text }), None);
                        return Some((chunk, self));
                    }
                }
                Some(Err(error)) => {
                    self.watch.ended = true;
                    return Some((OpenAiError::from(error).chunk(), self));
                }
                None => self.end().await,
            }
        }
    }

    /// The turn has ended: the last chunks to send.
    async fn end(&mut self) {
        self.watch.ended = true;
        let (status, reason) = self.reply.ended().unwrap_or((TurnStatus::CutOff, None));
        if status == TurnStatus::Failed {
            self.tail = vec![failed(reason).chunk()];
            return;
        }
        let mut last = self.answer.chunk(json!({}), Some("stop"));
        last["portal"] = self.answer.portal(Some(status));
        let mut tail = vec![last];
        if self.include_usage {
            let usage = match usage(&self.state, &self.watch).await {
                Ok(usage) => usage,
                Err(error) => {
                    tail.push(error.chunk());
                    self.tail = tail.into_iter().rev().collect();
                    return;
                }
            };
            let mut chunk = self.answer.chunk(Value::Null, None);
            chunk["choices"] = json!([]);
            chunk["usage"] = usage;
            tail.push(chunk);
        }
        self.tail = tail.into_iter().rev().collect();
    }
}

/// The turn's events from its start to its end, read on across the log's idle ends.
fn turn_events(
    state: &AppState,
    org_id: &str,
    conversation: &ConversationId,
    turn: u32,
) -> BoxStream<'static, Result<TurnEvent, ApiError>> {
    struct Reading {
        state: AppState,
        org_id: String,
        conversation: ConversationId,
        turn: u32,
        last: u64,
        events: Option<BoxStream<'static, (u64, TurnEvent)>>,
        done: bool,
    }
    let reading = Reading {
        state: state.clone(),
        org_id: org_id.to_string(),
        conversation: conversation.clone(),
        turn,
        last: 0,
        events: None,
        done: false,
    };
    stream::unfold(reading, |mut r| async move {
        loop {
            if r.done {
                return None;
            }
            let events = match &mut r.events {
                Some(events) => events,
                None => match r.state.turns.log(&r.org_id, &r.conversation, r.turn).await {
                    Ok(log) => r
                        .events
                        .insert(log.read_from(r.last, r.state.turns.streams().idle).boxed()),
                    Err(error) => {
                        r.done = true;
                        return Some((Err(ApiError::from(error)), r));
                    }
                },
            };
            match events.next().await {
                Some((id, event)) => {
                    r.last = id;
                    r.done = matches!(event, TurnEvent::TurnEnd { .. });
                    return Some((Ok(event), r));
                }
                // The log ended without the turn's end: its reader waited `idle` for an event.
                None => r.events = None,
            }
        }
    })
    .boxed()
}

fn failed(reason: Option<&str>) -> OpenAiError {
    OpenAiError {
        status: StatusCode::BAD_GATEWAY,
        message: format!(
            "the turn failed: {}",
            reason.unwrap_or("the agent's model did not finish it")
        ),
        param: None,
        code: Some("turn_failed"),
    }
}

/// The turn's priced usage as the portal recorded it, every call of it (compactions too), in
/// OpenAI's fields with the portal's beside.
async fn usage(state: &AppState, watch: &Watch) -> Result<Value, OpenAiError> {
    let records = state
        .turns
        .storage()
        .usage(&watch.owner.org_id, &watch.conversation)
        .await?;
    let spent = ConversationUsage::of(records.iter().map(|r| (r.turn, &r.usage)));
    let tally = spent.turn(watch.turn).cloned().unwrap_or_default();
    Ok(usage_json(&tally))
}

fn usage_json(tally: &Tally) -> Value {
    let t = &tally.tokens;
    json!({
        "prompt_tokens": t.input,
        "completion_tokens": t.output,
        "total_tokens": t.input + t.output,
        "prompt_tokens_details": { "cached_tokens": t.cached_input },
        "completion_tokens_details": { "reasoning_tokens": t.reasoning },
        "portal": {
            "calls": tally.calls,
            "estimated": t.estimated,
            "cost": tally.cost_text(),
            "costs": tally.costs,
        },
    })
}

/// The turn a request started, until it has answered: a caller gone before its end (a dropped
/// connection, an abandoned stream) cuts the turn off, and a turn of `store: false` is
/// forgotten once it has ended.
struct Watch {
    state: AppState,
    owner: Owner,
    conversation: ConversationId,
    turn: u32,
    forget: bool,
    /// Whether the caller read the turn to its end.
    ended: bool,
}

impl Watch {
    fn events(&self) -> BoxStream<'static, Result<TurnEvent, ApiError>> {
        turn_events(
            &self.state,
            &self.owner.org_id,
            &self.conversation,
            self.turn,
        )
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if self.ended && !self.forget {
            return;
        }
        let (state, owner, conversation, turn) = (
            self.state.clone(),
            self.owner.clone(),
            self.conversation.clone(),
            self.turn,
        );
        let (cut_off, forget) = (!self.ended, self.forget);
        tokio::spawn(async move {
            if cut_off {
                if let Err(error) = state.turns.cancel(&owner.org_id, &conversation, turn).await {
                    tracing::debug!("an abandoned turn had ended already: {error}");
                }
                turn_events(&state, &owner.org_id, &conversation, turn)
                    .for_each(|_| async {})
                    .await;
            }
            if forget
                && let Err(error) = state
                    .turns
                    .storage()
                    .delete_conversation(&owner, &conversation)
                    .await
            {
                tracing::warn!("a conversation of store: false was kept: {error}");
            }
        });
    }
}

fn now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
