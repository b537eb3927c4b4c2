//! The provider-neutral prompt: layers 1–5 as the system text, layers 6 and 7 as entries, the
//! tools and the effort. Assembling builds one for a turn's model call, a compaction's summary
//! call is one, and each provider's request is converted from one.

use serde::{Deserialize, Serialize};

use crate::attachment::PictureRef;
use crate::effort::level::Effort;
use crate::tools::ToolDefinition;

use super::entry::{Entry, Part};
use super::layers::{self, SystemLayer};

/// A prompt, ready to convert for any provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    /// Layers 1–5 that have content, in order.
    pub layers: Vec<SystemLayer>,
    /// Layers 6 and 7.
    pub entries: Vec<Entry>,
    /// The agent's tools, then the portal's own that the prompt refers to.
    pub tools: Vec<ToolDefinition>,
    /// The effort to send; `None` for a model that cannot reason (rule E3).
    pub effort: Option<Effort>,
}

impl Prompt {
    /// The system text: layers 1–5, delimited and labelled, under the precedence sentence.
    pub fn system_text(&self) -> String {
        layers::system_text(&self.layers)
    }

    /// The pictures the prompt sends, attached and from tools (memory already left out those it
    /// no longer shows, rule A8), in order, each at the size it is sent (rule A4).
    pub fn pictures(&self) -> impl Iterator<Item = &PictureRef> {
        self.entries
            .iter()
            .flat_map(|entry| &entry.parts)
            .flat_map(|part| match part {
                Part::Picture { picture } => std::slice::from_ref(picture),
                Part::Answer(answer) => answer.pictures.as_slice(),
                Part::Text { .. } | Part::Call(_) => &[],
            })
    }
}
