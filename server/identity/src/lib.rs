//! Who is asking: organisations, their users and their agents, read from a configuration
//! directory (`docs/identity.md`), and the bearer tokens that say which user a request is. The
//! same directory's single sign-on providers ([`sso`]) and MCP servers ([`mcp`]) are read here
//! too, through the reading they share ([`files`]); signing in and connecting are done above.
//!
//! Local mode is the default: when no user is configured there is one organisation and one
//! user, and every request is that user, without a login.

mod error;
pub mod files;
mod http;
mod load;
pub mod mcp;
mod password;
mod quotas;
pub mod sso;
mod token;
mod user_file;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use portal_core::effort::Effort;
use portal_model::demo;
use serde::Serialize;

pub use error::{AuthError, ConfigError};
pub use http::Unauthorized;
pub use password::{PasswordDigest, PasswordError, check_new as check_new_password};
pub use quotas::QuotaRule;
pub use token::TokenDigest;
pub use user_file::{UserFileError, add_user, set_password};

/// The organisation id of local mode when no configuration directory is given.
pub const LOCAL_ORGANISATION: &str = "local";
/// The user id of local mode.
pub const LOCAL_USER: &str = "local";
/// The agent an organisation gets when its configuration names none; it is offered the demo
/// tools.
pub const DEFAULT_AGENT: &str = "assistant";
/// The model an agent uses when its file does not name one.
pub const DEFAULT_MODEL: &str = demo::MODEL;

/// The organisations, users and agents the portal serves.
#[derive(Debug, Clone)]
pub struct Identity {
    mode: Mode,
    organisations: BTreeMap<String, Organisation>,
    /// The single sign-on providers (`providers/<id>.toml`).
    providers: Vec<crate::sso::Provider>,
}

/// Whether requests sign in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// No user is configured: one organisation, one user, no login.
    Local,
    /// Users or single sign-on providers are configured: each request is signed in.
    Users,
}

/// An organisation: its people and its agents. Nothing crosses from one organisation to another.
#[derive(Debug, Clone)]
pub struct Organisation {
    pub id: String,
    pub name: String,
    /// The organisation's folder, where its skills are read from; `None` for built-in local mode.
    pub dir: Option<PathBuf>,
    pub users: Vec<User>,
    pub agents: Vec<Agent>,
    /// Its usage quotas (docs/usage.md).
    pub quotas: Vec<QuotaRule>,
    /// Whether its users may sign in with a password (`passwords = false` leaves single sign-on
    /// and tokens).
    pub passwords: bool,
    /// Whether its users may share a conversation with anyone who has the link, signed in or not
    /// (`public_links = true`); otherwise share links open for its own signed-in users only
    /// (docs/share.md).
    pub public_links: bool,
    /// The MCP servers its agents may be offered tools of (docs/tools.md).
    pub mcp_servers: Vec<crate::mcp::ServerConfig>,
    /// Its collections kept from folders on the server (`knowledge/<name>.toml`;
    /// docs/knowledge.md, "Folders").
    pub knowledge_folders: Vec<KnowledgeFolder>,
}

/// A collection of the organisation's whose documents are a folder's files, synced as they
/// change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnowledgeFolder {
    /// The collection's name: the file's name without `.toml`.
    pub name: String,
    pub description: String,
    /// The folder, as the file names it (a relative path is from the organisation's folder).
    pub folder: PathBuf,
}

/// A person who signs in with a password (in the browser) or a bearer token (API clients).
#[derive(Debug, Clone)]
pub struct User {
    pub id: String,
    pub organisation: String,
    pub name: String,
    /// The digest of the user's token; `None` for users without one and the local user, who
    /// never signs in.
    pub token: Option<TokenDigest>,
    /// The hash of the user's password; `None` for users without one and the local user.
    pub password: Option<PasswordDigest>,
    /// What the user may do in their organisation besides talking to its agents.
    pub role: Role,
}

/// A user's role in their organisation (`role` in `user.toml`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Talks to the organisation's agents: the default.
    #[default]
    Member,
    /// Also reads the organisation's usage (`GET /api/usage`).
    Admin,
}

impl Role {
    /// The values `role` takes in `user.toml`.
    pub const NAMES: [&str; 2] = ["member", "admin"];

    /// The role `name` (`member` or `admin`) names.
    pub fn parse(name: &str) -> Option<Role> {
        match name {
            "member" => Some(Role::Member),
            "admin" => Some(Role::Admin),
            _ => None,
        }
    }
}

/// An agent people talk to: an author's instructions, a model, a default effort, the skills
/// bound to it (by name, in binding order; rule S5) and the tools it is offered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Agent {
    pub id: String,
    pub organisation: String,
    pub name: String,
    /// Layer 2 of the prompt (rule L1).
    pub instructions: String,
    /// The configured model the agent calls.
    pub model: String,
    /// The agent's default effort; a message may override it (rule E1).
    pub effort: Effort,
    /// The names (slugs) of the skills bound to the agent, in binding order.
    pub skills: Vec<String>,
    /// The names of the agent tools it is offered (the demo tools, `publish_note` and friends);
    /// the portal's own tools (`read_document`, `load_skill`, …) need no listing.
    pub tools: Vec<String>,
    /// The tools of its organisation's MCP servers it is offered: by server id, the tools' names
    /// on the server, or `*` for all of them.
    pub mcp: BTreeMap<String, Vec<String>>,
    /// The names of its organisation's knowledge collections it searches with
    /// `search_knowledge` (docs/knowledge.md).
    pub knowledge: Vec<String>,
    /// What the agent is for, in a sentence or two for the people who talk to it: an empty
    /// conversation greets them with it.
    pub description: String,
    /// Messages a person could start a conversation with, offered under the greeting.
    pub examples: Vec<String>,
}

/// The user a request is made by, within their organisation.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Caller {
    pub organisation: String,
    pub user: String,
    /// Whether they are an administrator of their organisation ([`Role::Admin`]). Local mode's
    /// user is: they are one person on their own machine.
    pub admin: bool,
}

impl Identity {
    /// Built-in local mode: organisation `local`, user `local`, the default agent.
    pub fn local() -> Self {
        let organisation = Organisation {
            id: LOCAL_ORGANISATION.into(),
            name: "Local".into(),
            dir: None,
            users: vec![local_user(LOCAL_ORGANISATION)],
            agents: vec![default_agent(LOCAL_ORGANISATION)],
            quotas: Vec::new(),
            passwords: true,
            public_links: false,
            mcp_servers: Vec::new(),
            knowledge_folders: Vec::new(),
        };
        Identity {
            mode: Mode::Local,
            organisations: BTreeMap::from([(organisation.id.clone(), organisation)]),
            providers: Vec::new(),
        }
    }

    /// The usage quotas `caller` is held to: their organisation's that apply to them.
    pub fn quotas(&self, caller: &Caller) -> Vec<portal_store::quota::Quota> {
        self.organisation(&caller.organisation)
            .map(|o| {
                o.quotas
                    .iter()
                    .filter_map(|rule| rule.for_caller(caller))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The agent whose file is `path`, when it lies in one of the organisations' `agents`
    /// folders.
    pub fn agent_in_file(&self, path: &Path) -> Option<&Agent> {
        let path = path.canonicalize().ok()?;
        self.organisations.values().find_map(|organisation| {
            let agents = organisation
                .dir
                .as_ref()?
                .join("agents")
                .canonicalize()
                .ok()?;
            if path.parent() != Some(agents.as_path()) {
                return None;
            }
            let id = path.file_stem()?.to_str()?;
            organisation.agents.iter().find(|a| a.id == id)
        })
    }

    /// Whether requests sign in.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The organisations, by id.
    pub fn organisations(&self) -> impl Iterator<Item = &Organisation> {
        self.organisations.values()
    }

    /// The single sign-on providers.
    pub fn providers(&self) -> &[crate::sso::Provider] {
        &self.providers
    }

    /// The organisation `id`.
    pub fn organisation(&self, id: &str) -> Option<&Organisation> {
        self.organisations.get(id)
    }

    /// The agents the caller may talk to: their organisation's, in id order.
    pub fn agents(&self, caller: &Caller) -> &[Agent] {
        self.organisation(&caller.organisation)
            .map(|o| o.agents.as_slice())
            .unwrap_or_default()
    }

    /// The agent `id` of the caller's organisation; another organisation's agent is `None`.
    pub fn agent(&self, caller: &Caller, id: &str) -> Option<&Agent> {
        self.agents(caller).iter().find(|a| a.id == id)
    }

    /// The user `user` of organisation `organisation`.
    pub fn user(&self, organisation: &str, user: &str) -> Option<&User> {
        self.organisation(organisation)?
            .users
            .iter()
            .find(|u| u.id == user)
    }

    /// The caller that user `user` of organisation `organisation` is, an administrator when the
    /// configuration says so; a user it does not know is not one.
    pub fn caller(&self, organisation: &str, user: &str) -> Caller {
        Caller {
            organisation: organisation.to_string(),
            user: user.to_string(),
            admin: self
                .user(organisation, user)
                .is_some_and(|u| u.role == Role::Admin),
        }
    }

    /// The caller a sign-in with `password` is, when it is right. Slow on purpose (argon2id, tens
    /// of milliseconds), so async code calls it on the blocking pool. A user who does not exist
    /// or has no password takes as long to refuse as a wrong password.
    pub fn check_password(&self, organisation: &str, user: &str, password: &str) -> Option<Caller> {
        let found = self
            .user(organisation, user)
            .filter(|u| u.password.is_some())
            .filter(|u| self.passwords_allowed(&u.organisation));
        let digest = found
            .and_then(|u| u.password.as_ref())
            .unwrap_or_else(|| password::decoy());
        let matches = digest.verify(password);
        found
            .filter(|_| matches)
            .map(|u| self.caller(&u.organisation, &u.id))
    }

    /// The fingerprint of the caller's current password hash ([`PasswordDigest::stamp`]);
    /// `None` when they have no password, no longer exist, or their organisation turned
    /// passwords off.
    pub fn password_stamp(&self, caller: &Caller) -> Option<String> {
        if !self.passwords_allowed(&caller.organisation) {
            return None;
        }
        self.user(&caller.organisation, &caller.user)?
            .password
            .as_ref()
            .map(PasswordDigest::stamp)
    }

    /// The user a request is made by, from its `Authorization` header value. In local mode every
    /// request is the local user, header or not.
    pub fn authenticate(&self, authorization: Option<&str>) -> Result<Caller, AuthError> {
        if self.mode == Mode::Local {
            let organisation = self
                .organisations
                .values()
                .next()
                .map(|o| o.id.clone())
                .unwrap_or_else(|| LOCAL_ORGANISATION.into());
            return Ok(Caller {
                organisation,
                user: LOCAL_USER.into(),
                admin: true,
            });
        }
        let value = authorization.ok_or(AuthError::Missing)?.trim();
        let (scheme, token) = value.split_once(' ').ok_or(AuthError::Malformed)?;
        let token = token.trim();
        if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
            return Err(AuthError::Malformed);
        }
        let presented = TokenDigest::of(token);
        // Every digest is compared, so the time taken does not tell which user came close.
        let mut found = None;
        for user in self.organisations.values().flat_map(|o| &o.users) {
            if user.token.is_some_and(|t| t.matches(&presented)) {
                found = Some(user);
            }
        }
        found
            .map(|user| self.caller(&user.organisation, &user.id))
            .ok_or(AuthError::Unknown)
    }
}

impl Identity {
    fn passwords_allowed(&self, organisation: &str) -> bool {
        self.organisation(organisation).is_some_and(|o| o.passwords)
    }
}

fn local_user(organisation: &str) -> User {
    User {
        id: LOCAL_USER.into(),
        organisation: organisation.into(),
        name: "You".into(),
        token: None,
        password: None,
        role: Role::Admin,
    }
}

fn default_agent(organisation: &str) -> Agent {
    Agent {
        id: DEFAULT_AGENT.into(),
        organisation: organisation.into(),
        name: "Assistant".into(),
        instructions: String::new(),
        model: DEFAULT_MODEL.into(),
        effort: Effort::Medium,
        skills: Vec::new(),
        tools: demo::tools::NAMES.map(String::from).to_vec(),
        mcp: BTreeMap::new(),
        knowledge: Vec::new(),
        description: "Answers your questions, and shows what an agent does: it counts \
                      characters, publishes notes once you approve them and asks when something \
                      is unclear."
            .into(),
        examples: [
            "Tell me about writing systems",
            "Please publish a note on the herons",
            "Clarify what you need to plan a trip to Lisbon",
        ]
        .map(String::from)
        .to_vec(),
    }
}

#[cfg(test)]
mod tests;
