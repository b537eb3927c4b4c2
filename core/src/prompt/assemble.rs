//! Assembling the seven layers for one model call (rule L1): layers 1–5 from the floor, the
//! author's instructions, the project's and the skills, layers 6 and 7 from short-term memory,
//! then the agent's tools with the portal's own that the prompt refers to, and the effort the
//! model takes.

use serde::Serialize;

use crate::effort::{Effort, EffortConfig, effort_parameter};
use crate::memory::{self, CompactionHint, MemoryConfig, ReplayedSummary};
use crate::model::ModelCapabilities;
use crate::skills::{CatalogueEntry, Skill};
use crate::tools::{self, LOAD_SKILL, ToolDefinition};
use crate::transcript::{Role, Transcript};

use super::entry::Layer;
use super::layers::{DEFAULT_FLOOR, SystemLayer};
use super::neutral::Prompt;

/// What a prompt is assembled from.
#[derive(Debug, Clone, Copy)]
pub struct PromptInput<'a> {
    /// The conversation; its last turn, when running or paused, is the turn in progress.
    pub transcript: &'a Transcript,
    pub compaction_hint: CompactionHint,
    pub model: &'a ModelCapabilities,
    /// The agent author's instructions (layer 2).
    pub instructions: &'a str,
    /// The instructions of the conversation's project, empty outside a project (layer 3).
    pub project_instructions: &'a str,
    /// The skills the message selected, resolved and checked (layer 4).
    pub selected_skills: &'a [Skill],
    /// The catalogue, selected skills already left out (layer 5).
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

/// Assembles the seven layers for one model call (rule L1).
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
            layers: system_layers(
                &config.floor,
                input.instructions,
                input.project_instructions,
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

/// The layers 1–5 that have content, in order. The floor is always there.
fn system_layers(
    floor: &str,
    instructions: &str,
    project: &str,
    selected: &[Skill],
    catalogue: &[CatalogueEntry],
) -> Vec<SystemLayer> {
    let mut layers = vec![SystemLayer {
        layer: Layer::Floor,
        text: floor.trim().to_string(),
    }];
    for (layer, text) in [
        (Layer::Instructions, instructions),
        (Layer::Project, project),
    ] {
        if !text.trim().is_empty() {
            layers.push(SystemLayer {
                layer,
                text: text.trim().to_string(),
            });
        }
    }
    if !selected.is_empty() {
        let skills: Vec<String> = selected
            .iter()
            .map(|skill| {
                format!(
                    "<skill name=\"{}\">\n{}\n</skill>",
                    crate::tag::attribute(&skill.name),
                    skill.instructions.trim()
                )
            })
            .collect();
        layers.push(SystemLayer {
            layer: Layer::Skills,
            text: format!(
                "The user selected these skills for this message; follow them.\n\n{}",
                skills.join("\n\n")
            ),
        });
    }
    if !catalogue.is_empty() {
        let mut text = format!(
            "Skills you can load with {LOAD_SKILL} by name when one applies to the task:\n"
        );
        for entry in catalogue {
            text.push_str(&format!(
                "- {}: {}\n",
                entry.name,
                one_line(&entry.description)
            ));
        }
        layers.push(SystemLayer {
            layer: Layer::Catalogue,
            text: text.trim_end().to_string(),
        });
    }
    layers
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
