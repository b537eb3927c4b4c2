//! A streamed answer's bytes into [`ModelEvent`]s, with or without HTTP: server-sent events
//! ([`SseDecoder`]) whose data an adapter's [`AnswerReader`] reads. The reply cap is kept here,
//! for both adapters: the characters of text and thinking the reader passes on are counted, and
//! the delta that would pass the cap ends the answer instead.

use std::collections::VecDeque;
use std::fmt::Display;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};

use super::config::AnswerLimits;
use super::error::EndpointError;
use super::sse::SseDecoder;
use crate::ModelEvent;

/// How an adapter reads its wire format: the data of each server-sent event into events.
pub trait AnswerReader: Send + 'static {
    /// A reader at the start of an answer, refusing calls and arguments over `limits`.
    fn new(limits: &AnswerLimits) -> Self;

    /// Reads one event's data, appending the events it completes to `out`.
    fn data(&mut self, data: &str, out: &mut Vec<ModelEvent>) -> Result<(), EndpointError>;

    /// Ends the answer when its stream ends: an answer the model had not finished is
    /// [`EndpointError::Truncated`].
    fn end(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), EndpointError>;

    /// Whether the answer has ended; the rest of the bytes need not be read.
    fn is_finished(&self) -> bool;
}

/// Decodes a streamed answer's bytes, however they are split, into events.
#[derive(Debug)]
pub struct Decoder<R> {
    sse: SseDecoder,
    reader: R,
    /// The most characters of text and thinking the answer may hold.
    max_reply_chars: usize,
    /// The characters of text and thinking read so far.
    reply_chars: usize,
}

impl<R: AnswerReader> Default for Decoder<R> {
    fn default() -> Self {
        Decoder::new()
    }
}

impl<R: AnswerReader> Decoder<R> {
    /// A decoder at the start of a stream, with the default caps for a model whose output
    /// limit is the largest there is (`u32::MAX` tokens).
    pub fn new() -> Decoder<R> {
        Decoder::with_limits(&AnswerLimits::for_output_tokens(u32::MAX))
    }

    /// A decoder at the start of a stream, refusing lines, calls, arguments and replies over
    /// `limits`.
    pub fn with_limits(limits: &AnswerLimits) -> Decoder<R> {
        Decoder {
            sse: SseDecoder::new(limits.max_line_bytes),
            reader: R::new(limits),
            max_reply_chars: limits.max_reply_chars,
            reply_chars: 0,
        }
    }

    /// Reads more bytes, appending the events they complete to `out`. After an error the stream
    /// is not to be read further; `out` holds the events before it.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<ModelEvent>) -> Result<(), EndpointError> {
        let mut data = Vec::new();
        let pushed = self.sse.push(bytes, &mut data);
        self.read(data, out)?;
        pushed
    }

    /// Ends the stream. One that stopped before the model finished, or inside an event, is
    /// [`EndpointError::Truncated`].
    pub fn finish(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), EndpointError> {
        let mut data = Vec::new();
        self.sse.finish(&mut data)?;
        // An event the stream ended inside is cut short, not malformed.
        self.read(data, out).map_err(|error| match error {
            EndpointError::BadChunk { .. } => EndpointError::Truncated,
            other => other,
        })?;
        self.reader.end(out)
    }

    /// Whether the answer has ended; the rest of the bytes need not be read.
    pub fn is_finished(&self) -> bool {
        self.reader.is_finished()
    }

    fn read(&mut self, data: Vec<String>, out: &mut Vec<ModelEvent>) -> Result<(), EndpointError> {
        for data in data {
            if self.reader.is_finished() {
                break;
            }
            let from = out.len();
            self.reader.data(&data, out)?;
            self.count(out, from)?;
        }
        Ok(())
    }

    /// Counts the text and thinking of the events from `from` on; the first that passes the
    /// reply cap is dropped with the events after it, and the answer fails.
    fn count(&mut self, out: &mut Vec<ModelEvent>, from: usize) -> Result<(), EndpointError> {
        for at in from..out.len() {
            let (ModelEvent::TextDelta(text) | ModelEvent::ThinkingDelta(text)) = &out[at] else {
                continue;
            };
            self.reply_chars = self.reply_chars.saturating_add(text.chars().count());
            if self.reply_chars > self.max_reply_chars {
                out.truncate(at);
                return Err(EndpointError::ReplyTooLong {
                    max: self.max_reply_chars,
                });
            }
        }
        Ok(())
    }
}

/// The events of a streamed answer's bytes, read by `R` under `limits`. The stream ends after
/// [`ModelEvent::Finished`] or after the first error; a transport error becomes
/// [`EndpointError::Interrupted`].
pub fn events<R, S, E>(
    bytes: S,
    limits: &AnswerLimits,
) -> impl Stream<Item = Result<ModelEvent, EndpointError>> + Send + use<R, S, E>
where
    R: AnswerReader,
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: Display,
{
    let state = Reading {
        bytes: Box::pin(bytes),
        decoder: Decoder::<R>::with_limits(limits),
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
                Some(Err(error)) => Err(EndpointError::Interrupted {
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

struct Reading<S, R> {
    bytes: std::pin::Pin<Box<S>>,
    decoder: Decoder<R>,
    ready: VecDeque<Result<ModelEvent, EndpointError>>,
    done: bool,
}
