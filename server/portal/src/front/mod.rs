//! The server's HTTP front, around the API and the web app: connections and their header-read
//! timeout, the request timeouts, the security headers on every response and, in local mode,
//! the checks that keep other machines and other sites' pages out (docs/security.md).

mod headers;
mod local;
mod probes;
mod timeout;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use axum::middleware::from_fn_with_state;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tower::ServiceExt;

use portal_identity::Mode;

pub use local::{RemoteWithoutSignIn, check_listen_address};
pub use probes::Front;

/// `--header-read-timeout`, in seconds.
pub const DEFAULT_HEADER_READ_TIMEOUT_SECS: u64 = 10;
/// `--request-timeout`, in seconds.
pub const DEFAULT_REQUEST_TIMEOUT_SECS: u64 = 30;
/// `--upload-timeout`, in seconds.
pub const DEFAULT_UPLOAD_TIMEOUT_SECS: u64 = 300;

/// How the server treats connections and requests.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// A connection that has not sent a whole request head this long after it opened, or after
    /// its previous answer, is closed (slow-header clients, idle keep-alive connections).
    /// **Decision:** 10 s.
    pub header_read_timeout: Duration,
    /// The time a request, its body included, may take to be answered; not the time its answer
    /// takes to stream. **Decision:** 30 s.
    pub request_timeout: Duration,
    /// The same for an upload (`POST /api/attachments`, up to 20 MiB). **Decision:** 300 s.
    pub upload_timeout: Duration,
    /// Local mode serves requests addressed to any IP address, not only loopback; set by
    /// `--allow-remote-without-sign-in`.
    pub allow_remote_without_sign_in: bool,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            header_read_timeout: Duration::from_secs(DEFAULT_HEADER_READ_TIMEOUT_SECS),
            request_timeout: Duration::from_secs(DEFAULT_REQUEST_TIMEOUT_SECS),
            upload_timeout: Duration::from_secs(DEFAULT_UPLOAD_TIMEOUT_SECS),
            allow_remote_without_sign_in: false,
        }
    }
}

/// Wraps `app`: outermost the security headers (so every answer has them, refusals included),
/// then local mode's checks, then the request timeouts.
pub fn protect(app: Router, config: &HttpConfig, mode: Mode, dist: &Path) -> Router {
    let deadlines = timeout::Deadlines {
        request: config.request_timeout,
        upload: config.upload_timeout,
    };
    let mut app = app.layer(from_fn_with_state(deadlines, timeout::limit));
    if mode == Mode::Local {
        let local = Arc::new(local::LocalOnly {
            allow_remote: config.allow_remote_without_sign_in,
        });
        app = app.layer(from_fn_with_state(local, local::guard));
    }
    let headers = Arc::new(headers::SecurityHeaders::for_dist(dist));
    app.layer(from_fn_with_state(headers, headers::add))
}

/// How long connections still open when the server stops get to finish their requests before
/// they are dropped (an upload, say; event streams have ended by then).
const CLOSE_WAIT: Duration = Duration::from_secs(10);

/// Serves `app` over HTTP/1.1 on `listener` until `shutdown` completes, then closes the listener
/// and waits for the open connections to finish their requests, up to [`CLOSE_WAIT`].
pub async fn serve_connections(
    listener: tokio::net::TcpListener,
    app: Router,
    config: HttpConfig,
    shutdown: impl Future<Output = ()>,
) {
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(config.header_read_timeout);
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, client) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    accept_failed(error).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // The client's address travels with each request, for the failed sign-in counts.
        let app = app
            .clone()
            .map_request(move |mut request: axum::extract::Request<_>| {
                request.extensions_mut().insert(ConnectInfo(client));
                request
            });
        let service = TowerToHyperService::new(app);
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!("connection closed: {error}");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(CLOSE_WAIT, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            "connections still busy {CLOSE_WAIT:?} after the server stopped are dropped"
        );
    }
}

/// A failed accept: one connection's trouble is skipped; anything else (out of file
/// descriptors, say) is logged and waited out for a second rather than retried in a busy loop.
async fn accept_failed(error: std::io::Error) {
    use std::io::ErrorKind;
    if matches!(
        error.kind(),
        ErrorKind::ConnectionRefused | ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset
    ) {
        return;
    }
    tracing::error!("cannot accept a connection: {error}; trying again in a second");
    tokio::time::sleep(Duration::from_secs(1)).await;
}
