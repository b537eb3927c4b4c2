//! The exact token counter the server plugs into core's [`TokenCounter`] (rule C1): the
//! byte-pair encodings of OpenAI's tokenizers, from tiktoken-rs.
//!
//! Core's [`portal_core::tokens::EstimateCounter`] stays the default where no tokenizer is known
//! (and in the browser); `tests/golden/tokens/estimate-error.txt` records how far it lands from
//! these counts on the test corpus.

use portal_core::tokens::TokenCounter;
use tiktoken_rs::CoreBPE;

/// A tokenizer by name, as a model's configuration names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// GPT-4o, GPT-4.1, o-series and later.
    O200k,
    /// GPT-4 and GPT-3.5.
    Cl100k,
}

impl Encoding {
    /// The encoding a models file names: `o200k_base` or `cl100k_base`.
    pub fn named(name: &str) -> Option<Encoding> {
        match name {
            "o200k_base" => Some(Encoding::O200k),
            "cl100k_base" => Some(Encoding::Cl100k),
            _ => None,
        }
    }

    /// The encoding a model of this name uses; `O200k` for names tiktoken does not know, since an
    /// OpenAI-compatible endpoint most often serves a recent model.
    pub fn for_model(model: &str) -> Encoding {
        match tiktoken_rs::tokenizer::get_tokenizer(model) {
            Some(tiktoken_rs::tokenizer::Tokenizer::Cl100kBase) => Encoding::Cl100k,
            _ => Encoding::O200k,
        }
    }
}

/// Counts tokens exactly, as the encoding splits them. Building one decodes the encoding's
/// tables once (tens of milliseconds); the counter is then shared by every call.
pub struct BpeCounter {
    encoding: Encoding,
    bpe: &'static CoreBPE,
}

impl BpeCounter {
    pub fn new(encoding: Encoding) -> BpeCounter {
        let bpe = match encoding {
            Encoding::O200k => tiktoken_rs::o200k_base_singleton(),
            Encoding::Cl100k => tiktoken_rs::cl100k_base_singleton(),
        };
        BpeCounter { encoding, bpe }
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }
}

impl std::fmt::Debug for BpeCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BpeCounter")
            .field("encoding", &self.encoding)
            .finish_non_exhaustive()
    }
}

impl TokenCounter for BpeCounter {
    fn count(&self, text: &str) -> usize {
        // Text in a conversation is never a control sequence: `<|endoftext|>` typed by a user is
        // counted as the characters it is.
        self.bpe.encode_ordinary(text).len()
    }
}
