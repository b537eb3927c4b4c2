//! Signing in and out: `GET /api/session` says who is signed in, `POST /api/session` signs in
//! with a password and sets the session cookie, `DELETE /api/session` signs out. These answer
//! without being signed in first (the sign-in layer lets them through).

use std::net::SocketAddr;

use axum::body::Bytes;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

use crate::sessions::{self, SignInError, origin};
use portal_identity::{Caller, Mode};

use super::{ApiError, AppState};

/// The path of the session routes, which need no sign-in.
pub(super) const PATH: &str = "/api/session";

pub(super) fn router() -> Router<AppState> {
    Router::new().route(PATH, get(show).post(sign_in).delete(sign_out))
}

/// Who is signed in.
#[derive(Debug, Serialize)]
struct SignedIn {
    mode: Mode,
    organisation: String,
    user: String,
    /// The user's name, for the header.
    name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Credentials {
    organisation: String,
    user: String,
    password: String,
}

async fn show(State(state): State<AppState>, request: Request) -> Result<Response, ApiError> {
    let signed_in = state.signed_in(request.headers()).await?;
    let mut shown = state.signed_in_as(&signed_in.caller);
    if state
        .identity
        .user(&shown.organisation, &shown.user)
        .is_none()
        && let Some(account) = state
            .turns
            .storage()
            .sso_account_of(&super::owner_of(&signed_in.caller))
            .await?
    {
        shown.name = account.name;
    }
    let mut response = Json(shown).into_response();
    if let Some(cookie) = signed_in.renewed {
        set_cookie(&mut response, &cookie)?;
    }
    Ok(response)
}

async fn sign_in(State(state): State<AppState>, request: Request) -> Result<Response, ApiError> {
    if state.identity.mode() == Mode::Local {
        return Err(ApiError(
            StatusCode::CONFLICT,
            "this portal runs in local mode, where nobody signs in; just use it".into(),
        ));
    }
    let public_origin = state.sessions.config().public_origin.as_deref();
    if origin::from_another_site(request.headers(), public_origin) {
        return Err(ApiError::cross_site());
    }
    let client =
        request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(address)| {
                sessions::client_address(
                    address.ip(),
                    request.headers(),
                    &state.sessions.config().trusted_proxies,
                )
            });
    let body = axum::body::to_bytes(request.into_body(), 64 * 1024)
        .await
        .unwrap_or_else(|_| Bytes::new());
    let credentials: Credentials = serde_json::from_slice(&body).map_err(|_| {
        ApiError(
            StatusCode::UNPROCESSABLE_ENTITY,
            "send {\"organisation\": …, \"user\": …, \"password\": …} to sign in".into(),
        )
    })?;
    let signed = state
        .sessions
        .sign_in(
            credentials.organisation.trim(),
            credentials.user.trim(),
            &credentials.password,
            client,
        )
        .await;
    match signed {
        Ok((caller, cookie)) => {
            tracing::info!("{}/{} signed in", caller.organisation, caller.user);
            let mut response = Json(state.signed_in_as(&caller)).into_response();
            set_cookie(&mut response, &cookie)?;
            Ok(response)
        }
        Err(error @ SignInError::Wrong) => {
            Err(ApiError(StatusCode::UNAUTHORIZED, error.to_string()))
        }
        Err(error @ SignInError::TooMany { wait }) => {
            let seconds = wait.as_secs().max(1);
            let mut response = (
                StatusCode::TOO_MANY_REQUESTS,
                Json(serde_json::json!({ "error": error.to_string(), "retry_after": seconds })),
            )
                .into_response();
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
            Ok(response)
        }
        Err(SignInError::Storage(detail)) => {
            tracing::error!("a sign-in failed: {detail}");
            Err(ApiError(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the portal could not keep the session; try again in a moment".into(),
            ))
        }
    }
}

async fn sign_out(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    let id = sessions::cookie_value(&headers);
    let public_origin = state.sessions.config().public_origin.as_deref();
    if id.is_some() && !origin::same_origin(&headers, public_origin) {
        return Err(ApiError::cross_site());
    }
    let removal = state.sessions.sign_out(id.as_deref()).await?;
    let mut response = StatusCode::NO_CONTENT.into_response();
    set_cookie(&mut response, &removal)?;
    Ok(response)
}

impl AppState {
    fn signed_in_as(&self, caller: &Caller) -> SignedIn {
        let name = self
            .identity
            .user(&caller.organisation, &caller.user)
            .map_or_else(|| caller.user.clone(), |u| u.name.clone());
        SignedIn {
            mode: self.identity.mode(),
            organisation: caller.organisation.clone(),
            user: caller.user.clone(),
            name,
        }
    }
}

pub(super) fn set_cookie(response: &mut Response, cookie: &str) -> Result<(), ApiError> {
    let value = HeaderValue::from_str(cookie).map_err(|_| {
        ApiError(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the session cookie could not be written; try again".into(),
        )
    })?;
    response.headers_mut().append(header::SET_COOKIE, value);
    Ok(())
}
