//! `portal prompt`: the exact request a model would receive for a message, so a person can see
//! what the model sees. Every decision is core's; this module reads the files and hands over.

use std::path::{Path, PathBuf};

use portal_core::effort::{Effort, winning_effort};
use portal_core::memory::CompactionHint;
use portal_core::model::Provider;
use portal_core::new_turn::{NewMessage, NewTurnError, open_turn};
use portal_core::prompt::{self, NoPictures, PromptConfig, PromptInput, anthropic, openai};
use portal_core::skills::{Composed, SkillError, catalogue, resolve_selection};
use portal_core::{Transcript, TranscriptError, parse_transcript};
use serde_json::Value;

use portal_identity::{Agent, Caller, ConfigError, Identity, LOCAL_USER, Mode};
use portal_model::{ModelRegistry, RegistryError};
use portal_tools::skills::{SkillLibrary, SkillsError};
use portal_tools::{AgentToolError, ToolRegistry};

/// The request body shape to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// OpenAI Chat Completions.
    Openai,
    /// Anthropic Messages.
    Anthropic,
}

/// What to preview.
#[derive(Debug, Clone)]
pub struct PreviewRequest {
    pub transcript: PathBuf,
    /// An agent file (`agents/<id>.toml`, docs/identity.md).
    pub agent: PathBuf,
    pub message: String,
    /// A file holding the instructions of the project the conversation is in (the prompt's
    /// layer 3, docs/projects.md); none without one.
    pub project_instructions: Option<PathBuf>,
    /// The configuration directory the agent's skills are read from; local mode without one.
    pub config: Option<PathBuf>,
    /// The models file; the demo model alone without one.
    pub models: Option<PathBuf>,
    /// Whose view of the skills to take, when the configuration has users.
    pub user: Option<String>,
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
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Skills(#[from] SkillsError),
    #[error(transparent)]
    Models(#[from] RegistryError),
    #[error(transparent)]
    Tools(#[from] AgentToolError),
    #[error(
        "{} is not an agent of the configuration in {}; give a file from one of its organisations/<id>/agents folders",
        .agent.display(), .config.display()
    )]
    AgentNotInConfig { agent: PathBuf, config: PathBuf },
    #[error(
        "the agent binds skills ({}), which live in a configuration directory; give it with --config",
        .0.join(", ")
    )]
    SkillsNeedConfig(Vec<String>),
    #[error(
        "the configuration has users, and skills depend on who asks; say whose view with --user ID"
    )]
    NoUser,
    #[error("organisation `{organisation}` has no user `{user}`; name one of its users")]
    UnknownUser { organisation: String, user: String },
    #[error(
        "the agent calls model `{name}`, which the models file does not list (it lists {}); give the models file with --models",
        .known.join(", ")
    )]
    UnknownModel { name: String, known: Vec<String> },
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
    let mut transcript = read_transcript(&request.transcript)?;
    let project_instructions = match &request.project_instructions {
        Some(path) => read(path)?,
        None => String::new(),
    };
    let identity = match &request.config {
        Some(dir) => Identity::load(dir)?,
        None => Identity::local(),
    };
    let agent = agent(&identity, request)?;
    let tools = ToolRegistry::standard();
    tools.check_agent(&agent)?;
    let caller = caller(&identity, &agent, request.user.as_deref())?;
    let library = SkillLibrary::load(&identity)?;
    let directory = library.directory(&caller);
    let models = match &request.models {
        Some(path) => ModelRegistry::load(path, 0.0)?,
        None => ModelRegistry::demo_only(0.0),
    };
    let model = models
        .get(&agent.model)
        .ok_or_else(|| PreviewError::UnknownModel {
            name: agent.model.clone(),
            known: models.models().map(|(name, _)| name.to_string()).collect(),
        })?
        .capabilities()
        .clone();

    let Composed::Message(selection) = portal_core::skills::parse_command(&request.message) else {
        return Err(PreviewError::Compact);
    };
    let organisation = &caller.organisation;
    let selected_skills = resolve_selection(&directory, organisation, &selection.slugs)?;
    let catalogue = catalogue(
        &directory,
        organisation,
        &library.bound_ids(&agent),
        &selected_skills,
    );
    let effort = winning_effort(agent.effort, request.effort);
    open_turn(
        &mut transcript,
        NewMessage {
            text: request.message.clone(),
            attachments: Vec::new(),
            again: None,
        },
        effort,
        &model,
    )?;
    let config = PromptConfig::default();
    let assembled = prompt::assemble(
        &PromptInput {
            transcript: &transcript,
            compaction_hint: CompactionHint::Search,
            model: &model,
            instructions: &agent.instructions,
            project_instructions: &project_instructions,
            selected_skills: &selected_skills,
            catalogue: &catalogue,
            agent_tools: &tools.for_agent(&agent).agent_tools(),
            effort,
        },
        &config,
    );
    let format = request.format.unwrap_or(match model.provider {
        Provider::OpenAi => Format::Openai,
        Provider::Anthropic => Format::Anthropic,
    });
    let body = match format {
        Format::Openai => openai::request(&assembled.prompt, &model, &NoPictures),
        Format::Anthropic => {
            anthropic::request(&assembled.prompt, &model, &config.effort, &NoPictures)
        }
    };
    let notes = assembled
        .diagnostics
        .iter()
        .map(ToString::to_string)
        .collect();
    Ok(Preview { body, notes })
}

/// The agent in `request.agent`: one of the configuration's, or a file of its own in local mode.
fn agent(identity: &Identity, request: &PreviewRequest) -> Result<Agent, PreviewError> {
    if let Some(config) = &request.config {
        return identity
            .agent_in_file(&request.agent)
            .cloned()
            .ok_or_else(|| PreviewError::AgentNotInConfig {
                agent: request.agent.clone(),
                config: config.clone(),
            });
    }
    let organisation = identity
        .organisations()
        .next()
        .map(|o| o.id.clone())
        .unwrap_or_default();
    let agent = Agent::from_file(&organisation, &request.agent)?;
    if !agent.skills.is_empty() {
        return Err(PreviewError::SkillsNeedConfig(agent.skills));
    }
    Ok(agent)
}

/// Who the preview is for: the named user of the agent's organisation, or the local user.
fn caller(identity: &Identity, agent: &Agent, user: Option<&str>) -> Result<Caller, PreviewError> {
    let organisation = agent.organisation.clone();
    match user {
        Some(user) => {
            let known = identity
                .organisation(&organisation)
                .is_some_and(|o| o.users.iter().any(|u| u.id == user));
            if !known {
                return Err(PreviewError::UnknownUser {
                    organisation,
                    user: user.to_string(),
                });
            }
            Ok(identity.caller(&organisation, user))
        }
        None if identity.mode() == Mode::Local => Ok(identity.caller(&organisation, LOCAL_USER)),
        None => Err(PreviewError::NoUser),
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
