//! An OpenAI-compatible model: OpenAI itself, and servers speaking its Chat Completions API
//! (vLLM, llama.cpp, Ollama, OpenRouter and the like).
//!
//! The request body is core's conversion of the prompt ([`portal_core::prompt::openai::request`])
//! with streaming and usage turned on, posted with `Authorization: Bearer <key>`. The answer
//! streams back as server-sent events whose chunks [`ChunkReader`] turns into [`ModelEvent`]s;
//! the call, its retries, timeouts and caps, and its errors are the [`endpoint`]'s.

mod chunk;
mod config;

pub use chunk::ChunkReader;
pub use config::OpenAiConfig;

use bytes::Bytes;
use futures_util::{Stream, TryStreamExt};
use portal_core::model::ModelCapabilities;
use portal_core::prompt::{PictureSource, Prompt, openai};
use serde_json::{Value, json};

use crate::endpoint::{self, AnswerLimits, Connection, EndpointError, EventStream};
use crate::{Model, ModelCall, ModelError, ModelEvent, ModelStream};

/// Decodes a chat completion stream's bytes, however they are split, into events.
pub type StreamDecoder = endpoint::Decoder<ChunkReader>;

/// The events of a chat completion stream's bytes, under `limits`. The stream ends after
/// [`ModelEvent::Finished`] or after the first error; a transport error becomes
/// [`EndpointError::Interrupted`].
pub fn events<S, E>(
    bytes: S,
    limits: &AnswerLimits,
) -> impl Stream<Item = Result<ModelEvent, EndpointError>> + Send + use<S, E>
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: std::fmt::Display,
{
    endpoint::events::<ChunkReader, S, E>(bytes, limits)
}

/// A model behind an OpenAI-compatible endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiModel {
    config: OpenAiConfig,
    label: String,
    connection: Connection,
}

impl OpenAiModel {
    /// Sets the model up, reading an API key named by an environment variable from the process's
    /// environment.
    pub fn new(config: OpenAiConfig) -> Result<OpenAiModel, EndpointError> {
        OpenAiModel::with_env(config, |var| std::env::var(var).ok())
    }

    /// Sets the model up, reading an API key named by an environment variable through `lookup`.
    pub fn with_env(
        config: OpenAiConfig,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<OpenAiModel, EndpointError> {
        let connection = Connection::new(
            config.endpoint.clone(),
            config.completions_url(),
            &[],
            |key| (reqwest::header::AUTHORIZATION, format!("Bearer {key}")),
            lookup,
        )?;
        Ok(OpenAiModel {
            label: config.model().to_string(),
            config,
            connection,
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

    /// Posts a request body built by [`OpenAiModel::request_body`] and streams the answer, with
    /// the endpoint's retries, timeouts and caps.
    pub fn send(&self, body: Value) -> EventStream {
        self.connection.post::<ChunkReader>(&body)
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

    /// The body is written once, and the bytes posted are the bytes returned.
    fn call(&self, prompt: &Prompt, pictures: &dyn PictureSource) -> ModelCall {
        let body = Bytes::from(self.request_body(prompt, pictures).to_string());
        let stream = self.connection.post_bytes::<ChunkReader>(body.clone());
        ModelCall {
            body: Some(body),
            stream: Box::pin(stream.map_err(ModelError::from)),
        }
    }
}
