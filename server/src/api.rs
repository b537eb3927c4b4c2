//! The HTTP API and the web app's files.

use std::convert::Infallible;
use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::{Stream, StreamExt};
use serde::{Deserialize, Serialize};
use tower_http::services::{ServeDir, ServeFile};

use crate::model::Model;
use crate::store::Store;
use crate::turn;

/// What every request handler shares.
#[derive(Debug, Clone)]
pub struct AppState {
    store: Arc<Mutex<Store>>,
    model: Arc<dyn Model>,
}

impl AppState {
    pub fn new(model: Arc<dyn Model>) -> Self {
        AppState {
            store: Arc::new(Mutex::new(Store::default())),
            model,
        }
    }

    fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The API under `/api`, and the web app for every other path.
pub fn router(state: AppState, dist: &Path) -> Router {
    let app = ServeDir::new(dist).fallback(ServeFile::new(dist.join("index.html")));
    Router::new()
        .route("/api/info", get(info))
        .route("/api/conversations", get(list).post(create))
        .route("/api/conversations/{id}", get(show))
        .route("/api/conversations/{id}/messages", post(send))
        .route("/api/conversations/{id}/turns/{turn}/events", get(events))
        .fallback_service(app)
        .with_state(state)
}

/// An error as the API answers it: a status and a sentence saying what to do.
#[derive(Debug)]
pub struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(serde_json::json!({ "error": self.1 }))).into_response()
    }
}

fn no_conversation(id: &str) -> ApiError {
    ApiError(
        StatusCode::NOT_FOUND,
        format!("there is no conversation `{id}`; open one with POST /api/conversations"),
    )
}

#[derive(Debug, Serialize)]
struct Info {
    model: String,
    demo: bool,
}

async fn info(State(state): State<AppState>) -> Json<Info> {
    Json(Info {
        model: state.model.label().to_string(),
        demo: state.model.is_demo(),
    })
}

#[derive(Debug, Serialize)]
struct Created {
    id: String,
}

async fn create(State(state): State<AppState>) -> (StatusCode, Json<Created>) {
    let id = state.store().create();
    (StatusCode::CREATED, Json(Created { id }))
}

async fn list(State(state): State<AppState>) -> Json<Vec<String>> {
    Json(state.store().ids())
}

async fn show(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<portal_core::Transcript>, ApiError> {
    let store = state.store();
    let conversation = store.get(&id).ok_or_else(|| no_conversation(&id))?;
    Ok(Json(conversation.transcript.clone()))
}

#[derive(Debug, Deserialize)]
struct NewMessage {
    text: String,
}

#[derive(Debug, Serialize)]
struct Sent {
    turn: u32,
}

async fn send(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
    Json(message): Json<NewMessage>,
) -> Result<(StatusCode, Json<Sent>), ApiError> {
    if message.text.trim().is_empty() {
        return Err(ApiError(
            StatusCode::UNPROCESSABLE_ENTITY,
            "the message is empty; write something before sending".into(),
        ));
    }
    let (index, log) = {
        let mut store = state.store();
        let running = store
            .get(&id)
            .ok_or_else(|| no_conversation(&id))?
            .transcript
            .turns
            .last()
            .is_some_and(|t| t.status.is_open());
        if running {
            return Err(ApiError(
                StatusCode::CONFLICT,
                "the conversation's latest turn is still running; wait for it to finish".into(),
            ));
        }
        turn::open(&mut store, &id, &message.text).ok_or_else(|| no_conversation(&id))?
    };
    tokio::spawn(turn::run(
        Arc::clone(&state.store),
        Arc::clone(&state.model),
        id,
        index,
        log,
    ));
    Ok((StatusCode::ACCEPTED, Json(Sent { turn: index })))
}

async fn events(
    State(state): State<AppState>,
    UrlPath((id, index)): UrlPath<(String, u32)>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let log = {
        let store = state.store();
        let conversation = store.get(&id).ok_or_else(|| no_conversation(&id))?;
        conversation.logs.get(&index).cloned().ok_or_else(|| {
            ApiError(
                StatusCode::NOT_FOUND,
                format!("conversation `{id}` has no streamed turn {index}; read the conversation instead"),
            )
        })?
    };
    let seen = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0);
    let stream = log.read_from(seen).map(|(id, event)| {
        let data = serde_json::to_string(&event).unwrap_or_default();
        Ok(Event::default()
            .id(id.to_string())
            .event(event.name())
            .data(data))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}
