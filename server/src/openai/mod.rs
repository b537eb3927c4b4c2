//! An OpenAI-compatible model: OpenAI itself, and servers speaking its Chat Completions API
//! (vLLM, llama.cpp, Ollama, OpenRouter and the like).
//!
//! The request body is core's conversion of the prompt ([`portal_core::prompt::openai::request`])
//! with streaming and usage turned on. The answer streams back as server-sent events that
//! [`events`] turns into [`ModelEvent`]s; a failing answer becomes an [`OpenAiError`], every
//! context overflow as [`OpenAiError::ContextOverflow`].

mod chunk;
mod config;
mod decode;
mod error;
mod sse;

pub use crate::model::{BadArguments, FinishReason, ModelEvent, parse_arguments};
pub use config::{ApiKey, ConfigError, DEFAULT_CONNECT_TIMEOUT_SECONDS, OpenAiConfig};
pub use decode::{StreamDecoder, events};
pub use error::{OpenAiError, classify, classify_stream_error};

use std::pin::Pin;

use futures_util::{Stream, TryFutureExt, TryStreamExt};
use portal_core::model::ModelCapabilities;
use portal_core::prompt::{PictureSource, Prompt, openai};
use serde_json::{Value, json};

use crate::model::{Model, ModelError, ModelStream};

/// A model's answer as it streams.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<ModelEvent, OpenAiError>> + Send>>;

/// A model behind an OpenAI-compatible endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiModel {
    config: OpenAiConfig,
    label: String,
    key: Option<Key>,
    client: reqwest::Client,
}

impl OpenAiModel {
    /// Sets the model up, reading an API key named by an environment variable from the process's
    /// environment.
    pub fn new(config: OpenAiConfig) -> Result<OpenAiModel, OpenAiError> {
        OpenAiModel::with_env(config, |var| std::env::var(var).ok())
    }

    /// Sets the model up, reading an API key named by an environment variable through `lookup`.
    pub fn with_env(
        config: OpenAiConfig,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<OpenAiModel, OpenAiError> {
        let key = config.api_key.resolve(lookup)?.map(Key);
        let client = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .build()
            .map_err(|e| OpenAiError::Request {
                url: config.completions_url(),
                reason: reason(&e),
            })?;
        Ok(OpenAiModel {
            label: config.model().to_string(),
            config,
            key,
            client,
        })
    }

    /// The model with the name shown to people set to `label` (the model's name by default).
    pub fn with_label(mut self, label: String) -> OpenAiModel {
        self.label = label;
        self
    }

    /// What the model can do.
    pub fn capabilities(&self) -> &ModelCapabilities {
        &self.config.capabilities
    }

    /// The request body for `prompt`: core's conversion, streamed with usage. It carries
    /// `reasoning_effort` only when the model can reason (rule E3).
    pub fn request_body(&self, prompt: &Prompt, pictures: &dyn PictureSource) -> Value {
        let mut body = openai::request(prompt, &self.config.capabilities, pictures);
        if let Value::Object(fields) = &mut body {
            fields.insert("stream".into(), json!(true));
            fields.insert("stream_options".into(), json!({"include_usage": true}));
        }
        body
    }

    /// Calls the model with `prompt`. The pictures are encoded now; the call runs as the stream
    /// is read, and a refused call is the stream's one item.
    pub fn stream(&self, prompt: &Prompt, pictures: &dyn PictureSource) -> EventStream {
        self.send(self.request_body(prompt, pictures))
    }

    /// Posts a request body built by [`OpenAiModel::request_body`] and streams the answer.
    pub fn send(&self, body: Value) -> EventStream {
        let url = self.config.completions_url();
        let mut request = self.client.post(&url).json(&body);
        if let Some(Key(key)) = &self.key {
            request = request.bearer_auth(key);
        }
        Box::pin(open(request, url).try_flatten_stream())
    }
}

impl Model for OpenAiModel {
    fn label(&self) -> &str {
        &self.label
    }

    fn capabilities(&self) -> &ModelCapabilities {
        &self.config.capabilities
    }

    fn stream(&self, prompt: &Prompt, pictures: &dyn PictureSource) -> ModelStream {
        Box::pin(OpenAiModel::stream(self, prompt, pictures).map_err(ModelError::from))
    }
}

/// Sends the request and checks the answer's head; the body is then read as a stream.
async fn open(
    request: reqwest::RequestBuilder,
    url: String,
) -> Result<impl Stream<Item = Result<ModelEvent, OpenAiError>> + Send, OpenAiError> {
    let response = request.send().await.map_err(|e| {
        if e.is_connect() || e.is_timeout() {
            OpenAiError::Unreachable {
                url: url.clone(),
                reason: reason(&e),
            }
        } else {
            OpenAiError::Request {
                url: url.clone(),
                reason: reason(&e),
            }
        }
    })?;
    let status = response.status();
    if !status.is_success() {
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        let body = response.text().await.unwrap_or_default();
        return Err(match classify(status.as_u16(), &body) {
            OpenAiError::RateLimited { message, .. } => OpenAiError::RateLimited {
                message,
                retry_after_seconds: retry_after,
            },
            other => other,
        });
    }
    let is_json = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if is_json {
        // A server that ignores `stream: true`, or reports an error with a success status.
        let body = response.text().await.unwrap_or_default();
        return Err(match serde_json::from_str::<Value>(&body) {
            Ok(value) if value.get("error").is_some() => classify_stream_error(&value["error"]),
            _ => OpenAiError::BadChunk {
                reason: "the endpoint answered with one JSON body, not a stream".into(),
                start: error::quote(&body),
            },
        });
    }
    Ok(events(response.bytes_stream().map_err(|e| reason(&e))))
}

/// An error and its causes, which hold the useful part ("Connection refused").
fn reason(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// An API key, kept out of debug output.
#[derive(Clone)]
struct Key(String);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(…)")
    }
}
