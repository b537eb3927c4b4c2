//! Portal's own export: `{"portal": "conversation", "title", "agent", "project", "pinned",
//! "transcript"}`, a list of those, or a bare transcript (what `GET /api/conversations/{id}`
//! answers); and an archive's `projects.json`, a list of `{"name", "instructions", "agent",
//! "created"}`.

use portal_core::block::Block;
use portal_core::title::one_line_name;
use portal_core::transcript::{Transcript, TurnStatus};
use serde::{Deserialize, Serialize};

use super::{
    ImportError, Imported, ImportedProject, Source, clean_text, clean_title, each_conversation,
};

/// The `portal` field of an exported conversation.
pub const EXPORT_KIND: &str = "conversation";

/// One conversation as Portal exports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exported {
    /// Always [`EXPORT_KIND`].
    pub portal: String,
    pub title: String,
    /// The agent it talked to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The name of the project it is in; `None` (null) for none, and in an export made before
    /// projects.
    #[serde(default)]
    pub project: Option<String>,
    /// Whether its owner pinned it.
    #[serde(default)]
    pub pinned: bool,
    pub transcript: Transcript,
}

impl Exported {
    /// `transcript` titled `title`, talking to `agent`, in no project and not pinned, as
    /// exported.
    pub fn new(title: &str, agent: &str, transcript: Transcript) -> Self {
        Exported {
            portal: EXPORT_KIND.to_string(),
            title: title.to_string(),
            agent: Some(agent.to_string()),
            project: None,
            pinned: false,
            transcript,
        }
    }

    /// The same, in the project named `project` (or in none), pinned or not.
    pub fn placed(self, project: Option<String>, pinned: bool) -> Self {
        Exported {
            project,
            pinned,
            ..self
        }
    }
}

/// One of a person's projects as Portal's archive keeps it, in `projects.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportedProject {
    pub name: String,
    #[serde(default)]
    pub instructions: String,
    /// The agent a conversation opened in it talks to when none is asked for; `None` (null):
    /// the organisation's first.
    #[serde(default)]
    pub agent: Option<String>,
    /// When it was made, in milliseconds since the Unix epoch; only for the reader, since an
    /// import makes its projects anew.
    #[serde(default)]
    pub created: i64,
}

/// Reads an archive's `projects.json`: a list of [`ExportedProject`], names cleaned as a
/// project's name is and instructions without NUL characters.
pub(super) fn read_projects(json: &str) -> Result<Vec<ImportedProject>, ImportError> {
    let projects: Vec<ExportedProject> =
        serde_json::from_str(json).map_err(|e| ImportError::Projects(e.to_string()))?;
    Ok(projects
        .into_iter()
        .map(|project| ImportedProject {
            name: one_line_name(&project.name),
            instructions: clean_text(&project.instructions),
            agent: project.agent,
        })
        .collect())
}

pub(super) fn read(value: serde_json::Value) -> Result<Vec<Imported>, ImportError> {
    each_conversation(value, Source::Portal, conversation)
}

fn conversation(item: serde_json::Value) -> Result<Imported, String> {
    let exported = if item.get("portal").is_some() {
        let exported: Exported = serde_json::from_value(item).map_err(|e| e.to_string())?;
        if exported.portal != EXPORT_KIND {
            return Err(format!(
                "its `portal` is `{}`, where an exported conversation has `{EXPORT_KIND}`",
                exported.portal
            ));
        }
        exported
    } else {
        let transcript: Transcript = serde_json::from_value(item).map_err(|e| e.to_string())?;
        Exported {
            agent: None,
            ..Exported::new("", "", transcript)
        }
    };
    let Exported {
        title,
        agent,
        project,
        pinned,
        mut transcript,
        ..
    } = exported;
    let mut notes = Vec::new();
    for turn in &mut transcript.turns {
        if turn.status.is_open() {
            notes.push(format!(
                "Turn {} was {} when it was exported; it is imported as stopped.",
                turn.index,
                turn.status.in_words()
            ));
            turn.status = TurnStatus::CutOff;
        }
    }
    Ok(Imported {
        title: clean_title(&title),
        agent,
        project: project.as_deref().map(one_line_name),
        pinned,
        transcript,
        notes,
    })
}

/// The ids of the attachments `transcript` uses: its user messages' and its tools' pictures.
pub fn attachments_used(transcript: &Transcript) -> Vec<String> {
    let mut ids = Vec::new();
    for message in transcript.turns.iter().flat_map(|t| &t.messages) {
        ids.extend(message.attachments.iter().map(|a| a.id().to_string()));
        for block in &message.blocks {
            if let Block::ToolResult { pictures, .. } = block {
                ids.extend(pictures.iter().map(|p| p.attachment_id.clone()));
            }
        }
    }
    ids.sort();
    ids.dedup();
    ids
}

/// Leaves out of `imported` the attachments `keep` refuses (an export names attachments by id,
/// and only the importer's own may be used again) and its tools' pictures (a tool's picture is
/// kept with the conversation it was made in), with a note for each.
pub fn leave_out_attachments(imported: &mut Imported, keep: impl Fn(&str) -> bool) {
    let mut notes = Vec::new();
    for turn in &mut imported.transcript.turns {
        let mut pictures_left = 0;
        for message in &mut turn.messages {
            message.attachments.retain(|attachment| {
                let kept = keep(attachment.id());
                if !kept {
                    notes.push(format!(
                        "Turn {}'s attachment {} was left out: its file is not yours in this portal.",
                        turn.index,
                        attachment.filename()
                    ));
                }
                kept
            });
            for block in &mut message.blocks {
                if let Block::ToolResult { pictures, .. } = block {
                    pictures_left += pictures.len();
                    pictures.clear();
                }
            }
        }
        if pictures_left > 0 {
            notes.push(format!(
                "Turn {}: {pictures_left} picture(s) a tool answered with were left out: a tool's picture stays with the conversation it was made in.",
                turn.index
            ));
        }
    }
    imported.notes.extend(notes);
}
