//! The skills of one turn: what a new message selects (rules S1–S3), or what a resumed turn
//! selected (S4), and the catalogue that goes with it (S5, S6).

use portal_core::TraceEntry;
use portal_core::skills::{
    CatalogueEntry, Composed, Skill, SkillError, catalogue, parse_command, resolve_selection,
    resume_selection, selection_trace,
};

use super::SkillLibrary;
use portal_identity::{Agent, Caller};

/// The skills a turn runs with: layer 4 and layer 5 of its prompt, and the trace entry an
/// accepted selection records (rule S4).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TurnSkills {
    pub selected: Vec<Skill>,
    pub catalogue: Vec<CatalogueEntry>,
    /// `SKILL_SELECT` with the selected ids; `None` when nothing was selected.
    pub trace: Option<TraceEntry>,
}

impl SkillLibrary {
    /// The skills a new message's leading `/slug` tokens select, all or nothing (S1–S3), and
    /// the agent's catalogue without them (S5, S6). Call it before recording anything: an error
    /// means the message is refused as a whole. A `/compact` message selects nothing.
    pub fn for_message(
        &self,
        caller: &Caller,
        agent: &Agent,
        text: &str,
    ) -> Result<TurnSkills, SkillError> {
        let slugs = match parse_command(text) {
            Composed::Message(selection) => selection.slugs,
            Composed::Compact(_) => Vec::new(),
        };
        let directory = self.directory(caller);
        let selected = resolve_selection(&directory, &caller.organisation, &slugs)?;
        Ok(TurnSkills {
            catalogue: catalogue(
                &directory,
                &caller.organisation,
                &self.bound_ids(agent),
                &selected,
            ),
            trace: selection_trace(&selected),
            selected,
        })
    }

    /// The skills of a turn that resumes, from its own `SKILL_SELECT` entry, checked again
    /// (S4), with the same catalogue it started with (S5).
    pub fn for_resumed_turn(
        &self,
        caller: &Caller,
        agent: &Agent,
        trace: &[TraceEntry],
    ) -> Result<TurnSkills, SkillError> {
        let directory = self.directory(caller);
        let selected = resume_selection(&directory, &caller.organisation, trace)?;
        Ok(TurnSkills {
            catalogue: catalogue(
                &directory,
                &caller.organisation,
                &self.bound_ids(agent),
                &selected,
            ),
            trace: None,
            selected,
        })
    }
}
