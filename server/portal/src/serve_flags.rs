//! `portal serve`'s flags, grouped by what they configure: each group is flattened into the
//! command and turned into the configuration it sets.

use std::path::PathBuf;
use std::time::Duration;

use portal_server::{front, sessions};

use crate::Store;

/// `portal serve`: serve the web app and the HTTP API.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
    /// Port to listen on; 0 picks a free one.
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Folder holding the built web app (`trunk build --release` writes `dist/`).
    #[arg(long, default_value = "dist")]
    pub dist: PathBuf,
    /// Multiplies the demo model's pauses; 0 streams without pauses.
    #[arg(long, default_value_t = 1.0)]
    pub demo_pace: f64,
    /// The demo model's context window in tokens (128000 when left out); a few thousand
    /// shows automatic compaction after a few long messages. Ignored with --models.
    #[arg(long)]
    pub demo_window: Option<u64>,
    #[command(flatten)]
    pub store: Store,
    /// TOML file listing the models to offer (see docs/models.md); the demo model alone when
    /// left out.
    #[arg(long)]
    pub models: Option<PathBuf>,
    /// The configuration directory holding the organisations, agents, users and skills
    /// (docs/identity.md); local mode with the agent `assistant` when left out.
    #[arg(long)]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub limits: portal_server::limits::Limits,
    #[command(flatten)]
    pub http: HttpFlags,
    #[command(flatten)]
    pub streams: StreamFlags,
    #[command(flatten)]
    pub sessions: SessionFlags,
    #[command(flatten)]
    pub lifetimes: LifetimeFlags,
}

/// How long a connection may take, and whom local mode serves ([`front::HttpConfig`]).
#[derive(Debug, clap::Args)]
pub struct HttpFlags {
    /// Seconds a connection may take to send a request's head before it is closed.
    #[arg(long, value_name = "SECONDS", default_value_t = front::DEFAULT_HEADER_READ_TIMEOUT_SECS, value_parser = clap::value_parser!(u64).range(1..))]
    pub header_read_timeout: u64,
    /// Seconds a request, its body included, may take to be answered (uploads excepted; an
    /// event stream's answer starts at once and is not cut).
    #[arg(long, value_name = "SECONDS", default_value_t = front::DEFAULT_REQUEST_TIMEOUT_SECS, value_parser = clap::value_parser!(u64).range(1..))]
    pub request_timeout: u64,
    /// Seconds an upload (`POST /api/attachments`) may take to be sent and answered.
    #[arg(long, value_name = "SECONDS", default_value_t = front::DEFAULT_UPLOAD_TIMEOUT_SECS, value_parser = clap::value_parser!(u64).range(1..))]
    pub upload_timeout: u64,
    /// Serve local mode (no users, so no sign-in) on a non-loopback --host, to every machine
    /// that can reach it; refused without this flag.
    #[arg(long)]
    pub allow_remote_without_sign_in: bool,
}

impl HttpFlags {
    /// The connections' configuration these flags set.
    pub fn config(&self) -> front::HttpConfig {
        front::HttpConfig {
            header_read_timeout: Duration::from_secs(self.header_read_timeout),
            request_timeout: Duration::from_secs(self.request_timeout),
            upload_timeout: Duration::from_secs(self.upload_timeout),
            allow_remote_without_sign_in: self.allow_remote_without_sign_in,
        }
    }
}

/// Heartbeats, the idle limit and the linger of event streams
/// ([`portal_host::turn_log::StreamLimits`]).
#[derive(Debug, clap::Args)]
pub struct StreamFlags {
    /// Seconds without an event after which an event stream sends a heartbeat comment.
    #[arg(long, default_value_t = 15, value_parser = clap::value_parser!(u64).range(1..))]
    pub stream_heartbeat_seconds: u64,
    /// Seconds without an event after which an event stream closes (the browser reconnects
    /// on its own).
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..))]
    pub stream_idle_seconds: u64,
    /// Seconds the event log of a turn that ended or paused stays in memory; after that it
    /// is rebuilt from storage when read.
    #[arg(long, default_value_t = 600)]
    pub stream_linger_seconds: u64,
}

impl StreamFlags {
    /// The event streams' limits these flags set.
    pub fn limits(&self) -> portal_host::turn_log::StreamLimits {
        portal_host::turn_log::StreamLimits {
            heartbeat: Duration::from_secs(self.stream_heartbeat_seconds),
            idle: Duration::from_secs(self.stream_idle_seconds),
            linger: Duration::from_secs(self.stream_linger_seconds),
        }
    }
}

/// How long sign-in sessions last and where the portal is served from
/// ([`sessions::SessionConfig`]).
#[derive(Debug, clap::Args)]
pub struct SessionFlags {
    /// How long a sign-in session lasts after its last use: a number and a unit, `d`, `h`,
    /// `m` or `s` (14d, 12h, 30m).
    #[arg(long, default_value = "14d", value_parser = sessions::parse_lifetime)]
    pub session_lifetime: Duration,
    /// The address people open the portal at, such as https://chat.example.com, when it is
    /// served behind a proxy: the session cookie is `Secure` for https, and requests that
    /// change state must come from this origin.
    #[arg(long, value_parser = sessions::parse_public_url)]
    pub public_url: Option<String>,
    /// A proxy in front of the portal (an address, or a network such as 10.0.0.0/24; give
    /// it once per proxy): failed sign-ins from its connections are counted against the
    /// client its `X-Forwarded-For` names, not against the proxy (docs/deploy.md).
    #[arg(long = "trusted-proxy", value_name = "ADDRESS", value_parser = sessions::parse_trusted_proxy)]
    pub trusted_proxies: Vec<ipnet::IpNet>,
}

impl SessionFlags {
    /// The sessions' configuration these flags set.
    pub fn config(self) -> sessions::SessionConfig {
        sessions::SessionConfig {
            lifetime: self.session_lifetime,
            public_origin: self.public_url,
            trusted_proxies: self.trusted_proxies,
        }
    }
}

/// How long a replica's lease on a turn lasts, and how long running turns may go on once the
/// server is asked to stop.
#[derive(Debug, clap::Args)]
pub struct LifetimeFlags {
    /// Seconds a replica's lease on a turn it runs lasts unless renewed (it renews three
    /// times a lease); when a replica stops, another records its turns cut off about this
    /// long after. PostgreSQL only.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    pub turn_lease_seconds: u64,
    /// Seconds running turns may go on after SIGTERM or Ctrl-C before they are recorded cut
    /// off; meanwhile no turn starts here (docs/deploy.md, "Stopping"). Give systemd,
    /// Docker or Kubernetes more than this before they kill the process.
    #[arg(long, value_name = "SECONDS", default_value_t = portal_host::lifecycle::DEFAULT_SHUTDOWN_GRACE.as_secs())]
    pub shutdown_grace_seconds: u64,
    /// Seconds between two syncs of the collections kept from folders (docs/knowledge.md,
    /// "Folders").
    #[arg(long, value_name = "SECONDS", default_value_t = portal_server::knowledge_sync::DEFAULT_EVERY.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    pub knowledge_sync_seconds: u64,
}

impl LifetimeFlags {
    /// How often the collections kept from folders are synced.
    pub fn knowledge_sync(&self) -> Duration {
        Duration::from_secs(self.knowledge_sync_seconds)
    }

    /// A replica's lease on a turn it runs.
    pub fn turn_lease(&self) -> Duration {
        Duration::from_secs(self.turn_lease_seconds)
    }

    /// The grace running turns get once the server is asked to stop (rule D2).
    pub fn shutdown_grace(&self) -> Duration {
        Duration::from_secs(self.shutdown_grace_seconds)
    }
}
