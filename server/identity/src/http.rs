//! The caller of an HTTP request as an axum extractor: any handler that takes a [`Caller`] is
//! signed in or answered 401 before it runs. The API's sign-in layer (bearer token, session
//! cookie or local mode) leaves the caller in the request's extensions; a router without that
//! layer signs in by bearer token here.

use std::sync::Arc;

use axum::Json;
use axum::extract::{FromRef, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::{AuthError, Caller, Identity};

/// A request that did not sign in: 401 with `WWW-Authenticate: Bearer` and the reason as
/// `{"error": "…"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unauthorized(pub AuthError);

impl Unauthorized {
    /// The `WWW-Authenticate` challenge: sign in with a bearer token.
    pub const CHALLENGE: &str = "Bearer";
}

impl IntoResponse for Unauthorized {
    fn into_response(self) -> Response {
        (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, Self::CHALLENGE)],
            Json(serde_json::json!({ "error": self.0.to_string() })),
        )
            .into_response()
    }
}

impl<S> FromRequestParts<S> for Caller
where
    Arc<Identity>: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = Unauthorized;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        if let Some(caller) = parts.extensions.get::<Caller>() {
            return Ok(caller.clone());
        }
        let identity = Arc::<Identity>::from_ref(state);
        let authorization = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        identity.authenticate(authorization).map_err(Unauthorized)
    }
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::body::Body;
    use axum::http::Request;
    use axum::routing::get;
    use tower::ServiceExt;

    use super::*;

    async fn whoami(caller: Caller) -> String {
        format!("{}/{}", caller.organisation, caller.user)
    }

    fn app(identity: Identity) -> Router {
        Router::new()
            .route("/whoami", get(whoami))
            .with_state(Arc::new(identity))
    }

    async fn status_and_body(app: Router, authorization: Option<&str>) -> (StatusCode, String) {
        let mut request = Request::get("/whoami");
        if let Some(value) = authorization {
            request = request.header(header::AUTHORIZATION, value);
        }
        let response = app
            .oneshot(request.body(Body::empty()).expect("request"))
            .await
            .expect("answer");
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .expect("body");
        (status, String::from_utf8_lossy(&bytes).into_owned())
    }

    #[tokio::test]
    async fn local_mode_needs_no_header() {
        let (status, body) = status_and_body(app(Identity::local()), None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body, "local/local");
    }

    #[tokio::test]
    async fn users_mode_answers_401_without_a_valid_token() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("organisations/acme/users/alice")).expect("mkdir");
        std::fs::write(
            root.join("organisations/acme/organisation.toml"),
            "name = \"Acme\"\n",
        )
        .expect("write");
        std::fs::write(
            root.join("organisations/acme/users/alice/user.toml"),
            format!(
                "name = \"Alice\"\ntoken_sha256 = \"{}\"\n",
                super::super::TokenDigest::of("open-sesame").to_hex()
            ),
        )
        .expect("write");
        let identity = Identity::load(root).expect("loads");
        let (status, body) = status_and_body(app(identity.clone()), None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert!(body.contains("Bearer"), "{body}");
        let (status, _) = status_and_body(app(identity.clone()), Some("Bearer nope")).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let (status, body) = status_and_body(app(identity), Some("Bearer open-sesame")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body, "acme/alice");
    }
}
