//! The server's skill directory: `SKILL.md` files per organisation from the configuration
//! directory (`docs/identity.md`), served to core through [`SkillDirectory`], one caller at a
//! time. Core decides what is accepted (rules S2–S7); this module only says what exists, whose it
//! is and whether the caller sees it.

mod load;
mod tool;
mod turn;

use std::collections::BTreeMap;
use std::path::PathBuf;

use portal_core::skills::{CatalogueEntry, Skill, SkillDirectory, SkillFileError, Visibility};
use thiserror::Error;

use portal_identity::{Agent, Caller, ConfigError, Identity};

pub use tool::LoadSkill;
pub use turn::TurnSkills;

/// Every organisation's skills, as read at start.
#[derive(Debug, Clone, Default)]
pub struct SkillLibrary {
    /// Each organisation's skills, in name order.
    organisations: BTreeMap<String, Vec<StoredSkill>>,
}

/// A skill as the configuration holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct StoredSkill {
    /// `<organisation>/<name>`.
    id: String,
    organisation: String,
    name: String,
    description: String,
    instructions: String,
    /// The user whose folder holds the skill; `None` for an organisation skill.
    author: Option<String>,
    visibility: Visibility,
    active: bool,
    path: PathBuf,
}

/// Why the skills could not be read. Each names the file at fault and says what to change.
#[derive(Debug, Error)]
pub enum SkillsError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("`{}`: {source}", path.display())]
    File {
        path: PathBuf,
        #[source]
        source: SkillFileError,
    },
    #[error(
        "`{}`, field `name`: `{name}` differs from its folder `{folder}`; name the folder after the skill",
        path.display()
    )]
    NameNotFolder {
        path: PathBuf,
        name: String,
        folder: String,
    },
    #[error(
        "`{}`, field `visibility`: an organisation skill has no author to be private to; write `visibility: organisation`, or move it under `users/<id>/skills/`",
        path.display()
    )]
    PrivateWithoutAuthor { path: PathBuf },
    #[error(
        "`{}` and `{}` are both named `{name}`; skill names are unique within an organisation, so rename one",
        first.display(),
        second.display()
    )]
    Duplicate {
        first: PathBuf,
        second: PathBuf,
        name: String,
    },
    #[error(
        "`{}`, field `skills`: no skill `{name}` in organisation `{organisation}`; add `skills/{name}/SKILL.md` or remove it from the list",
        path.display()
    )]
    UnknownBinding {
        path: PathBuf,
        organisation: String,
        name: String,
    },
}

impl SkillLibrary {
    /// Reads every organisation's skills and checks that each agent's bound skills exist in its
    /// organisation.
    pub fn load(identity: &Identity) -> Result<Self, SkillsError> {
        load::library(identity)
    }

    /// The skill directory made for `caller`, for core's resolution and catalogue.
    pub fn directory<'a>(&'a self, caller: &'a Caller) -> CallerSkills<'a> {
        CallerSkills {
            library: self,
            caller,
        }
    }

    /// The skills the caller can select with `/slug`: their organisation's skills they see and
    /// that are active, in name order. The composer completes slugs from this list.
    pub fn selectable(&self, caller: &Caller) -> Vec<CatalogueEntry> {
        self.organisations
            .get(&caller.organisation)
            .into_iter()
            .flatten()
            .filter(|s| s.active && s.visible_to(caller))
            .map(|s| CatalogueEntry {
                name: s.name.clone(),
                description: s.description.clone(),
            })
            .collect()
    }

    /// The ids of the skills bound to `agent`, in binding order (for core's `catalogue`).
    pub fn bound_ids(&self, agent: &Agent) -> Vec<String> {
        let skills = self.organisations.get(&agent.organisation);
        agent
            .skills
            .iter()
            .filter_map(|name| skills?.iter().find(|s| s.name == *name))
            .map(|s| s.id.clone())
            .collect()
    }
}

impl StoredSkill {
    fn visible_to(&self, caller: &Caller) -> bool {
        self.organisation == caller.organisation
            && match self.visibility {
                Visibility::Organisation => true,
                Visibility::Private => self.author.as_deref() == Some(caller.user.as_str()),
            }
    }

    fn for_caller(&self, caller: &Caller) -> Skill {
        Skill {
            id: self.id.clone(),
            organisation: self.organisation.clone(),
            name: self.name.clone(),
            description: self.description.clone(),
            instructions: self.instructions.clone(),
            visible: self.visible_to(caller),
            active: self.active,
        }
    }
}

/// The library as one caller sees it: only their own organisation is looked in, and each skill
/// says whether this caller may see it.
#[derive(Debug, Clone, Copy)]
pub struct CallerSkills<'a> {
    library: &'a SkillLibrary,
    caller: &'a Caller,
}

impl CallerSkills<'_> {
    fn find(&self, organisation: &str, found: impl Fn(&StoredSkill) -> bool) -> Option<Skill> {
        if organisation != self.caller.organisation {
            return None;
        }
        self.library
            .organisations
            .get(organisation)?
            .iter()
            .find(|s| found(s))
            .map(|s| s.for_caller(self.caller))
    }
}

impl SkillDirectory for CallerSkills<'_> {
    fn by_slug(&self, organisation: &str, slug: &str) -> Option<Skill> {
        self.find(organisation, |s| s.name == slug)
    }

    fn by_id(&self, organisation: &str, id: &str) -> Option<Skill> {
        self.find(organisation, |s| s.id == id)
    }
}

#[cfg(test)]
mod tests;
