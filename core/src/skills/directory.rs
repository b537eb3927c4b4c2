//! Rules S2–S4 and S7: skills resolve through the host's directory, within the caller's
//! organisation, and must be visible to the caller and active. One rejected skill rejects the
//! whole request, with an error that reads the same whether the skill is unknown, invisible,
//! inactive or another organisation's.

use std::collections::HashSet;

use serde_json::Value;
use thiserror::Error;

use crate::transcript::TraceEntry;

use super::{CatalogueEntry, Skill};

/// The host's skill directory, made for one caller: it says whether that caller sees a skill.
pub trait SkillDirectory {
    /// The skill named `slug` in `organisation`, if one exists.
    fn by_slug(&self, organisation: &str, slug: &str) -> Option<Skill>;
    /// The skill with `id` in `organisation`, if one exists.
    fn by_id(&self, organisation: &str, id: &str) -> Option<Skill>;
}

/// Why skills were refused. Nothing should be recorded when one of these comes back.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SkillError {
    /// Rules S3, S7: the same words for unknown, invisible, inactive and foreign skills.
    #[error("{}", unavailable(.slugs))]
    Unavailable { slugs: Vec<String> },
    /// Rule S4: a skill the turn selected is no longer available, so the turn cannot resume.
    #[error(
        "this turn cannot resume: a skill it selected is no longer available to you; send a new message instead"
    )]
    ResumeRejected { skill_ids: Vec<String> },
    /// The `load_skill` call's arguments are not `{"name": "<skill name>"}`.
    #[error("load_skill takes {{\"name\": \"<skill name>\"}} with a name from the skill catalogue")]
    BadArguments,
}

fn unavailable(slugs: &[String]) -> String {
    let named: Vec<String> = slugs.iter().map(|s| format!("/{s}")).collect();
    let (subject, verb) = if named.len() == 1 {
        ("skill", "is")
    } else {
        ("skills", "are")
    };
    format!(
        "the {subject} {} {verb} not available: no published skill by that name is visible to you in your organisation; check the name or ask the agent's author",
        named.join(", ")
    )
}

/// Whether the directory's answer may be used by the caller in `organisation` (rules S2, S3).
fn accepted(skill: &Skill, organisation: &str) -> bool {
    skill.organisation == organisation && skill.visible && skill.active
}

/// Resolves a message's distinct slugs, all or nothing (rules S2, S3). The error names every
/// rejected slug, in order.
pub fn resolve_selection(
    directory: &dyn SkillDirectory,
    organisation: &str,
    slugs: &[String],
) -> Result<Vec<Skill>, SkillError> {
    let mut skills = Vec::new();
    let mut rejected = Vec::new();
    let mut seen = HashSet::new();
    for slug in slugs {
        if !seen.insert(slug.as_str()) {
            continue;
        }
        match directory
            .by_slug(organisation, slug)
            .filter(|s| s.name == *slug && accepted(s, organisation))
        {
            Some(skill) => skills.push(skill),
            None => rejected.push(slug.clone()),
        }
    }
    if rejected.is_empty() {
        Ok(skills)
    } else {
        Err(SkillError::Unavailable { slugs: rejected })
    }
}

/// The `SKILL_SELECT` trace entry an accepted selection records on its turn (rule S4); `None`
/// when nothing was selected.
pub fn selection_trace(skills: &[Skill]) -> Option<TraceEntry> {
    (!skills.is_empty()).then(|| TraceEntry::SkillSelect {
        skill_ids: skills.iter().map(|s| s.id.clone()).collect(),
    })
}

/// The skills a resumed turn selected, from its `SKILL_SELECT` entry, checked again (rule S4):
/// a skill made invisible or inactive since rejects the resume.
pub fn resume_selection(
    directory: &dyn SkillDirectory,
    organisation: &str,
    trace: &[TraceEntry],
) -> Result<Vec<Skill>, SkillError> {
    let Some(ids) = trace.iter().rev().find_map(|entry| match entry {
        TraceEntry::SkillSelect { skill_ids } => Some(skill_ids),
        _ => None,
    }) else {
        return Ok(Vec::new());
    };
    let mut skills = Vec::new();
    let mut rejected = Vec::new();
    for id in ids {
        match directory
            .by_id(organisation, id)
            .filter(|s| s.id == *id && accepted(s, organisation))
        {
            Some(skill) => skills.push(skill),
            None => rejected.push(id.clone()),
        }
    }
    if rejected.is_empty() {
        Ok(skills)
    } else {
        Err(SkillError::ResumeRejected {
            skill_ids: rejected,
        })
    }
}

/// The catalogue (rules S5, S6): the agent's bound skills the caller can see and that are
/// published, in binding order, each as its name and when it applies, without the selected
/// ones. The same inputs give the same list, so a resumed turn (its selection from
/// [`resume_selection`]) gets the list the turn started with.
pub fn catalogue(
    directory: &dyn SkillDirectory,
    organisation: &str,
    bound_skill_ids: &[String],
    selected: &[Skill],
) -> Vec<CatalogueEntry> {
    let mut seen: HashSet<&str> = selected.iter().map(|s| s.id.as_str()).collect();
    let mut entries = Vec::new();
    for id in bound_skill_ids {
        if !seen.insert(id.as_str()) {
            continue;
        }
        if let Some(skill) = directory
            .by_id(organisation, id)
            .filter(|s| s.id == *id && accepted(s, organisation))
        {
            entries.push(CatalogueEntry {
                name: skill.name,
                description: skill.description,
            });
        }
    }
    entries
}

/// A skill the model loaded, with the tool result that carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedSkill {
    pub skill: Skill,
    /// The `load_skill` result: the skill's instructions, labelled with its name.
    pub content: String,
}

/// Runs the `load_skill` tool (rule S7): the name must be in the catalogue and the skill pass
/// the same checks as a selection, with the same error.
pub fn load_skill(
    directory: &dyn SkillDirectory,
    organisation: &str,
    catalogue: &[CatalogueEntry],
    arguments: &Value,
) -> Result<LoadedSkill, SkillError> {
    let name = arguments
        .get("name")
        .and_then(Value::as_str)
        .ok_or(SkillError::BadArguments)?;
    let unavailable = || SkillError::Unavailable {
        slugs: vec![name.to_string()],
    };
    if !catalogue.iter().any(|entry| entry.name == name) {
        return Err(unavailable());
    }
    let mut skills = resolve_selection(directory, organisation, &[name.to_string()])
        .map_err(|_| unavailable())?;
    let skill = skills.pop().ok_or_else(unavailable)?;
    let content = format!(
        "<skill name=\"{}\">\n{}\n</skill>",
        crate::tag::attribute(&skill.name),
        skill.instructions.trim()
    );
    Ok(LoadedSkill { skill, content })
}
