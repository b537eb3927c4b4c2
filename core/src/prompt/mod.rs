//! The assembled prompt (rules L1–L3): six layers, provider-neutral, and its conversion into
//! provider request bodies.
//!
//! Layers 1–4 (portal floor, author instructions, selected skills, skill catalogue) make the
//! system text, each between `<layer number="n" name="…">` tags under one sentence stating that
//! later layers win ([`PRECEDENCE`]). Layers 5 and 6 (short-term memory, the new message) are the
//! message list, each [`Entry`] tagged with its [`Layer`]. [`openai::request`] and
//! [`anthropic::request`] turn a [`Prompt`] into request bodies; [`check_pairing`] checks a body
//! against its provider's pairing rules.

pub mod anthropic;
mod entry;
pub mod inspect;
mod layers;
pub mod openai;
mod pairing;
mod pictures;
mod render;

pub use entry::{Answer, Call, Entry, Layer, Part};
pub use layers::{DEFAULT_FLOOR, PRECEDENCE};
pub use pairing::{PairingError, check_pairing};
pub use pictures::{EncodedPicture, NoPictures, PictureSource};
pub use render::{render, render_entries};

use serde::{Deserialize, Serialize};

use crate::attachment::PictureRef;
use crate::effort::{Effort, EffortConfig, effort_parameter};
use crate::memory::{self, CompactionHint, MemoryConfig, ReplayedSummary};
use crate::model::ModelCapabilities;
use crate::skills::{CatalogueEntry, Skill};
use crate::tools::{self, ToolDefinition};
use crate::transcript::{Role, Transcript};

/// A prompt, ready to convert for any provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    /// Layers 1–4 that have content, in order.
    pub layers: Vec<SystemLayer>,
    /// Layers 5 and 6.
    pub entries: Vec<Entry>,
    /// The agent's tools, then the portal's own that the prompt refers to.
    pub tools: Vec<ToolDefinition>,
    /// The effort to send; `None` for a model that cannot reason (rule E3).
    pub effort: Option<Effort>,
}

/// One layer of the system text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SystemLayer {
    pub layer: Layer,
    pub text: String,
}

impl Prompt {
    /// The system text: layers 1–4, delimited and labelled, under the precedence sentence.
    pub fn system_text(&self) -> String {
        layers::system_text(&self.layers)
    }

    /// The pictures the prompt sends (memory already left out those it no longer shows, rule
    /// A8), in order, each at the size it is sent (rule A4).
    pub fn pictures(&self) -> impl Iterator<Item = &PictureRef> {
        self.entries
            .iter()
            .flat_map(|entry| &entry.parts)
            .filter_map(|part| match part {
                Part::Picture { picture } => Some(picture),
                _ => None,
            })
    }
}

/// What a prompt is assembled from.
#[derive(Debug, Clone, Copy)]
pub struct PromptInput<'a> {
    /// The conversation; its last turn, when running or paused, is the turn in progress.
    pub transcript: &'a Transcript,
    pub compaction_hint: CompactionHint,
    pub model: &'a ModelCapabilities,
    /// The agent author's instructions (layer 2).
    pub instructions: &'a str,
    /// The skills the message selected, resolved and checked (layer 3).
    pub selected_skills: &'a [Skill],
    /// The catalogue, selected skills already left out (layer 4).
    pub catalogue: &'a [CatalogueEntry],
    /// The agent's own tools.
    pub agent_tools: &'a [ToolDefinition],
    /// The effort recorded on the turn (rule E2).
    pub effort: Effort,
}

/// The prompt's configuration: the floor's text and the numbers of memory and effort.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptConfig {
    /// Layer 1.
    pub floor: String,
    pub memory: MemoryConfig,
    pub effort: EffortConfig,
}

impl Default for PromptConfig {
    fn default() -> Self {
        PromptConfig {
            floor: DEFAULT_FLOOR.to_string(),
            memory: MemoryConfig::default(),
            effort: EffortConfig::default(),
        }
    }
}

/// An assembled prompt and what assembling it found.
#[derive(Debug, Clone, PartialEq)]
pub struct Assembled {
    pub prompt: Prompt,
    /// The summary memory replays first, if any.
    pub summary: Option<ReplayedSummary>,
    /// The past turns memory replays, oldest first.
    pub turns: Vec<u32>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Something odd assembling worked around. Serialised like [`memory::Diagnostic`], tagged by
/// `kind` in camelCase, memory's own diagnostics as they are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Diagnostic {
    /// An agent tool has the name of one of the portal's own tools; the portal's is kept.
    #[error(
        "the agent's tool `{name}` has the name of one of the portal's own tools; the portal's is kept, rename the agent's"
    )]
    ToolNameTaken { name: String },
    #[error(transparent)]
    #[serde(untagged)]
    Memory(memory::Diagnostic),
}

/// Assembles the six layers for one model call (rule L1).
pub fn assemble(input: &PromptInput<'_>, config: &PromptConfig) -> Assembled {
    let memory = memory::rebuild(
        input.transcript,
        input.compaction_hint,
        input.model,
        &config.memory,
    );
    let mut diagnostics: Vec<Diagnostic> = memory
        .diagnostics
        .into_iter()
        .map(Diagnostic::Memory)
        .collect();

    let answers_in_memory = memory.summary.is_some()
        || memory
            .entries
            .iter()
            .any(|e| e.role == Role::Tool && e.layer == Layer::Memory);
    let mut portal = Vec::new();
    if answers_in_memory {
        portal.push(tools::read_tool_result());
    }
    if memory.has_documents {
        portal.push(tools::read_document());
        portal.push(tools::search_attachments());
    }
    if !input.catalogue.is_empty() {
        portal.push(tools::load_skill());
    }
    let mut tools: Vec<ToolDefinition> = Vec::new();
    for tool in input.agent_tools {
        if tools::is_portal_tool(&tool.name) {
            diagnostics.push(Diagnostic::ToolNameTaken {
                name: tool.name.clone(),
            });
        } else {
            tools.push(tool.clone());
        }
    }
    tools.extend(portal);

    Assembled {
        prompt: Prompt {
            layers: layers::system_layers(
                &config.floor,
                input.instructions,
                input.selected_skills,
                input.catalogue,
            ),
            entries: memory.entries,
            tools,
            effort: effort_parameter(input.effort, input.model),
        },
        summary: memory.summary,
        turns: memory.turns,
        diagnostics,
    }
}
