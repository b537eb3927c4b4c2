//! The HTTP API under `/api`, one file per resource. Each resource module has a `router()`;
//! [`routes`] merges them, so a new resource is a new file and one line here. Every `/api`
//! request is signed in by [`sign_in`] (or refused 401) before any handler reads its path, query
//! or body; `crate::app` puts the API, the OpenAI-compatible API and the web app together.

mod agents;
mod attachments;
mod calls;
mod checks;
mod conversations;
mod exchange;
mod info;
pub(crate) mod keys;
mod knowledge;
mod projects;
mod session;
mod share;
mod skills;
pub(crate) mod turns;
mod usage;

use std::path::PathBuf;
use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{FromRef, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use portal_core::TraceEntry;
use portal_core::effort::{Effort, winning_effort};
use portal_core::skills::SkillError;

use crate::limits::{Gates, Limits};
use crate::sessions::{self, SessionConfig, Sessions, origin};
use portal_host::turn::{TurnError, TurnSetup, Turns};
use portal_identity::{Agent, AuthError, Caller, Identity, Mode, Unauthorized};
use portal_model::ModelRegistry;
use portal_store::{ConversationId, ConversationInfo, Owner, StorageError};
use portal_tools::mcp::McpServers;
use portal_tools::skills::{SkillLibrary, TurnSkills};

/// Who sent a request, and how they signed in.
#[derive(Debug, Clone)]
pub struct Sender {
    pub caller: Caller,
    /// Signed in by session cookie: a request that changes state must come from the portal's
    /// own origin.
    pub by_cookie: bool,
    /// A renewed session cookie to send back, when the session's expiry moved.
    pub renewed: Option<String>,
}

/// What every request handler shares.
#[derive(Debug, Clone)]
pub struct AppState {
    pub turns: Arc<Turns>,
    pub models: ModelRegistry,
    pub identity: Arc<Identity>,
    /// Every organisation's skills (docs/identity.md).
    pub skills: Arc<SkillLibrary>,
    /// What one request and one user may take.
    pub limits: Limits,
    /// The counters behind the "at once" limits.
    pub gates: Gates,
    /// The MCP servers whose tools agents are offered, for their status.
    pub mcp: Arc<McpServers>,
    /// Sign-in sessions.
    pub sessions: Sessions,
    /// Single sign-on, when providers are configured.
    pub sso: Option<Arc<crate::sso::Sso>>,
}

impl FromRef<AppState> for Arc<Identity> {
    fn from_ref(state: &AppState) -> Self {
        Arc::clone(&state.identity)
    }
}

impl AppState {
    pub fn new(
        turns: Arc<Turns>,
        models: ModelRegistry,
        identity: Arc<Identity>,
        skills: Arc<SkillLibrary>,
        limits: Limits,
        sessions: SessionConfig,
        pdf_reader: PathBuf,
    ) -> Result<Self, String> {
        let decodes = turns.pictures().decodes();
        let sso = crate::sso::Sso::new(
            Arc::clone(&identity),
            turns.storage().clone(),
            sessions.public_origin.as_deref(),
        )?
        .map(Arc::new);
        Ok(AppState {
            sso,
            sessions: Sessions::new(turns.storage().clone(), Arc::clone(&identity), sessions),
            turns,
            models,
            identity,
            skills,
            gates: Gates::new(&limits, decodes, pdf_reader),
            limits,
            mcp: Arc::default(),
        })
    }

    /// Reports on the MCP servers `mcp` too (`GET /api/agents/{id}/mcp`): those whose tools the
    /// turns' registry offers.
    pub fn with_mcp(mut self, mcp: Arc<McpServers>) -> Self {
        self.mcp = mcp;
        self
    }

    /// The agent of the caller's `conversation`: its agent when the organisation still has it,
    /// else none (the turn then runs on the defaults).
    pub fn agent(&self, caller: &Caller, conversation: &ConversationInfo) -> Option<&Agent> {
        self.identity.agent(caller, &conversation.agent_id)
    }

    /// Who sends the request: the local user in local mode, else the user of its bearer token
    /// (`Authorization`, which wins) or of its session cookie.
    pub async fn signed_in(&self, headers: &HeaderMap) -> Result<Sender, ApiError> {
        let authorization = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        if self.identity.mode() == Mode::Local || authorization.is_some() {
            return self
                .identity
                .authenticate(authorization)
                .map(|caller| Sender {
                    caller,
                    by_cookie: false,
                    renewed: None,
                })
                .map_err(|e| ApiError(StatusCode::UNAUTHORIZED, e.to_string()));
        }
        let Some(id) = sessions::cookie_value(headers) else {
            return Err(ApiError(
                StatusCode::UNAUTHORIZED,
                AuthError::Missing.to_string(),
            ));
        };
        let found = self.sessions.find(&id).await?.ok_or_else(|| {
            ApiError(
                StatusCode::UNAUTHORIZED,
                "your session has ended (signed out, expired or password changed); sign in again"
                    .into(),
            )
        })?;
        Ok(Sender {
            caller: found.caller,
            by_cookie: true,
            renewed: found.renewed,
        })
    }

    /// The caller's conversation `id`; anyone else's, in their organisation or not, is not
    /// found.
    pub async fn conversation(
        &self,
        caller: &Caller,
        id: &str,
    ) -> Result<ConversationInfo, ApiError> {
        let id = ConversationId::new(id);
        let conversation = self
            .turns
            .storage()
            .conversation(&caller.organisation, &id)
            .await?;
        if conversation.owner.user_id != caller.user {
            return Err(StorageError::ConversationNotFound { conversation: id }.into());
        }
        Ok(conversation)
    }

    /// The instructions of the project `conversation` is in, as they are now (the prompt's layer
    /// 3, rule L1): empty outside a project, and once the project is gone.
    pub async fn project_instructions(
        &self,
        caller: &Caller,
        conversation: &ConversationInfo,
    ) -> Result<String, ApiError> {
        let Some(project) = &conversation.project else {
            return Ok(String::new());
        };
        match self
            .turns
            .storage()
            .project(&owner_of(caller), project)
            .await
        {
            Ok(project) => Ok(project.instructions),
            Err(StorageError::ProjectNotFound { .. }) => Ok(String::new()),
            Err(error) => Err(error.into()),
        }
    }

    /// How a turn of `conversation` runs: its agent's instructions, model and tools, its
    /// project's instructions (from [`AppState::project_instructions`]), the effort that wins
    /// (rule E1), or the one the turn recorded when it resumes (rule E2), and its skills (from
    /// [`AppState::message_skills`] or [`AppState::resumed_skills`]).
    pub fn setup(
        &self,
        caller: &Caller,
        conversation: &ConversationInfo,
        project_instructions: String,
        effort: Option<Effort>,
        skills: TurnSkills,
    ) -> TurnSetup {
        let agent = self.agent(caller, conversation);
        let name = agent
            .map(|a| a.model.as_str())
            .filter(|name| self.models.get(name).is_some())
            .unwrap_or_else(|| self.models.default_name());
        let model = self.models.get(name).expect("a listed model");
        let tools = match agent {
            Some(agent) => self.turns.tools().for_agent(agent),
            None => self
                .turns
                .tools()
                .for_agent(&self.unbound_agent(caller, conversation)),
        };
        TurnSetup {
            org_id: caller.organisation.clone(),
            user_id: caller.user.clone(),
            instructions: agent.map(|a| a.instructions.clone()).unwrap_or_default(),
            project_instructions,
            model: Arc::clone(model),
            price: self.models.price(name).cloned(),
            selected_skills: skills.selected,
            catalogue: skills.catalogue,
            effort: winning_effort(agent.map_or(Effort::Medium, |a| a.effort), effort),
            tools,
        }
    }

    /// The skills a new message selects and the catalogue beside them (rules S1–S6). An error
    /// refuses the message before anything is recorded.
    pub fn message_skills(
        &self,
        caller: &Caller,
        conversation: &ConversationInfo,
        text: &str,
    ) -> Result<TurnSkills, ApiError> {
        let fallback = self.unbound_agent(caller, conversation);
        let agent = self.agent(caller, conversation).unwrap_or(&fallback);
        Ok(self.skills.for_message(caller, agent, text)?)
    }

    /// The skills a resumed turn selected, checked again (rule S4).
    pub fn resumed_skills(
        &self,
        caller: &Caller,
        conversation: &ConversationInfo,
        trace: &[TraceEntry],
    ) -> Result<TurnSkills, ApiError> {
        let fallback = self.unbound_agent(caller, conversation);
        let agent = self.agent(caller, conversation).unwrap_or(&fallback);
        Ok(self.skills.for_resumed_turn(caller, agent, trace)?)
    }

    /// The agent a conversation runs on when its organisation no longer has it: no skills bound,
    /// no agent tools offered.
    fn unbound_agent(&self, caller: &Caller, conversation: &ConversationInfo) -> Agent {
        Agent {
            id: conversation.agent_id.clone(),
            organisation: caller.organisation.clone(),
            name: conversation.agent_id.clone(),
            instructions: String::new(),
            model: portal_identity::DEFAULT_MODEL.to_string(),
            effort: Effort::Medium,
            skills: Vec::new(),
            tools: Vec::new(),
            mcp: Default::default(),
            knowledge: Vec::new(),
            description: String::new(),
            examples: Vec::new(),
        }
    }
}

pub(crate) use attachments::UPLOADS;

/// Whether `path` is one that files are uploaded to: an attachment, or a collection's document.
pub(crate) fn is_upload(path: &str) -> bool {
    path == UPLOADS || knowledge::is_document_upload(path)
}

/// The API's routes under `/api`; [`sign_in`] and [`answers`] go around them (`crate::app`).
pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .merge(info::router())
        .merge(session::router())
        .merge(crate::sso::router())
        .merge(agents::router())
        .merge(skills::router())
        .merge(attachments::router())
        .merge(conversations::router())
        .merge(exchange::router())
        .merge(share::router())
        .merge(projects::router())
        .merge(knowledge::router())
        .merge(calls::router())
        .merge(turns::router())
        .merge(usage::router())
        .merge(keys::router())
        .route("/api", any(unknown))
        .route("/api/{*path}", any(unknown))
}

/// The most of a plain-text refusal [`answers`] reads to quote it.
const REFUSAL_READ: usize = 4096;

/// Every `/api` answer leaves in the API's shape: a refusal axum's extractors wrote as plain
/// text (a body too large, not JSON, not the JSON the request takes, a path or query that does
/// not parse) is rewritten as `{"error"}` with a sentence saying what was wrong and what to do,
/// keeping its status and its other headers.
pub(crate) async fn answers(request: Request, next: Next) -> Response {
    if !is_api(request.uri().path()) {
        return next.run(request).await;
    }
    let response = next.run(request).await;
    let status = response.status();
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|t| t.as_bytes().starts_with(b"application/json"));
    if json || !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let (parts, body) = response.into_parts();
    let detail = axum::body::to_bytes(body, REFUSAL_READ)
        .await
        .map(|text| String::from_utf8_lossy(&text).trim().to_string())
        .unwrap_or_default();
    let mut answer = ApiError(status, refusal(status, &detail)).into_response();
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            answer.headers_mut().append(name, value.clone());
        }
    }
    answer
}

/// What a refusal with `status` says, quoting axum's `detail` when it has one.
fn refusal(status: StatusCode, detail: &str) -> String {
    let (what, todo) = match status {
        StatusCode::PAYLOAD_TOO_LARGE => (
            "the request body is larger than the 2 MiB the API reads",
            "send a shorter one, and files through POST /api/attachments",
        ),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => (
            "the request body must be JSON",
            "send it with Content-Type: application/json",
        ),
        StatusCode::UNPROCESSABLE_ENTITY => (
            "the request body is not what this request takes",
            "send the fields docs/identity.md (\"Over HTTP\") lists for it",
        ),
        _ => (
            "the request could not be read",
            "check its JSON, path and query against docs/identity.md (\"Over HTTP\") and send it again",
        ),
    };
    if detail.is_empty() {
        format!("{what}; {todo}")
    } else {
        format!("{what} ({detail}); {todo}")
    }
}

/// Whether `path` is the API's.
pub(crate) fn is_api(path: &str) -> bool {
    path == "/api" || path.starts_with("/api/")
}

/// Signs in every `/api` request but the session routes (which sign in themselves) before
/// anything reads it: refused 401 when it does not (but for opening a share link, which goes on
/// signed out and decides for itself), and 403 when it changes state by cookie
/// from another site. The caller is left in the request's extensions for [`Caller`] to take.
pub(crate) async fn sign_in(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path();
    if !is_api(path) || path == session::PATH {
        return next.run(request).await;
    }
    let sender = match state.signed_in(request.headers()).await {
        Ok(sender) => sender,
        Err(_) if share::opens_signed_out(request.method(), path) => {
            return next.run(request).await;
        }
        Err(error) => return error.into_response(),
    };
    let public_origin = state.sessions.config().public_origin.as_deref();
    if sender.by_cookie
        && origin::changes_state(request.method())
        && !origin::same_origin(request.headers(), public_origin)
    {
        return ApiError::cross_site().into_response();
    }
    request.extensions_mut().insert(sender.caller);
    let mut response = next.run(request).await;
    if let Some(cookie) = sender.renewed
        && let Err(error) = session::set_cookie(&mut response, &cookie)
    {
        return error.into_response();
    }
    response
}

/// The storage owner that is the caller.
pub(crate) fn owner_of(caller: &Caller) -> Owner {
    Owner::new(caller.organisation.clone(), caller.user.clone())
}

/// An `/api` path that names nothing.
async fn unknown(request: Request) -> ApiError {
    ApiError(
        StatusCode::NOT_FOUND,
        format!(
            "there is no {} in the API; docs/identity.md lists the requests it answers",
            request.uri().path()
        ),
    )
}

/// An API path asked with a method it does not answer (the web app's files answer for
/// themselves).
pub(crate) async fn wrong_method(request: Request) -> ApiError {
    ApiError(
        StatusCode::METHOD_NOT_ALLOWED,
        format!(
            "{} does not answer {}; docs/identity.md lists the requests it answers",
            request.uri().path(),
            request.method()
        ),
    )
}

/// An error as the API answers it: a status and a sentence saying what to do. A 401 also says,
/// in `WWW-Authenticate`, how to sign in; a 503 says in `Retry-After` to try again in a second
/// (it changed nothing, so a proxy may pass the request to another replica).
#[derive(Debug)]
pub struct ApiError(pub StatusCode, pub String);

impl ApiError {
    /// A request signed in by cookie that changes state, made by another site's page.
    pub fn cross_site() -> Self {
        ApiError(
            StatusCode::FORBIDDEN,
            "this request came from another site's page; use the portal's own page".into(),
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.0, Json(serde_json::json!({ "error": self.1 }))).into_response();
        if self.0 == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static(Unauthorized::CHALLENGE),
            );
        }
        if self.0 == StatusCode::SERVICE_UNAVAILABLE {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }
}

impl From<StorageError> for ApiError {
    fn from(error: StorageError) -> Self {
        let status = match &error {
            StorageError::ConversationNotFound { .. }
            | StorageError::ProjectNotFound { .. }
            | StorageError::CollectionNotFound { .. }
            | StorageError::KnowledgeDocumentNotFound { .. }
            | StorageError::TurnNotFound { .. }
            | StorageError::MessageNotFound { .. }
            | StorageError::BlockNotFound { .. }
            | StorageError::AttachmentNotFound { .. } => StatusCode::NOT_FOUND,
            StorageError::TurnStillRunning { .. }
            | StorageError::TurnNotRunning { .. }
            | StorageError::TurnEnded { .. }
            | StorageError::AlreadyResumed { .. }
            | StorageError::AttachmentExists { .. }
            | StorageError::AttachmentKindChanged { .. }
            | StorageError::ApiKeysFull { .. }
            | StorageError::ShareLinksFull { .. }
            | StorageError::ProjectsFull { .. }
            | StorageError::ImportProjectsFull { .. }
            | StorageError::CollectionsFull { .. }
            | StorageError::CollectionNameTaken { .. } => StatusCode::CONFLICT,
            StorageError::KnowledgeFull { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            StorageError::QuotaExceeded { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            StorageError::UsageQuota(_) | StorageError::TurnsAtOnce { .. } => {
                StatusCode::TOO_MANY_REQUESTS
            }
            StorageError::NotAUserMessage { .. }
            | StorageError::NotStreamable { .. }
            | StorageError::ImportedTurnOpen { .. }
            | StorageError::TooLarge { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            _ => {
                tracing::error!("storage failed: {error}");
                StatusCode::INTERNAL_SERVER_ERROR
            }
        };
        ApiError(status, error.to_string())
    }
}

impl From<SkillError> for ApiError {
    fn from(error: SkillError) -> Self {
        let status = match error {
            SkillError::ResumeRejected { .. } => StatusCode::CONFLICT,
            SkillError::Unavailable { .. } | SkillError::BadArguments => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
        };
        ApiError(status, error.to_string())
    }
}

impl From<TurnError> for ApiError {
    fn from(error: TurnError) -> Self {
        match error {
            TurnError::Storage(error) => error.into(),
            TurnError::EmptyAnswer => ApiError(StatusCode::UNPROCESSABLE_ENTITY, error.to_string()),
            TurnError::Stopping => ApiError(StatusCode::SERVICE_UNAVAILABLE, error.to_string()),
            other => ApiError(StatusCode::CONFLICT, other.to_string()),
        }
    }
}
