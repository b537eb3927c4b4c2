//! Reading `skills/<name>/SKILL.md` and `users/<id>/skills/<name>/SKILL.md` in each
//! organisation's folder.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use portal_core::skills::{Visibility, parse_skill_file};

use super::{SkillLibrary, SkillsError, StoredSkill};
use portal_identity::{ConfigError, Identity};

pub(super) fn library(identity: &Identity) -> Result<SkillLibrary, SkillsError> {
    let mut organisations = BTreeMap::new();
    for organisation in identity.organisations() {
        let mut skills: Vec<StoredSkill> = Vec::new();
        if let Some(dir) = &organisation.dir {
            read_folder(&organisation.id, None, &dir.join("skills"), &mut skills)?;
            for user in &organisation.users {
                let folder = dir.join("users").join(&user.id).join("skills");
                read_folder(&organisation.id, Some(&user.id), &folder, &mut skills)?;
            }
            for agent in &organisation.agents {
                if let Some(name) = agent
                    .skills
                    .iter()
                    .find(|name| !skills.iter().any(|s| s.name == **name))
                {
                    return Err(SkillsError::UnknownBinding {
                        path: dir.join("agents").join(format!("{}.toml", agent.id)),
                        organisation: organisation.id.clone(),
                        name: name.clone(),
                    });
                }
            }
        }
        skills.sort_by(|a, b| a.name.cmp(&b.name));
        organisations.insert(organisation.id.clone(), skills);
    }
    Ok(SkillLibrary { organisations })
}

/// Reads every `<name>/SKILL.md` in `folder` (which may not exist) into `skills`.
fn read_folder(
    organisation: &str,
    author: Option<&str>,
    folder: &Path,
    skills: &mut Vec<StoredSkill>,
) -> Result<(), SkillsError> {
    if !folder.is_dir() {
        return Ok(());
    }
    for (folder_name, dir) in portal_identity::files::folders(folder)? {
        let path = dir.join("SKILL.md");
        let text = fs::read_to_string(&path).map_err(|source| ConfigError::Read {
            path: path.clone(),
            source,
        })?;
        let file = parse_skill_file(&text).map_err(|source| SkillsError::File {
            path: path.clone(),
            source,
        })?;
        if file.name != folder_name {
            return Err(SkillsError::NameNotFolder {
                path,
                name: file.name,
                folder: folder_name,
            });
        }
        let visibility = match (file.visibility, author) {
            (Some(Visibility::Private), None) => {
                return Err(SkillsError::PrivateWithoutAuthor { path });
            }
            (Some(visibility), _) => visibility,
            (None, None) => Visibility::Organisation,
            (None, Some(_)) => Visibility::Private,
        };
        if let Some(other) = skills.iter().find(|s| s.name == file.name) {
            return Err(SkillsError::Duplicate {
                first: other.path.clone(),
                second: path,
                name: file.name,
            });
        }
        skills.push(StoredSkill {
            id: format!("{organisation}/{}", file.name),
            organisation: organisation.to_string(),
            name: file.name,
            description: file.description,
            instructions: file.body,
            author: author.map(str::to_string),
            visibility,
            active: file.active.unwrap_or(true),
            path,
        });
    }
    Ok(())
}
