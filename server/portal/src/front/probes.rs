//! The probes (rule D4) and what answers every other request: `GET /healthz` while the process
//! runs, `GET /readyz` while it is ready to take requests, and the server's app once it is open.
//! Both probes need no sign-in, set no cookie and say nothing about users.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;
use tower::ServiceExt;

use portal_host::lifecycle::{Lifecycle, Phase};
use portal_store::AsyncStorage;

/// How long a readiness answer is reused, so that a flood of probes costs the database one
/// query a second.
const READY_FOR: Duration = Duration::from_secs(1);

/// How long the database may take to answer the readiness query before it counts as
/// unreachable.
const REACHABLE_WITHIN: Duration = Duration::from_secs(2);

/// The server's front before and after it opens: the probes, and the app once it is set.
#[derive(Debug, Clone)]
pub struct Front {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    lifecycle: Lifecycle,
    opened: OnceLock<Opened>,
    /// How long a request that arrives while the server starts waits for it.
    wait: Duration,
    /// The schema version this build writes to the database it serves.
    schema: u32,
    /// The last readiness check of the database: when, and the schema version it holds if it
    /// answered.
    checked: tokio::sync::Mutex<Option<(Instant, Option<u32>)>>,
}

#[derive(Debug)]
struct Opened {
    app: Router,
    storage: AsyncStorage,
}

impl Front {
    /// The front of a server in `lifecycle`, writing `schema`; a request other than a probe
    /// that arrives before the app is set waits for it up to `wait`.
    pub fn new(lifecycle: Lifecycle, schema: u32, wait: Duration) -> Self {
        Front {
            inner: Arc::new(Inner {
                lifecycle,
                opened: OnceLock::new(),
                wait,
                schema,
                checked: tokio::sync::Mutex::new(None),
            }),
        }
    }

    /// The server is open: `app` answers from now on, and readiness asks `storage`.
    pub fn open(&self, app: Router, storage: AsyncStorage) {
        // Set once, by the one server this front is for.
        let _ = self.inner.opened.set(Opened { app, storage });
    }

    /// The probes, and everything else passed to the app.
    pub fn router(&self) -> Router {
        Router::new()
            .route("/healthz", get(healthz))
            .route("/readyz", get(readyz))
            .fallback(forward)
            .with_state(self.clone())
    }

    /// Whether the server can take requests now, and if not, why, in words.
    async fn readiness(&self) -> Result<(), String> {
        let inner = &self.inner;
        match inner.lifecycle.phase() {
            Phase::Starting => return Err("migrating".into()),
            Phase::Stopping | Phase::Closing => return Err("stopping".into()),
            Phase::Ready => {}
        }
        let Some(opened) = inner.opened.get() else {
            return Err("migrating".into());
        };
        let mut checked = inner.checked.lock().await;
        let held = match *checked {
            Some((at, held)) if at.elapsed() < READY_FOR => held,
            _ => {
                let held = tokio::time::timeout(REACHABLE_WITHIN, opened.storage.schema_version())
                    .await
                    .ok()
                    .and_then(Result::ok);
                *checked = Some((Instant::now(), held));
                held
            }
        };
        match held {
            None => Err("database unreachable".into()),
            // A newer build migrated the database since this one opened it: this replica may
            // misread what the newer one writes.
            Some(held) if held > inner.schema => Err(format!(
                "database migrated past this build (schema {held}, this build knows {})",
                inner.schema
            )),
            Some(_) => Ok(()),
        }
    }
}

/// Alive while the process answers at all.
async fn healthz() -> Response {
    no_store((StatusCode::OK, axum::Json(json!({ "status": "alive" }))).into_response())
}

/// Ready: open (its database migrated), the database reachable and not migrated past this
/// build, and not stopping; else 503, saying which.
async fn readyz(State(front): State<Front>) -> Response {
    let schema = front.inner.schema;
    let (status, word) = match front.readiness().await {
        Ok(()) => (StatusCode::OK, "ready".to_string()),
        Err(why) => (StatusCode::SERVICE_UNAVAILABLE, why),
    };
    let body = json!({
        "status": word,
        "version": env!("CARGO_PKG_VERSION"),
        "schema": schema,
    });
    no_store((status, axum::Json(body)).into_response())
}

/// Any other request: answered by the app, once the server has opened.
async fn forward(State(front): State<Front>, request: Request) -> Response {
    let inner = &front.inner;
    let open = tokio::time::timeout(inner.wait, inner.lifecycle.reached(Phase::Ready)).await;
    match (open, inner.opened.get()) {
        (Ok(()), Some(opened)) => match opened.app.clone().oneshot(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        },
        _ => starting(),
    }
}

/// A request that came while the server was still opening its database, for longer than it may
/// wait.
fn starting() -> Response {
    no_store(
        crate::api::ApiError(
            StatusCode::SERVICE_UNAVAILABLE,
            "the portal is starting (opening its database); try again in a moment".into(),
        )
        .into_response(),
    )
}

fn no_store(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
