//! The security headers every response carries: a Content-Security-Policy that lets the page run
//! only the app's own scripts (its files, the inline loader Trunk writes into `index.html`, and
//! WebAssembly), talk only to its own origin and never be framed; `nosniff`; and no referrer.

use std::path::Path;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};

/// The headers added to every response, built once when the server starts.
#[derive(Debug, Clone)]
pub struct SecurityHeaders {
    headers: HeaderMap,
}

impl SecurityHeaders {
    /// The headers for the web app in `dist`: its `index.html`'s inline scripts are allowed by
    /// their SHA-256 digests. Without an `index.html` no inline script is allowed.
    pub fn for_dist(dist: &Path) -> SecurityHeaders {
        let index = std::fs::read_to_string(dist.join("index.html")).unwrap_or_default();
        SecurityHeaders::for_index(&index)
    }

    /// The headers for a web app whose page is `index_html`.
    pub fn for_index(index_html: &str) -> SecurityHeaders {
        let policy = content_security_policy(&inline_script_digests(index_html));
        let mut headers = HeaderMap::new();
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_str(&policy).expect("the policy is visible ASCII"),
        );
        headers.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
        headers.insert(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        );
        SecurityHeaders { headers }
    }
}

/// The policy. `style-src-attr 'unsafe-inline'` lets the app set `style` attributes (the context
/// meter's widths); style sheets and scripts still come only from the app's own origin.
fn content_security_policy(script_digests: &[String]) -> String {
    let mut scripts = String::from("'self' 'wasm-unsafe-eval'");
    for digest in script_digests {
        scripts.push_str(&format!(" 'sha256-{digest}'"));
    }
    [
        "default-src 'none'".to_string(),
        format!("script-src {scripts}"),
        "style-src 'self'".into(),
        "style-src-attr 'unsafe-inline'".into(),
        "connect-src 'self'".into(),
        // The composer's thumbnails are the person's own files, drawn from `blob:` addresses.
        "img-src 'self' blob:".into(),
        "font-src 'self'".into(),
        "manifest-src 'self'".into(),
        "base-uri 'none'".into(),
        "form-action 'self'".into(),
        "frame-ancestors 'none'".into(),
    ]
    .join("; ")
}

/// The base64 SHA-256 digest of the text of every `<script>` element of `html` that has no
/// `src` attribute, as CSP hash sources name them.
pub fn inline_script_digests(html: &str) -> Vec<String> {
    let lower = html.to_ascii_lowercase();
    let mut digests = Vec::new();
    let mut from = 0;
    while let Some(start) = lower[from..].find("<script").map(|i| from + i) {
        let Some(open_end) = lower[start..].find('>').map(|i| start + i + 1) else {
            break;
        };
        let Some(close) = lower[open_end..].find("</script").map(|i| open_end + i) else {
            break;
        };
        let tag = &lower[start..open_end];
        let has_src = tag
            .split(|c: char| c.is_ascii_whitespace())
            .any(|attribute| attribute == "src" || attribute.starts_with("src="));
        if !has_src {
            let text = &html[open_end..close];
            digests.push(STANDARD.encode(Sha256::digest(text.as_bytes())));
        }
        from = close;
    }
    digests
}

/// Adds the security headers to the response, replacing any of the same name, and to every
/// answer under `/api` (refusals and event streams included) `Cache-Control: no-store`: they are
/// one person's conversations, for no cache to keep. The web app's files keep their own caching.
pub async fn add(
    State(security): State<Arc<SecurityHeaders>>,
    request: Request,
    next: Next,
) -> Response {
    let api = crate::api::is_api(request.uri().path());
    let mut response = next.run(request).await;
    for (name, value) in &security.headers {
        response.headers_mut().insert(name.clone(), value.clone());
    }
    if api {
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `trunk build` writes: one inline module script that loads the wasm, then links.
    const TRUNK_INDEX: &str = "<!DOCTYPE html>\n<html><head>\n<script type=\"module\">\nimport init from '/app.js';\nawait init();\n</script>\n<script src=\"/other.js\"></script>\n<link rel=\"stylesheet\" href=\"/style.css\"/></head><body></body></html>\n";

    #[test]
    fn inline_scripts_are_hashed_and_scripts_with_src_are_not() {
        let digests = inline_script_digests(TRUNK_INDEX);
        let expected = STANDARD.encode(Sha256::digest(
            "\nimport init from '/app.js';\nawait init();\n".as_bytes(),
        ));
        assert_eq!(digests, [expected]);
    }

    #[test]
    fn the_policy_allows_the_inline_loader_and_forbids_framing() {
        let headers = SecurityHeaders::for_index(TRUNK_INDEX);
        let policy = headers.headers[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .expect("ascii");
        let digest = &inline_script_digests(TRUNK_INDEX)[0];
        assert!(
            policy.contains(&format!(
                "script-src 'self' 'wasm-unsafe-eval' 'sha256-{digest}';"
            )),
            "{policy}"
        );
        assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
        assert!(!policy.contains("'unsafe-eval'"), "{policy}");
    }

    #[test]
    fn without_a_page_no_inline_script_is_allowed() {
        let headers = SecurityHeaders::for_dist(Path::new("/nonexistent-portal-dist"));
        let policy = headers.headers[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .expect("ascii");
        assert!(policy.contains("script-src 'self' 'wasm-unsafe-eval';"));
    }
}
