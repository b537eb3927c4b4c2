//! Each model call of a turn as it was made, for the prompt inspector (docs/inspector.md): the
//! prompt core built, as JSON, and the request body the adapter sent, byte for byte. Each text
//! is kept up to [`MAX_KEPT_BYTES`]; past it only its size is kept.

use serde::Serialize;

use super::CallPurpose;

/// The most of a call's prompt, or of its request body, that is kept: 4 MiB. **Decision:** a
/// body carries its pictures in base64 (up to 1,600 tokens' worth each after reduction, rule
/// A4); 4 MiB keeps a call with a few pictures whole, and a larger one is kept by its size.
pub const MAX_KEPT_BYTES: usize = 4 << 20;

/// A call to keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCall {
    pub purpose: CallPurpose,
    pub model: String,
    pub prompt: KeptText,
    /// `None` for a model that sends no request (the demo).
    pub body: Option<KeptText>,
    /// What the prompt builder found, as JSON (`portal_core::prompt::inspect::DiagnosticView`s).
    pub diagnostics: String,
}

/// A kept call, numbered within its turn from 1 in the order the calls were made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordedCall {
    pub call: u32,
    pub purpose: CallPurpose,
    pub model: String,
    pub prompt: KeptText,
    pub body: Option<KeptText>,
    pub diagnostics: String,
    /// When it was kept, in milliseconds since the Unix epoch (the database's clock).
    pub recorded_at_ms: i64,
}

/// A text kept whole, or, past [`MAX_KEPT_BYTES`], only its size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeptText {
    pub text: Option<String>,
    pub bytes: u64,
}

impl KeptText {
    /// `text`, kept whole when it is within [`MAX_KEPT_BYTES`].
    pub fn bounded(text: String) -> KeptText {
        let bytes = text.len() as u64;
        KeptText {
            text: (text.len() <= MAX_KEPT_BYTES).then_some(text),
            bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_past_the_bound_keeps_only_its_size() {
        for (bytes, kept) in [
            (0, true),
            (MAX_KEPT_BYTES, true),
            (MAX_KEPT_BYTES + 1, false),
        ] {
            let text = KeptText::bounded("x".repeat(bytes));
            assert_eq!(text.bytes, bytes as u64);
            assert_eq!(text.text.is_some(), kept, "{bytes} bytes");
        }
    }
}
