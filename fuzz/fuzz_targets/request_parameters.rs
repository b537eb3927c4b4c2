//! Any request a caller can send to the API: a method, a path with its query (turn numbers,
//! event ids, file names, ids), a `Last-Event-ID` and a body, answered by the whole router in
//! this process on a fresh data folder. Nothing panics, and no answer is a server error: every
//! number, id and body from a request is checked before it is used.
#![no_main]

use std::sync::OnceLock;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use libfuzzer_sys::fuzz_target;
use tower::ServiceExt;

/// The paths the fuzzer starts from; its bytes replace the parameters in them.
const ROUTES: &[&str] = &[
    "/api/info",
    "/api/conversations",
    "/api/conversations/{id}",
    "/api/conversations/{id}/messages",
    "/api/conversations/{id}/turns/{n}/events?after={q}",
    "/api/conversations/{id}/turns/{n}/cancel",
    "/api/conversations/{id}/turns/{n}/decision",
    "/api/conversations/{id}/turns/{n}/answer",
    "/api/attachments?filename={q}",
    "/api/attachments/{id}",
    "/api/{q}",
];

struct Portal {
    runtime: tokio::runtime::Runtime,
    router: axum::Router,
    _data: tempfile::TempDir,
}

fn portal() -> &'static Portal {
    static PORTAL: OnceLock<Portal> = OnceLock::new();
    PORTAL.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime");
        let data = tempfile::tempdir().expect("a data folder");
        // PDFs are read by their own target, `pdf_reading`; here an upload sniffed as one is
        // handed to a reader that cannot start, and its document fails at once.
        let config = portal_server::Config {
            pdf_reader: Some(data.path().join("no-reader")),
            ..portal_server::Config::local(data.path())
        };
        let router = runtime.block_on(async {
            portal_server::Server::open(&config)
                .expect("the server opens")
                .router()
        });
        Portal {
            runtime,
            router,
            _data: data,
        }
    })
}

/// Text for a parameter: whatever the fuzzer gave, percent-encoded so the path stays one URI.
fn parameter(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (*b as char).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let portal = portal();
    let mut parts = data.splitn(5, |b| *b == 0xff);
    let head = parts.next().unwrap_or_default();
    let (route, method) = match head {
        [r, m, ..] => (ROUTES[*r as usize % ROUTES.len()], *m),
        _ => return,
    };
    let id = parameter(parts.next().unwrap_or_default());
    let n = parameter(parts.next().unwrap_or_default());
    let q = parameter(parts.next().unwrap_or_default());
    let body = parts.next().unwrap_or_default().to_vec();
    let path = route
        .replace("{id}", &id)
        .replace("{n}", &n)
        .replace("{q}", &q);
    let method = if method % 2 == 0 { Method::GET } else { Method::POST };
    let mut request = Request::builder()
        .method(method)
        .uri(path.as_str())
        .header("host", "127.0.0.1")
        .header("content-type", "application/json");
    if let Some(last) = q.strip_prefix("L") {
        request = request.header("last-event-id", last);
    }
    let Ok(request) = request.body(Body::from(body)) else {
        return;
    };
    let status = portal.runtime.block_on(async {
        let answer = portal.router.clone().oneshot(request).await.expect("infallible");
        answer.status()
    });
    assert!(
        status != StatusCode::INTERNAL_SERVER_ERROR,
        "{path} was answered {status}"
    );
});
