//! Errors as OpenAI's API answers them, `{"error": {"message", "type", "param", "code"}}`, so
//! that the SDKs raise their own exception classes: `BadRequestError` for 400,
//! `AuthenticationError` for 401, `NotFoundError` for 404, `RateLimitError` for 429.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::request::Refusal;
use crate::api::ApiError;

/// An error as the OpenAI-compatible API answers it.
#[derive(Debug)]
pub struct OpenAiError {
    pub status: StatusCode,
    pub message: String,
    pub param: Option<String>,
    pub code: Option<&'static str>,
}

impl OpenAiError {
    /// A request the API cannot run, naming the field at fault.
    pub fn refused(refusal: Refusal) -> Self {
        OpenAiError {
            status: StatusCode::BAD_REQUEST,
            message: refusal.message,
            param: refusal.param,
            code: None,
        }
    }

    /// A request with `message`, about `param`.
    pub fn bad_request(param: &str, message: String) -> Self {
        OpenAiError {
            status: StatusCode::BAD_REQUEST,
            message,
            param: Some(param.to_string()),
            code: None,
        }
    }

    /// An agent the caller may not use: one of another organisation, outside their key's
    /// agents, or none at all, alike.
    pub fn no_agent(name: &str) -> Self {
        let shown: String = name.chars().take(60).collect();
        OpenAiError {
            status: StatusCode::NOT_FOUND,
            message: format!(
                "there is no agent `{shown}` you may use; GET /v1/models lists those you may"
            ),
            param: Some("model".into()),
            code: Some("model_not_found"),
        }
    }

    /// OpenAI's `type` for the status.
    fn kind(&self) -> &'static str {
        match self.status {
            StatusCode::UNAUTHORIZED => "authentication_error",
            StatusCode::FORBIDDEN => "permission_error",
            StatusCode::TOO_MANY_REQUESTS => "rate_limit_exceeded",
            status if status.is_server_error() => "server_error",
            _ => "invalid_request_error",
        }
    }

    /// The error as a chunk of a streamed answer, where the SDKs look for one.
    pub fn chunk(&self) -> serde_json::Value {
        serde_json::json!({
            "error": {
                "message": self.message,
                "type": self.kind(),
                "param": self.param,
                "code": self.code,
            }
        })
    }
}

impl IntoResponse for OpenAiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, Json(self.chunk())).into_response();
        let headers = response.headers_mut();
        if self.status == StatusCode::UNAUTHORIZED {
            headers.insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"portal\""),
            );
        }
        // The SDKs retry a 429 and every 5xx on their own unless told not to. A quota or a
        // failed turn would be refused or fail again, and a second turn is not the first's
        // retry: the answer says in words when to try again.
        if self.status == StatusCode::TOO_MANY_REQUESTS || self.status.is_server_error() {
            let retry = self.status == StatusCode::SERVICE_UNAVAILABLE;
            headers.insert(
                "x-should-retry",
                HeaderValue::from_static(if retry { "true" } else { "false" }),
            );
        }
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }
}

impl From<ApiError> for OpenAiError {
    fn from(ApiError(status, message): ApiError) -> Self {
        let (status, code) = match status {
            // OpenAI answers a request it cannot run with 400, which the SDKs raise as
            // `BadRequestError`.
            StatusCode::UNPROCESSABLE_ENTITY => (StatusCode::BAD_REQUEST, None),
            StatusCode::UNAUTHORIZED => (status, Some("invalid_api_key")),
            StatusCode::TOO_MANY_REQUESTS => (status, Some("quota_exceeded")),
            _ => (status, None),
        };
        OpenAiError {
            status,
            message,
            param: None,
            code,
        }
    }
}

impl From<portal_store::StorageError> for OpenAiError {
    fn from(error: portal_store::StorageError) -> Self {
        ApiError::from(error).into()
    }
}
