//! How the page asks the Portal server: one request and its answer read as JSON, a 503 asked
//! again while a server restarts, and a refusal read as the sentence the server wrote for the
//! person.

use std::fmt;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{Request, RequestInit, Response};

/// A request that did not get what it asked for, in words for the person.
#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    /// The status the server answered with; `None` when no answer came.
    pub status: Option<u16>,
    pub message: String,
}

impl Error {
    /// Whether the session expired or was revoked, so the person must sign in again.
    pub fn signed_out(&self) -> bool {
        self.status == Some(401)
    }

    /// Whether what was asked for does not exist for this person.
    pub fn missing(&self) -> bool {
        self.status == Some(404)
    }

    fn browser(message: impl Into<String>) -> Self {
        Error {
            status: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

#[derive(Debug, Deserialize)]
struct Refusal {
    error: String,
}

/// A JSON request body and its content type.
pub fn json(body: String) -> (JsValue, String) {
    (JsValue::from_str(&body), "application/json".to_string())
}

/// Makes a request with an optional body and its content type, and reads the JSON answer or the
/// server's refusal.
pub async fn call<T: DeserializeOwned>(
    method: &str,
    url: &str,
    body: Option<(JsValue, String)>,
) -> Result<T, Error> {
    // Only the reading is generic: the request lives in `answer_to`, so the wasm holds one copy of
    // it, not one per answer type.
    let (status, text) = answer_to(method, url, body).await?;
    let text = if text.is_empty() { "null" } else { &text };
    serde_json::from_str(text).map_err(|e| {
        web_sys::console::warn_1(&format!("unreadable answer from {url}: {e}").into());
        Error {
            status: Some(status),
            message: "the portal's answer could not be read; reload the page".to_string(),
        }
    })
}

/// How long the page goes on asking again when the portal answers 503 (a server stopping for a
/// restart, or still starting: it did nothing) before it shows the refusal. **Decision:** 45 s,
/// a single server's grace for its running turns and its start again.
const UNAVAILABLE_FOR_MS: f64 = 45_000.0;

/// Makes a request and returns the status and text of a successful answer, or the server's
/// refusal as an error. A 503 is asked again after its `Retry-After` (1 s to 5 s) for up to
/// [`UNAVAILABLE_FOR_MS`]: behind a proxy another replica answers, and a lone server restarts.
async fn answer_to(
    method: &str,
    url: &str,
    body: Option<(JsValue, String)>,
) -> Result<(u16, String), Error> {
    let first = js_sys::Date::now();
    loop {
        let (response, text) = fetch(method, url, body.clone()).await?;
        let status = response.status();
        if response.ok() {
            return Ok((status, text));
        }
        if status == 503 {
            let seconds = response
                .headers()
                .get("retry-after")
                .ok()
                .flatten()
                .and_then(|value| value.trim().parse::<i32>().ok())
                .unwrap_or(1);
            let wait = seconds.clamp(1, 5) * 1000;
            if js_sys::Date::now() - first + f64::from(wait) < UNAVAILABLE_FOR_MS {
                crate::wait::sleep(wait).await;
                continue;
            }
        }
        let message = serde_json::from_str::<Refusal>(&text)
            .map(|r| r.error)
            .unwrap_or_else(|_| "the portal could not do that; try again in a moment".to_string());
        return Err(Error {
            status: Some(status),
            message,
        });
    }
}

/// Sends one request and reads its answer's text, whatever its status.
pub async fn fetch(
    method: &str,
    url: &str,
    body: Option<(JsValue, String)>,
) -> Result<(Response, String), Error> {
    let init = RequestInit::new();
    init.set_method(method);
    let kind = body.as_ref().map(|(_, kind)| kind.clone());
    if let Some((body, _)) = body {
        init.set_body(&body);
    }
    let request = Request::new_with_str_and_init(url, &init).map_err(describe)?;
    if let Some(kind) = kind {
        request
            .headers()
            .set("content-type", &kind)
            .map_err(describe)?;
    }
    let window = web_sys::window().ok_or_else(|| {
        Error::browser("the browser could not do that; reload the page and try again")
    })?;
    let response: Response = JsFuture::from(window.fetch_with_request(&request))
        .await
        .map_err(|_| {
            Error::browser("the portal cannot be reached; check the connection, then try again")
        })?
        .dyn_into()
        .map_err(describe)?;
    let text = JsFuture::from(response.text().map_err(describe)?)
        .await
        .map_err(describe)?
        .as_string()
        .unwrap_or_default();
    Ok((response, text))
}

/// A browser error: what the browser said goes to the console, the person gets a sentence.
fn describe(value: JsValue) -> Error {
    web_sys::console::warn_1(&value);
    Error::browser("the browser could not do that; reload the page and try again")
}
