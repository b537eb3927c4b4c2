//! Reading the configuration directory: `organisations/<id>/organisation.toml`,
//! `users/<id>/user.toml` and `agents/<id>.toml` under each organisation.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use portal_core::effort::Effort;
use portal_core::skills::is_slug;
use serde::Deserialize;

use crate::files::{Entry, entries, read_toml};
use crate::quotas::{QuotaEntry, quota_rules};
use crate::{
    Agent, ConfigError, DEFAULT_MODEL, Identity, KnowledgeFolder, Mode, Organisation,
    PasswordDigest, Role, TokenDigest, User, default_agent, local_user,
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct OrganisationFile {
    name: String,
    #[serde(default)]
    quotas: Vec<QuotaEntry>,
    #[serde(default = "yes")]
    passwords: bool,
    #[serde(default)]
    public_links: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UserFile {
    name: String,
    #[serde(default)]
    token_sha256: Option<String>,
    #[serde(default)]
    password_argon2id: Option<String>,
    #[serde(default)]
    role: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentFile {
    name: String,
    #[serde(default)]
    instructions: String,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    effort: Option<Effort>,
    #[serde(default)]
    skills: Vec<String>,
    #[serde(default)]
    tools: Vec<String>,
    #[serde(default)]
    mcp: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    knowledge: Vec<String>,
    #[serde(default)]
    description: String,
    #[serde(default)]
    examples: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct KnowledgeFolderFile {
    folder: String,
    #[serde(default)]
    description: String,
}

impl Identity {
    /// Reads the configuration directory `dir` (layout in `docs/identity.md`).
    pub fn load(dir: &Path) -> Result<Self, ConfigError> {
        identity(dir)
    }
}

impl Agent {
    /// Reads one agent file (the `agents/<id>.toml` format) as an agent of `organisation`; its id
    /// is the file's name.
    pub fn from_file(organisation: &str, path: &Path) -> Result<Agent, ConfigError> {
        let id = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        agent(organisation, id, path)
    }
}

fn identity(root: &Path) -> Result<Identity, ConfigError> {
    let organisations_dir = root.join("organisations");
    if !organisations_dir.is_dir() {
        return Err(ConfigError::NoOrganisation {
            path: root.to_path_buf(),
        });
    }
    let mut organisations = BTreeMap::new();
    for (id, dir) in entries(&organisations_dir, Entry::Folder)? {
        let organisation = organisation(&id, &dir)?;
        organisations.insert(id, organisation);
    }
    if organisations.is_empty() {
        return Err(ConfigError::NoOrganisation {
            path: root.to_path_buf(),
        });
    }
    check_tokens_distinct(&organisations)?;
    let providers = crate::sso::load(root, organisations.keys())?;
    let has_users = organisations.values().any(|o| !o.users.is_empty());
    let mode = if has_users || !providers.is_empty() {
        Mode::Users
    } else if organisations.len() == 1 {
        for organisation in organisations.values_mut() {
            organisation.users.push(local_user(&organisation.id));
        }
        Mode::Local
    } else {
        return Err(ConfigError::LocalModeNeedsOneOrganisation {
            path: root.to_path_buf(),
            count: organisations.len(),
        });
    };
    Ok(Identity {
        mode,
        organisations,
        providers,
    })
}

fn organisation(id: &str, dir: &Path) -> Result<Organisation, ConfigError> {
    let file: OrganisationFile = read_toml(&dir.join("organisation.toml"))?;
    let path = dir.join("organisation.toml");
    let name = required(&path, "name", file.name)?;
    let quotas = quota_rules(&path, file.quotas)?;
    let mut users = Vec::new();
    let users_dir = dir.join("users");
    if users_dir.is_dir() {
        for (user_id, user_dir) in entries(&users_dir, Entry::Folder)? {
            users.push(user(id, &user_id, &user_dir.join("user.toml"))?);
        }
    }
    let mut agents = Vec::new();
    let agents_dir = dir.join("agents");
    if agents_dir.is_dir() {
        for (agent_id, path) in entries(&agents_dir, Entry::Toml)? {
            agents.push(agent(id, &agent_id, &path)?);
        }
    }
    if agents.is_empty() {
        agents.push(default_agent(id));
    }
    let mcp_servers = crate::mcp::load(id, dir)?;
    let mut knowledge_folders = Vec::new();
    let knowledge_dir = dir.join("knowledge");
    if knowledge_dir.is_dir() {
        for (name, path) in entries(&knowledge_dir, Entry::Toml)? {
            let file: KnowledgeFolderFile = read_toml(&path)?;
            let folder = PathBuf::from(required(&path, "folder", file.folder)?);
            knowledge_folders.push(KnowledgeFolder {
                name,
                description: file.description.trim().to_string(),
                folder: if folder.is_absolute() {
                    folder
                } else {
                    dir.join(folder)
                },
            });
        }
    }
    for agent in &agents {
        crate::mcp::check_agent_grants(
            &agents_dir.join(format!("{}.toml", agent.id)),
            &agent.mcp,
            &mcp_servers,
        )?;
    }
    Ok(Organisation {
        id: id.to_string(),
        name,
        dir: Some(dir.to_path_buf()),
        users,
        agents,
        quotas,
        passwords: file.passwords,
        public_links: file.public_links,
        mcp_servers,
        knowledge_folders,
    })
}

fn user(organisation: &str, id: &str, path: &Path) -> Result<User, ConfigError> {
    let file: UserFile = read_toml(path)?;
    let token = file
        .token_sha256
        .map(|hex| {
            TokenDigest::from_hex(&hex).ok_or_else(|| ConfigError::Field {
                path: path.to_path_buf(),
                field: "token_sha256",
                problem: "is not 64 hexadecimal digits; write the output of `printf %s \"$TOKEN\" | sha256sum`"
                    .into(),
            })
        })
        .transpose()?;
    let password = file
        .password_argon2id
        .map(|phc| {
            PasswordDigest::parse(&phc).ok_or_else(|| ConfigError::Field {
                path: path.to_path_buf(),
                field: "password_argon2id",
                problem: "is not an argon2id hash; set the password with `portal user passwd`"
                    .into(),
            })
        })
        .transpose()?;
    let role = match file.role {
        None => Role::Member,
        Some(name) => Role::parse(&name).ok_or_else(|| ConfigError::Field {
            path: path.to_path_buf(),
            field: "role",
            problem: format!(
                "is `{name}`; write one of {}",
                Role::NAMES.map(|n| format!("\"{n}\"")).join(" or ")
            ),
        })?,
    };
    if token.is_none() && password.is_none() {
        return Err(ConfigError::Field {
            path: path.to_path_buf(),
            field: "password_argon2id",
            problem: "is missing, and so is `token_sha256`: the user could never sign in; set a password with `portal user passwd`".into(),
        });
    }
    Ok(User {
        id: id.to_string(),
        organisation: organisation.to_string(),
        name: required(path, "name", file.name)?,
        token,
        password,
        role,
    })
}

fn agent(organisation: &str, id: &str, path: &Path) -> Result<Agent, ConfigError> {
    let file: AgentFile = read_toml(path)?;
    let model = match file.model {
        Some(model) => required(path, "model", model)?,
        None => DEFAULT_MODEL.to_string(),
    };
    let mut skills: Vec<String> = Vec::new();
    for slug in file.skills {
        if !is_slug(&slug) {
            return Err(ConfigError::Field {
                path: path.to_path_buf(),
                field: "skills",
                problem: format!(
                    "`{slug}` is not a skill name; use lowercase letters, digits and hyphens"
                ),
            });
        }
        if skills.contains(&slug) {
            return Err(ConfigError::Field {
                path: path.to_path_buf(),
                field: "skills",
                problem: format!("`{slug}` is listed twice; keep one"),
            });
        }
        skills.push(slug);
    }
    let mut knowledge: Vec<String> = Vec::new();
    for name in file.knowledge {
        let name = name.trim().to_string();
        let problem = if name.is_empty() {
            "lists an empty name; write each collection's name".to_string()
        } else if knowledge.contains(&name) {
            format!("`{name}` is listed twice; keep one")
        } else {
            knowledge.push(name);
            continue;
        };
        return Err(ConfigError::Field {
            path: path.to_path_buf(),
            field: "knowledge",
            problem,
        });
    }
    Ok(Agent {
        id: id.to_string(),
        organisation: organisation.to_string(),
        name: required(path, "name", file.name)?,
        instructions: file.instructions.trim().to_string(),
        model,
        effort: file.effort.unwrap_or(Effort::Medium),
        skills,
        tools: file.tools,
        mcp: file.mcp,
        knowledge,
        description: file.description.trim().to_string(),
        examples: file
            .examples
            .iter()
            .map(|e| e.trim().to_string())
            .filter(|e| !e.is_empty())
            .collect(),
    })
}

fn required(path: &Path, field: &'static str, value: String) -> Result<String, ConfigError> {
    let value = value.trim().to_string();
    if value.is_empty() {
        return Err(ConfigError::Field {
            path: path.to_path_buf(),
            field,
            problem: "is empty; write a value".into(),
        });
    }
    Ok(value)
}

fn check_tokens_distinct(
    organisations: &BTreeMap<String, Organisation>,
) -> Result<(), ConfigError> {
    let users: Vec<&User> = organisations.values().flat_map(|o| &o.users).collect();
    for (i, first) in users.iter().enumerate() {
        for second in &users[i + 1..] {
            if first.token.is_some() && first.token == second.token {
                return Err(ConfigError::SharedToken {
                    first: user_path(organisations, first),
                    second: user_path(organisations, second),
                });
            }
        }
    }
    Ok(())
}

fn user_path(organisations: &BTreeMap<String, Organisation>, user: &User) -> PathBuf {
    organisations
        .get(&user.organisation)
        .and_then(|o| o.dir.clone())
        .unwrap_or_default()
        .join("users")
        .join(&user.id)
        .join("user.toml")
}
