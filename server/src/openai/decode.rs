//! A chat completion stream's bytes into [`ModelEvent`]s, with or without HTTP.

use std::collections::VecDeque;
use std::fmt::Display;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};

use super::chunk::ChunkReader;
use super::config::AnswerLimits;
use super::error::OpenAiError;
use super::sse::SseDecoder;
use crate::model::ModelEvent;

/// Decodes a chat completion stream's bytes, however they are split, into events.
#[derive(Debug)]
pub struct StreamDecoder {
    sse: SseDecoder,
    chunks: ChunkReader,
}

impl Default for StreamDecoder {
    fn default() -> Self {
        StreamDecoder::new()
    }
}

impl StreamDecoder {
    /// A decoder at the start of a stream, with the default caps.
    pub fn new() -> StreamDecoder {
        StreamDecoder::with_limits(&AnswerLimits::default())
    }

    /// A decoder at the start of a stream, refusing lines, calls and arguments over `limits`.
    pub fn with_limits(limits: &AnswerLimits) -> StreamDecoder {
        StreamDecoder {
            sse: SseDecoder::new(limits.max_line_bytes),
            chunks: ChunkReader::new(limits),
        }
    }

    /// Reads more bytes, appending the events they complete to `out`. After an error the stream
    /// is not to be read further; `out` holds the events before it.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<ModelEvent>) -> Result<(), OpenAiError> {
        let mut data = Vec::new();
        let pushed = self.sse.push(bytes, &mut data);
        self.read(data, out)?;
        pushed
    }

    /// Ends the stream. One that stopped before the model gave a finish reason or `[DONE]`, or
    /// inside an event, is [`OpenAiError::Truncated`].
    pub fn finish(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), OpenAiError> {
        let mut data = Vec::new();
        self.sse.finish(&mut data)?;
        // An event the stream ended inside is cut short, not malformed.
        self.read(data, out).map_err(|error| match error {
            OpenAiError::BadChunk { .. } => OpenAiError::Truncated,
            other => other,
        })?;
        if self.chunks.is_finished() {
            return Ok(());
        }
        if !self.chunks.has_finish_reason() {
            return Err(OpenAiError::Truncated);
        }
        self.chunks.finish(out)
    }

    /// Whether the answer has ended (`[DONE]` came); the rest of the bytes need not be read.
    pub fn is_finished(&self) -> bool {
        self.chunks.is_finished()
    }

    fn read(&mut self, data: Vec<String>, out: &mut Vec<ModelEvent>) -> Result<(), OpenAiError> {
        for data in data {
            self.chunks.data(&data, out)?;
        }
        Ok(())
    }
}

/// The events of a chat completion stream's bytes, under `limits`. The stream ends after
/// [`ModelEvent::Finished`] or after the first error; a transport error becomes
/// [`OpenAiError::Interrupted`].
pub fn events<S, E>(
    bytes: S,
    limits: &AnswerLimits,
) -> impl Stream<Item = Result<ModelEvent, OpenAiError>> + Send + use<S, E>
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: Display,
{
    let state = Reading {
        bytes: Box::pin(bytes),
        decoder: StreamDecoder::with_limits(limits),
        ready: VecDeque::new(),
        done: false,
    };
    futures_util::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(item) = state.ready.pop_front() {
                return Some((item, state));
            }
            if state.done {
                return None;
            }
            let mut out = Vec::new();
            let result = match state.bytes.next().await {
                Some(Ok(bytes)) => state.decoder.push(&bytes, &mut out),
                Some(Err(error)) => Err(OpenAiError::Interrupted {
                    reason: error.to_string(),
                }),
                None => {
                    state.done = true;
                    state.decoder.finish(&mut out)
                }
            };
            state.ready.extend(out.into_iter().map(Ok));
            if let Err(error) = result {
                state.ready.push_back(Err(error));
                state.done = true;
            }
            if state.decoder.is_finished() {
                state.done = true;
            }
        }
    })
}

struct Reading<S> {
    bytes: std::pin::Pin<Box<S>>,
    decoder: StreamDecoder,
    ready: VecDeque<Result<ModelEvent, OpenAiError>>,
    done: bool,
}
