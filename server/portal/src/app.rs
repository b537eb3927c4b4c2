//! The whole HTTP app: the API under `/api`, the OpenAI-compatible API under `/v1`, each behind
//! its own sign-in and answering in its own shape, and the web app's files for every other path
//! (the app routes on the client).

use std::path::Path;

use axum::Router;
use axum::extract::Request;
use axum::middleware::{from_fn, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use tower_http::services::{ServeDir, ServeFile};

use crate::api::{self, AppState};
use crate::openai_api;

/// Every route of the server, with `state`, serving the web app from `dist`.
pub fn router(state: AppState, dist: &Path) -> Router {
    let web = ServeDir::new(dist).fallback(ServeFile::new(dist.join("index.html")));
    Router::new()
        .merge(api::routes())
        .merge(openai_api::router())
        .method_not_allowed_fallback(wrong_method)
        .fallback_service(web)
        .layer(from_fn_with_state(state.clone(), api::sign_in))
        .layer(from_fn_with_state(state.clone(), openai_api::sign_in))
        .layer(from_fn(openai_api::answers))
        .layer(from_fn(api::answers))
        .with_state(state)
}

/// A path asked with a method it does not answer, refused in its API's shape.
async fn wrong_method(request: Request) -> Response {
    if openai_api::is_v1(request.uri().path()) {
        openai_api::wrong_method().into_response()
    } else {
        api::wrong_method(request).await.into_response()
    }
}
