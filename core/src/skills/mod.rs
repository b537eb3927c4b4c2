//! Skills (rules S1–S7): selected with leading `/slug` tokens, resolved through the host's
//! directory with all-or-nothing checks, folded whole into layer 4; the agent's other skills make
//! the catalogue of layer 5, from which the model loads one with the `load_skill` tool.
//!
//! A skill's name is its slug: the common `SKILL.md` format names a skill in lowercase words
//! joined by hyphens, which is the slug syntax of rule S1.

mod command;
mod complete;
mod directory;
mod file;

pub use command::{Composed, RESERVED_SLUG, Selection, is_slug, parse_command, parse_selection};
pub use complete::{Completion, complete};
pub use directory::{
    LoadedSkill, SkillDirectory, SkillError, catalogue, load_skill, resolve_selection,
    resume_selection, selection_trace,
};
pub use file::{
    MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, SkillFile, SkillFileError, Visibility, parse_skill_file,
};

use serde::{Deserialize, Serialize};

/// A skill as the host's directory returns it for the caller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skill {
    pub id: String,
    /// The organisation the skill belongs to.
    pub organisation: String,
    /// The skill's name, which is its slug.
    pub name: String,
    /// One sentence on when the skill applies (the catalogue line).
    pub description: String,
    /// The skill's instructions: the markdown body of its `SKILL.md`.
    pub instructions: String,
    /// Whether the caller may see the skill.
    pub visible: bool,
    /// Whether the skill is active (published).
    pub active: bool,
}

/// A catalogue line: a skill the model may load, by name, and when it applies (rule S5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogueEntry {
    pub name: String,
    pub description: String,
}
