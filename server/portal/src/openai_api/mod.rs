//! The OpenAI-compatible API under `/v1` (docs/api.md): `GET /v1/models` lists the agents the
//! caller may use, and `POST /v1/chat/completions` runs a turn of one, streamed or not, as the
//! page runs it. A request signs in with an API key or a configured bearer token, never a
//! cookie, and every answer, refusals too, is in OpenAI's shape.

mod caller;
mod chat;
mod error;
mod models;
mod reply;
mod request;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::any;

pub use caller::ApiCaller;
pub use error::OpenAiError;

use crate::api::AppState;

/// The API's routes; [`sign_in`] and [`answers`] go around them.
pub fn router() -> Router<AppState> {
    Router::new()
        .merge(models::router())
        .merge(chat::router())
        .route("/v1", any(unknown))
        .route("/v1/{*path}", any(unknown))
}

/// Whether `path` is this API's.
pub fn is_v1(path: &str) -> bool {
    path == "/v1" || path.starts_with("/v1/")
}

/// Signs in every `/v1` request before anything reads it, refusing it 401 in OpenAI's shape
/// when it does not, and leaves the [`ApiCaller`] in its extensions.
pub async fn sign_in(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    if !is_v1(request.uri().path()) {
        return next.run(request).await;
    }
    match caller::authenticate(&state, request.uri(), request.headers()).await {
        Ok(caller) => {
            request.extensions_mut().insert(caller);
            next.run(request).await
        }
        Err(error) => error.into_response(),
    }
}

/// The most of a plain-text refusal [`answers`] reads to quote it.
const REFUSAL_READ: usize = 4096;

/// Every `/v1` answer leaves in OpenAI's shape: a refusal axum wrote as plain text (a body too
/// large, a method the path does not answer) is rewritten, keeping its status.
pub async fn answers(request: Request, next: Next) -> Response {
    if !is_v1(request.uri().path()) {
        return next.run(request).await;
    }
    let response = next.run(request).await;
    let status = response.status();
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|t| t.as_bytes().starts_with(b"application/json"));
    if json || !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let detail = axum::body::to_bytes(response.into_body(), REFUSAL_READ)
        .await
        .map(|text| String::from_utf8_lossy(&text).trim().to_string())
        .unwrap_or_default();
    let message = match status {
        StatusCode::PAYLOAD_TOO_LARGE => format!(
            "the request body is larger than the 2 MiB the API reads ({detail}); send a \
             shorter message, or continue the conversation with its new message alone"
        ),
        _ => format!("the request could not be read ({detail}); check it against docs/api.md"),
    };
    OpenAiError {
        status,
        message,
        param: None,
        code: None,
    }
    .into_response()
}

/// A `/v1` path asked with a method it does not answer.
pub fn wrong_method() -> OpenAiError {
    OpenAiError {
        status: StatusCode::METHOD_NOT_ALLOWED,
        message: "this path does not answer that method; docs/api.md lists the requests it answers"
            .into(),
        param: None,
        code: None,
    }
}

/// A `/v1` path that names nothing.
async fn unknown(request: Request) -> OpenAiError {
    let shown: String = request.uri().path().chars().take(80).collect();
    OpenAiError {
        status: StatusCode::NOT_FOUND,
        message: format!(
            "there is no {shown} in the API; it answers GET /v1/models and POST \
             /v1/chat/completions (docs/api.md)"
        ),
        param: None,
        code: None,
    }
}
