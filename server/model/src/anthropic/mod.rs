//! A model behind Anthropic's Messages API.
//!
//! The request body is core's conversion of the prompt with prompt-caching marks
//! ([`portal_core::prompt::anthropic::cached_request`]): the effort as the thinking budget for a
//! model that can reason (rule E3), pictures as base64 `image` blocks. It is posted with
//! streaming on, the key as `x-api-key` and `anthropic-version: 2023-06-01`. The answer streams
//! back as server-sent events that [`MessageReader`] turns into [`ModelEvent`]s; the call, its
//! retries, timeouts and caps, and its errors are the [`endpoint`]'s, as for the
//! OpenAI-compatible adapter.

mod config;
mod event;

pub use config::{AnthropicConfig, DEFAULT_BASE_URL};
pub use event::{MessageReader, REDACTED_THINKING};

use bytes::Bytes;
use futures_util::TryStreamExt;
use portal_core::model::ModelCapabilities;
use portal_core::prompt::{PictureSource, Prompt, anthropic};
use reqwest::header::HeaderName;
use serde_json::{Value, json};

use crate::endpoint::{self, Connection, EndpointError, EventStream};
use crate::{Model, ModelCall, ModelError, ModelStream};

/// The version of the Messages API the adapter speaks, sent as `anthropic-version`.
pub const API_VERSION: &str = "2023-06-01";

/// Decodes a Messages stream's bytes, however they are split, into events.
pub type StreamDecoder = endpoint::Decoder<MessageReader>;

/// A model behind Anthropic's Messages API.
#[derive(Debug, Clone)]
pub struct AnthropicModel {
    config: AnthropicConfig,
    label: String,
    connection: Connection,
}

impl AnthropicModel {
    /// Sets the model up, reading an API key named by an environment variable from the process's
    /// environment.
    pub fn new(config: AnthropicConfig) -> Result<AnthropicModel, EndpointError> {
        AnthropicModel::with_env(config, |var| std::env::var(var).ok())
    }

    /// Sets the model up, reading an API key named by an environment variable through `lookup`.
    pub fn with_env(
        config: AnthropicConfig,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<AnthropicModel, EndpointError> {
        let connection = Connection::new(
            config.endpoint.clone(),
            config.messages_url(),
            &[(HeaderName::from_static("anthropic-version"), API_VERSION)],
            |key| (HeaderName::from_static("x-api-key"), key.to_string()),
            lookup,
        )?;
        Ok(AnthropicModel {
            label: config.model().to_string(),
            config,
            connection,
        })
    }

    /// The model with the name shown to people set to `label` (the model's name by default).
    pub fn with_label(mut self, label: String) -> AnthropicModel {
        self.label = label;
        self
    }

    /// The request body for `prompt`: core's conversion with prompt-caching marks, streamed. It
    /// carries a thinking budget only when the model can reason (rule E3).
    pub fn request_body(&self, prompt: &Prompt, pictures: &dyn PictureSource) -> Value {
        let mut body = anthropic::cached_request(
            prompt,
            &self.config.capabilities,
            &self.config.thinking_budget,
            pictures,
        );
        if let Value::Object(fields) = &mut body {
            fields.insert("stream".into(), json!(true));
        }
        body
    }

    /// Calls the model with `prompt`. The pictures are encoded now; the call runs as the stream
    /// is read, and a refused call is the stream's one item.
    pub fn stream(&self, prompt: &Prompt, pictures: &dyn PictureSource) -> EventStream {
        self.send(self.request_body(prompt, pictures))
    }

    /// Posts a request body built by [`AnthropicModel::request_body`] and streams the answer,
    /// with the endpoint's retries, timeouts and caps.
    pub fn send(&self, body: Value) -> EventStream {
        self.connection.post::<MessageReader>(&body)
    }
}

impl Model for AnthropicModel {
    fn label(&self) -> &str {
        &self.label
    }

    fn capabilities(&self) -> &ModelCapabilities {
        &self.config.capabilities
    }

    fn stream(&self, prompt: &Prompt, pictures: &dyn PictureSource) -> ModelStream {
        Box::pin(AnthropicModel::stream(self, prompt, pictures).map_err(ModelError::from))
    }

    /// The body is written once, and the bytes posted are the bytes returned.
    fn call(&self, prompt: &Prompt, pictures: &dyn PictureSource) -> ModelCall {
        let body = Bytes::from(self.request_body(prompt, pictures).to_string());
        let stream = self.connection.post_bytes::<MessageReader>(body.clone());
        ModelCall {
            body: Some(body),
            stream: Box::pin(stream.map_err(ModelError::from)),
        }
    }
}
