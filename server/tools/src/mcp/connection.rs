//! One MCP server's connection: started once, initialised once and shared by every call, its
//! tools listed again when it says they changed, and restarted with growing pauses when it
//! fails. A call made while it is down fails at once with the reason.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    PaginatedRequestParams, Tool as ServerTool,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, Peer, RoleClient, ServiceError, ServiceExt};
use serde_json::Value;
use tokio::sync::Notify;

use super::listing::{Listing, listing};
use super::{McpLimits, stdio};
use portal_identity::mcp::{ServerConfig, Transport};

/// Where a server's connection stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Being started and initialised.
    Starting,
    /// Initialised; its tools are listed.
    Connected,
    /// Failed: why, and when the portal tries again.
    Down { reason: String, retry_at: Instant },
}

/// A server's connection, shared by every turn of its organisation.
#[derive(Debug)]
pub struct Connection {
    pub config: ServerConfig,
    limits: McpLimits,
    state: Mutex<State>,
    /// Woken whenever the status or the tools change.
    pub changed: Notify,
}

#[derive(Debug)]
struct State {
    status: Status,
    peer: Option<Peer<RoleClient>>,
    /// The tools as last listed; kept while the server is down, so that calls to them say why
    /// they fail rather than that they do not exist.
    listing: Arc<Listing>,
}

/// Why a call did not get a result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    #[error("the MCP server `{server}` is not running ({reason}); the portal tries again {retry}")]
    Down {
        server: String,
        reason: String,
        retry: String,
    },
    #[error("the MCP server `{server}` is still starting; try again in a few seconds")]
    Starting { server: String },
    #[error("the MCP server `{server}` failed the call: {reason}")]
    Failed { server: String, reason: String },
}

impl Connection {
    /// A connection to `config`'s server, not started yet: [`Connection::run`] starts it.
    pub fn new(config: ServerConfig, limits: McpLimits) -> Arc<Connection> {
        Arc::new(Connection {
            config,
            limits,
            state: Mutex::new(State {
                status: Status::Starting,
                peer: None,
                listing: Arc::default(),
            }),
            changed: Notify::new(),
        })
    }

    /// The limits the server is held to.
    pub fn limits(&self) -> &McpLimits {
        &self.limits
    }

    /// The connection's status.
    pub fn status(&self) -> Status {
        self.state.lock().expect("connection state").status.clone()
    }

    /// The server's tools as last listed.
    pub fn listing(&self) -> Arc<Listing> {
        Arc::clone(&self.state.lock().expect("connection state").listing)
    }

    /// Keeps the server running for as long as the portal does: starts it, serves it until it
    /// fails, and starts it again after a pause that doubles with each failure in a row (from
    /// `first_backoff` to `max_backoff`; a connection that stayed up as long as the longest
    /// pause starts the count again).
    pub async fn run(self: Arc<Self>) {
        let mut failures: u32 = 0;
        loop {
            self.set(Status::Starting, None, None);
            let since = Instant::now();
            let reason = match self.start().await {
                Ok(started) => self.serve(started).await,
                Err(reason) => reason,
            };
            if since.elapsed() >= self.limits.max_backoff {
                failures = 0;
            }
            let pause = self
                .limits
                .first_backoff
                .saturating_mul(2u32.saturating_pow(failures))
                .min(self.limits.max_backoff);
            failures = failures.saturating_add(1);
            tracing::warn!(
                "MCP server {}/{} is down: {reason}; starting it again in {} s",
                self.config.organisation,
                self.config.id,
                pause.as_secs_f64()
            );
            self.set(
                Status::Down {
                    reason,
                    retry_at: Instant::now() + pause,
                },
                None,
                None,
            );
            tokio::time::sleep(pause).await;
        }
    }

    /// Calls `tool` with `arguments` on the server. Dropping the future before it answers sends
    /// the server `notifications/cancelled` for the call.
    pub async fn call(&self, tool: &str, arguments: Value) -> Result<CallToolResult, CallError> {
        let peer = {
            let state = self.state.lock().expect("connection state");
            match (&state.status, &state.peer) {
                (Status::Connected, Some(peer)) => peer.clone(),
                (Status::Down { reason, retry_at }, _) => {
                    let seconds = retry_at.saturating_duration_since(Instant::now()).as_secs();
                    return Err(CallError::Down {
                        server: self.config.id.clone(),
                        reason: reason.clone(),
                        retry: if seconds == 0 {
                            "now".into()
                        } else {
                            format!("in {seconds} s")
                        },
                    });
                }
                _ => {
                    return Err(CallError::Starting {
                        server: self.config.id.clone(),
                    });
                }
            }
        };
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = match arguments {
            Value::Object(map) => Some(map),
            _ => None,
        };
        peer.call_tool(params)
            .await
            .map_err(|error| CallError::Failed {
                server: self.config.id.clone(),
                reason: describe(&error),
            })
    }

    fn set(&self, status: Status, peer: Option<Peer<RoleClient>>, listing: Option<Listing>) {
        let mut state = self.state.lock().expect("connection state");
        state.status = status;
        state.peer = peer;
        if let Some(listing) = listing {
            state.listing = Arc::new(listing);
        }
        drop(state);
        self.changed.notify_waiters();
    }

    /// Starts the server's process, or reaches it, initialises the session and lists its tools.
    async fn start(&self) -> Result<Started, String> {
        let handler = Handler::default();
        let list_changed = Arc::clone(&handler.list_changed);
        let limit = self.limits.start_timeout;
        let late = || format!("it did not initialise within {} s", limit.as_secs());
        let (served, mut process) = match &self.config.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let started = stdio::start(command, args, env, cwd, self.limits.max_message_bytes)
                    .map_err(|error| format!("cannot start `{command}`: {error}"))?;
                let process = Process {
                    child: started.child,
                    last_words: started.last_words,
                    tripped: Arc::clone(&started.stdout.tripped),
                    max_message: self.limits.max_message_bytes,
                };
                let transport = AsyncRwTransport::new_client(started.stdout, started.stdin)
                    .with_max_line_length(self.limits.max_message_bytes);
                let served = tokio::time::timeout(limit, handler.serve(transport)).await;
                (served, Some(process))
            }
            Transport::Http {
                url,
                headers,
                token,
            } => {
                let config = http_config(url, headers, token.as_ref(), &self.limits)?;
                let transport = StreamableHttpClientTransport::from_config(config);
                let served = tokio::time::timeout(limit, handler.serve(transport)).await;
                (served, None)
            }
        };
        let service = match served {
            Ok(Ok(service)) => service,
            Ok(Err(error)) => {
                return Err(ended(&mut process, format!("it did not initialise: {error}")).await);
            }
            Err(_) => return Err(ended(&mut process, late()).await),
        };
        let peer = service.peer().clone();
        let listed = match self.list(&peer).await {
            Ok(listed) => listed,
            Err(reason) => return Err(ended(&mut process, reason).await),
        };
        self.set(Status::Connected, Some(peer), Some(listed));
        Ok(Started {
            service,
            process,
            list_changed,
        })
    }

    /// Serves a started server until it fails, listing its tools again whenever it says they
    /// changed; the reason it failed.
    async fn serve(&self, started: Started) -> String {
        let Started {
            service,
            mut process,
            list_changed,
        } = started;
        let peer = service.peer().clone();
        let waiting = service.waiting();
        tokio::pin!(waiting);
        loop {
            tokio::select! {
                quit = &mut waiting => {
                    let how = match quit {
                        Ok(reason) => format!("{reason:?}"),
                        Err(error) => error.to_string(),
                    };
                    return ended(&mut process, format!("the connection ended ({how})")).await;
                }
                () = list_changed.notified() => match self.list(&peer).await {
                    Ok(listed) => self.set(Status::Connected, Some(peer.clone()), Some(listed)),
                    Err(reason) => return ended(&mut process, reason).await,
                },
            }
        }
    }

    /// The server's tools, read page by page with `tools/list`, at most `max_list_pages` pages.
    async fn list(&self, peer: &Peer<RoleClient>) -> Result<Listing, String> {
        let mut tools: Vec<ServerTool> = Vec::new();
        let mut cursor = None;
        let mut more = false;
        for _ in 0..self.limits.max_list_pages {
            let params = PaginatedRequestParams::default().with_cursor(cursor.take());
            let page =
                tokio::time::timeout(self.limits.start_timeout, peer.list_tools(Some(params)))
                    .await
                    .map_err(|_| {
                        format!(
                            "it did not list its tools within {} s",
                            self.limits.start_timeout.as_secs()
                        )
                    })?
                    .map_err(|error| format!("it did not list its tools: {}", describe(&error)))?;
            tools.extend(page.tools);
            // Only as many as may be offered are kept, however many pages say more.
            if tools.len() > self.limits.max_tools {
                more = true;
                break;
            }
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
            more = cursor.is_some();
        }
        Ok(listing(&self.config.id, tools, more, &self.limits))
    }
}

/// A started server: its session, its process (for a stdio server), and the signal that its
/// tools changed.
struct Started {
    service: RunningService<RoleClient, Handler>,
    process: Option<Process>,
    list_changed: Arc<Notify>,
}

/// Why a connection ended: `reason`, with what its process says, for a stdio server, which is
/// ended too.
async fn ended(process: &mut Option<Process>, reason: String) -> String {
    match process {
        Some(process) => process.ended(reason).await,
        None => reason,
    }
}

/// How to reach `url` over streamable HTTP: `headers`, the token `token` gives, and the message
/// limit on every answer.
fn http_config(
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
    token: Option<&portal_identity::mcp::TokenSource>,
    limits: &McpLimits,
) -> Result<StreamableHttpClientTransportConfig, String> {
    let mut custom = std::collections::HashMap::new();
    for (name, value) in headers {
        // Checked when the configuration was read.
        if let (Ok(name), Ok(value)) = (
            http::HeaderName::from_bytes(name.as_bytes()),
            http::HeaderValue::from_str(value),
        ) {
            custom.insert(name, value);
        }
    }
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string())
        .custom_headers(custom)
        .max_sse_event_size(limits.max_message_bytes)
        .max_json_response_size(limits.max_message_bytes)
        .max_error_response_size(64 * 1024);
    if let Some(token) = token {
        config = config.auth_header(token.read()?);
    }
    Ok(config)
}

/// A server's process, to say why it ended and to end it.
struct Process {
    child: tokio::process::Child,
    last_words: stdio::LastWords,
    tripped: Arc<std::sync::atomic::AtomicBool>,
    max_message: usize,
}

impl Process {
    /// Ends the process and says why the connection ended: `reason`, or that a message was too
    /// large, with how the process exited and its last line on standard error.
    async fn ended(&mut self, reason: String) -> String {
        let reason = if self.tripped.load(Ordering::Relaxed) {
            stdio::oversized(self.max_message).to_string()
        } else {
            reason
        };
        let exited = match tokio::time::timeout(Duration::from_millis(200), self.child.wait()).await
        {
            Ok(Ok(status)) => Some(status),
            _ => None,
        };
        let _ = self.child.start_kill();
        let mut said = reason;
        if let Some(status) = exited {
            said.push_str(&format!("; the process exited ({status})"));
        }
        let last_words = self.last_words.lock().expect("last words").clone();
        if !last_words.is_empty() {
            said.push_str(&format!("; its last words on stderr: {last_words}"));
        }
        said
    }
}

/// The portal's side of a session: it answers no request of the server's, and listens for the
/// tool list changing.
#[derive(Debug, Clone, Default)]
struct Handler {
    list_changed: Arc<Notify>,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("portal", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// A service error in words for the model and the operator.
fn describe(error: &ServiceError) -> String {
    match error {
        ServiceError::McpError(data) => format!("error {}: {}", data.code.0, data.message),
        ServiceError::TransportClosed => {
            "the connection closed before it answered; the portal restarts the server".into()
        }
        other => other.to_string(),
    }
}
