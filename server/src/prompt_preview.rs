//! `portal prompt`: the exact request a model would receive for a message, so a person can see
//! what the model sees. Every decision is core's; this module reads the files and hands over.

use std::path::{Path, PathBuf};

use portal_core::effort::{Effort, winning_effort};
use portal_core::memory::CompactionHint;
use portal_core::model::{ModelCapabilities, Provider};
use portal_core::new_turn::{NewMessage, NewTurnError, open_turn};
use portal_core::prompt::{self, NoPictures, PromptConfig, PromptInput, anthropic, openai};
use portal_core::skills::{Composed, SkillDirectory, SkillError, resolve_selection};
use portal_core::tools::ToolDefinition;
use portal_core::{Transcript, TranscriptError, parse_transcript};
use serde::Deserialize;
use serde_json::Value;

/// The request body shape to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// OpenAI Chat Completions.
    Openai,
    /// Anthropic Messages.
    Anthropic,
}

/// An agent as `portal prompt` reads it from a TOML file (see docs/prompt.md).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentFile {
    /// The agent's name, for people.
    pub name: String,
    /// The author's instructions (layer 2).
    #[serde(default)]
    pub instructions: String,
    /// The agent's default effort; a message's own override wins (rule E1).
    #[serde(default = "medium")]
    pub effort: Effort,
    /// The model the agent calls.
    pub model: ModelCapabilities,
    /// The agent's own tools.
    #[serde(default)]
    pub tools: Vec<ToolDefinition>,
}

fn medium() -> Effort {
    Effort::Medium
}

/// What to preview.
#[derive(Debug, Clone)]
pub struct PreviewRequest {
    pub transcript: PathBuf,
    pub agent: PathBuf,
    pub message: String,
    /// Overrides the agent's effort for this message.
    pub effort: Option<Effort>,
    /// Defaults to the model's provider.
    pub format: Option<Format>,
}

/// A previewed request: the body, and the notes a person reading it should see.
#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    pub body: Value,
    /// What memory and assembly worked around, one sentence each.
    pub notes: Vec<String>,
}

/// Why there is no preview. Each says what was wrong and what to do.
#[derive(Debug, thiserror::Error)]
pub enum PreviewError {
    #[error("cannot read {}: {source}; check the path", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not a transcript Portal can use: {source}", .path.display())]
    Transcript {
        path: PathBuf,
        source: TranscriptError,
    },
    #[error("{} is not an agent file: {source}; see docs/prompt.md for its fields", .path.display())]
    Agent {
        path: PathBuf,
        source: toml::de::Error,
    },
    #[error(
        "`/compact` asks for a summary rather than sending a message; preview a message instead"
    )]
    Compact,
    #[error("{0}")]
    Skill(#[from] SkillError),
    #[error("the message cannot be sent: {0}")]
    NewTurn(#[from] NewTurnError),
}

/// Builds the request a model would receive if `request.message` were sent now.
pub fn preview(request: &PreviewRequest) -> Result<Preview, PreviewError> {
    let transcript = read_transcript(&request.transcript)?;
    let agent = read_agent(&request.agent)?;
    preview_with(transcript, &agent, request)
}

fn preview_with(
    mut transcript: Transcript,
    agent: &AgentFile,
    request: &PreviewRequest,
) -> Result<Preview, PreviewError> {
    let Composed::Message(selection) = portal_core::skills::parse_command(&request.message) else {
        return Err(PreviewError::Compact);
    };
    let selected_skills = resolve_selection(&NoSkills, LOCAL_ORGANISATION, &selection.slugs)?;
    let effort = winning_effort(agent.effort, request.effort);
    open_turn(
        &mut transcript,
        NewMessage {
            text: request.message.clone(),
            attachments: Vec::new(),
        },
        effort,
        &agent.model,
    )?;
    let config = PromptConfig::default();
    let assembled = prompt::assemble(
        &PromptInput {
            transcript: &transcript,
            compaction_hint: CompactionHint::Search,
            model: &agent.model,
            instructions: &agent.instructions,
            selected_skills: &selected_skills,
            catalogue: &[],
            agent_tools: &agent.tools,
            effort,
        },
        &config,
    );
    let format = request.format.unwrap_or(match agent.model.provider {
        Provider::OpenAi => Format::Openai,
        Provider::Anthropic => Format::Anthropic,
    });
    let body = match format {
        Format::Openai => openai::request(&assembled.prompt, &agent.model, &NoPictures),
        Format::Anthropic => {
            anthropic::request(&assembled.prompt, &agent.model, &config.effort, &NoPictures)
        }
    };
    let notes = assembled
        .diagnostics
        .iter()
        .map(ToString::to_string)
        .collect();
    Ok(Preview { body, notes })
}

/// The organisation of local mode, the only one `portal prompt` knows.
const LOCAL_ORGANISATION: &str = "local";

/// The skills `portal prompt` can select: none yet, so every `/slug` is refused as unavailable.
struct NoSkills;

impl SkillDirectory for NoSkills {
    fn by_slug(&self, _organisation: &str, _slug: &str) -> Option<portal_core::skills::Skill> {
        None
    }

    fn by_id(&self, _organisation: &str, _id: &str) -> Option<portal_core::skills::Skill> {
        None
    }
}

fn read(path: &Path) -> Result<String, PreviewError> {
    std::fs::read_to_string(path).map_err(|source| PreviewError::Read {
        path: path.to_path_buf(),
        source,
    })
}

fn read_transcript(path: &Path) -> Result<Transcript, PreviewError> {
    parse_transcript(&read(path)?).map_err(|source| PreviewError::Transcript {
        path: path.to_path_buf(),
        source,
    })
}

fn read_agent(path: &Path) -> Result<AgentFile, PreviewError> {
    toml::from_str(&read(path)?).map_err(|source| PreviewError::Agent {
        path: path.to_path_buf(),
        source,
    })
}
