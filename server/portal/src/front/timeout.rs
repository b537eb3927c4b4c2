//! How long the server spends on one request, from its head to the head of the answer: the
//! request timeout for every request but uploads, which take the upload timeout. The timer stops
//! once the answer's head is ready, so a stream of server-sent events or a large file is never
//! cut off by it.

use std::time::Duration;

use axum::Json;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The two deadlines.
#[derive(Debug, Clone, Copy)]
pub struct Deadlines {
    pub request: Duration,
    pub upload: Duration,
}

/// Answers 408 when the request (reading its body included) is not answered in time.
pub async fn limit(State(deadlines): State<Deadlines>, request: Request, next: Next) -> Response {
    let (deadline, flag) =
        if request.method() == Method::POST && crate::api::is_upload(request.uri().path()) {
            (deadlines.upload, "--upload-timeout")
        } else {
            (deadlines.request, "--request-timeout")
        };
    match tokio::time::timeout(deadline, next.run(request)).await {
        Ok(response) => response,
        Err(_) => (
            StatusCode::REQUEST_TIMEOUT,
            Json(serde_json::json!({
                "error": format!(
                    "the request was not answered within {} s (the server's {flag}); send it again, on a faster connection or with a smaller body",
                    deadline.as_secs_f64()
                )
            })),
        )
            .into_response(),
    }
}
