//! What a run is made with, where it starts, and what it reads.

use std::collections::HashMap;
use std::sync::Arc;

use crate::Transcript;
use crate::compaction::CompactionConfig;
use crate::effort::Effort;
use crate::model::ModelCapabilities;
use crate::prompt::PromptConfig;
use crate::skills::{CatalogueEntry, Skill};
use crate::tools::ToolDefinition;
use crate::usage::Price;

/// What a run is made with: the turn, the agent's model, instructions, skills and tools, the
/// effort the turn recorded, and the numbers it keeps to.
#[derive(Debug, Clone)]
pub struct RunSetup {
    /// The turn's index in its conversation.
    pub turn: u32,
    pub model: ModelCapabilities,
    /// The model's price, which every usage row of the turn is priced at (rule C11).
    pub price: Option<Price>,
    /// Layer 2 of the prompt.
    pub instructions: String,
    /// Layer 3: the instructions of the conversation's project, empty outside a project.
    pub project_instructions: String,
    /// Layer 4: the skills the message selected.
    pub selected_skills: Vec<Skill>,
    /// Layer 5: the agent's other skills.
    pub catalogue: Vec<CatalogueEntry>,
    /// The tools the agent is offered.
    pub agent_tools: Vec<ToolDefinition>,
    pub effort: Effort,
    pub prompt: PromptConfig,
    pub compaction: CompactionConfig,
    pub limits: RunLimits,
}

/// The numbers one run keeps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunLimits {
    /// Model calls one run makes at most before the turn fails, saying the model made that many
    /// calls without answering. **Decision:** 16.
    pub model_calls: usize,
    /// How long one tool call may take, in milliseconds, before it is stopped and answered
    /// with an error the model reads. **Decision:** 120 s (docs/decisions.md).
    pub tool_ms: u64,
}

impl Default for RunLimits {
    fn default() -> Self {
        RunLimits {
            model_calls: crate::reply::MODEL_CALL_LIMIT,
            tool_ms: 120_000,
        }
    }
}

/// Where a run starts.
#[derive(Debug, Clone, PartialEq)]
pub enum Start {
    /// A turn just opened.
    Fresh,
    /// A paused turn, claimed running, whose approval requests were all decided (call id →
    /// approved).
    Decided(HashMap<String, bool>),
    /// A paused turn, claimed running, whose question the user answered with this text.
    Answered(String),
}

/// What to read from storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Load {
    /// Memory's part of the conversation (rule M1): its last `max_turns` turns and the newest
    /// compaction, with the running turn.
    Recent { max_turns: usize },
    /// The whole conversation, for planning a summary of its history.
    Whole,
}

/// What a load read.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    pub transcript: Arc<Transcript>,
    /// The turn that holds the newest compaction, when the load says (a recent load does).
    pub newest_compaction: Option<u32>,
}
