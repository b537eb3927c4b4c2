//! A fake OpenID provider for the single sign-on attack tests: it serves discovery, its keys
//! and a token endpoint on loopback, and hands out whatever ID token a test minted, forged ones
//! included. The token endpoint checks PKCE and uses each code once, as a real provider does.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Form, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use openidconnect::core::{CoreHmacKey, CoreJwsSigningAlgorithm, CoreRsaPrivateSigningKey};
use openidconnect::{JsonWebKeyId, PrivateSigningKey};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

pub const CLIENT_ID: &str = "portal";
pub const CLIENT_SECRET: &str = "the-client-secret-of-the-portal";

/// How a minted ID token is signed.
pub enum Signer {
    /// By one of the fake's RSA keys, named by its `kid`.
    Rsa(&'static str),
    /// Not at all (`alg: none`).
    Unsigned,
    /// With HMAC-SHA256 keyed by the client secret.
    ClientSecret,
}

struct Grant {
    id_token: String,
    challenge: String,
    userinfo: Value,
    used: bool,
}

#[derive(Default)]
struct Inner {
    published: Vec<&'static str>,
    grants: HashMap<String, Grant>,
    userinfo: HashMap<String, Value>,
}

#[derive(Clone)]
pub struct FakeProvider {
    pub issuer: String,
    inner: Arc<Mutex<Inner>>,
}

fn key(kid: &'static str) -> CoreRsaPrivateSigningKey {
    let pem = match kid {
        "a" => include_str!("key-a.pem"),
        _ => include_str!("key-b.pem"),
    };
    CoreRsaPrivateSigningKey::from_pem(pem, Some(JsonWebKeyId::new(kid.into()))).expect("key")
}

impl FakeProvider {
    /// Starts the fake on a loopback port, publishing key `a`.
    pub async fn start() -> FakeProvider {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("loopback port");
        let issuer = format!("http://{}", listener.local_addr().expect("address"));
        let fake = FakeProvider {
            issuer,
            inner: Arc::new(Mutex::new(Inner {
                published: vec!["a"],
                ..Inner::default()
            })),
        };
        let app = Router::new()
            .route("/.well-known/openid-configuration", get(discovery))
            .route("/jwks", get(jwks))
            .route("/token", post(token))
            .route("/userinfo", get(userinfo))
            .with_state(fake.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        fake
    }

    /// Publishes exactly the keys `kids` (a rotation).
    pub fn publish(&self, kids: &[&'static str]) {
        self.inner.lock().expect("lock").published = kids.to_vec();
    }

    /// Makes `code` redeemable once for `id_token`, by the holder of the PKCE verifier whose
    /// S256 challenge is `challenge`; userinfo then answers `userinfo`.
    pub fn grant(&self, code: &str, challenge: &str, id_token: String, userinfo: Value) {
        self.inner.lock().expect("lock").grants.insert(
            code.into(),
            Grant {
                id_token,
                challenge: challenge.into(),
                userinfo,
                used: false,
            },
        );
    }

    /// An ID token with `claims`, signed by `signer`.
    pub fn mint(&self, signer: &Signer, claims: &Value) -> String {
        let header = match signer {
            Signer::Rsa(kid) => json!({"alg": "RS256", "kid": kid}),
            Signer::Unsigned => json!({"alg": "none"}),
            Signer::ClientSecret => json!({"alg": "HS256"}),
        };
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = match signer {
            Signer::Rsa(kid) => key(kid)
                .sign(
                    &CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256,
                    signing_input.as_bytes(),
                )
                .expect("signed"),
            Signer::Unsigned => Vec::new(),
            Signer::ClientSecret => CoreHmacKey::new(CLIENT_SECRET.as_bytes())
                .sign(
                    &CoreJwsSigningAlgorithm::HmacSha256,
                    signing_input.as_bytes(),
                )
                .expect("signed"),
        };
        format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(signature))
    }
}

async fn discovery(State(fake): State<FakeProvider>) -> Json<Value> {
    let issuer = &fake.issuer;
    Json(json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "userinfo_endpoint": format!("{issuer}/userinfo"),
        "jwks_uri": format!("{issuer}/jwks"),
        "end_session_endpoint": format!("{issuer}/session/end"),
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256", "HS256", "none"],
        "code_challenge_methods_supported": ["S256"],
    }))
}

async fn jwks(State(fake): State<FakeProvider>) -> Json<Value> {
    let published = fake.inner.lock().expect("lock").published.clone();
    let keys: Vec<_> = published
        .into_iter()
        .map(|k| key(k).as_verification_key())
        .collect();
    Json(json!({ "keys": keys }))
}

async fn token(
    State(fake): State<FakeProvider>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let refuse =
        |error: &str| (StatusCode::BAD_REQUEST, Json(json!({"error": error}))).into_response();
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{CLIENT_ID}:{CLIENT_SECRET}"))
    );
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(basic.as_str()) {
        return refuse("invalid_client");
    }
    let code = form.get("code").cloned().unwrap_or_default();
    let verifier = form.get("code_verifier").cloned().unwrap_or_default();
    let mut inner = fake.inner.lock().expect("lock");
    let Some(grant) = inner.grants.get_mut(&code) else {
        return refuse("invalid_grant");
    };
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    if grant.used || challenge != grant.challenge {
        return refuse("invalid_grant");
    }
    grant.used = true;
    let (id_token, userinfo) = (grant.id_token.clone(), grant.userinfo.clone());
    let access_token = format!("at-{code}");
    inner.userinfo.insert(access_token.clone(), userinfo);
    Json(json!({
        "access_token": access_token,
        "token_type": "Bearer",
        "expires_in": 300,
        "id_token": id_token,
    }))
    .into_response()
}

async fn userinfo(State(fake): State<FakeProvider>, headers: HeaderMap) -> Response {
    let token = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    match fake.inner.lock().expect("lock").userinfo.get(token) {
        Some(info) => Json(info.clone()).into_response(),
        None => StatusCode::UNAUTHORIZED.into_response(),
    }
}
