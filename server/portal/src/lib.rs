//! Portal's server: the HTTP API and the web app (`api`), sign-in (`sessions`, `sso`), the limits
//! every request is held to (`limits`) and the connections' front (`front`), over the crates
//! below it: the database it chooses at start (SQLite or PostgreSQL), the models, identity,
//! tools, attachments and the turn host.

mod allocator;
pub mod api;
mod app;
pub mod front;
pub mod knowledge_sync;
pub mod limits;
pub mod openai_api;
pub mod prompt_preview;
pub mod sessions;
pub mod sso;

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use portal_store::SchemaVersions;

/// The schema versions this build knows and migrates a database to, one per database: what
/// `portal --version` prints, and what a readiness probe may report.
pub const SCHEMA_VERSIONS: SchemaVersions = SchemaVersions {
    sqlite: portal_store_sqlite::SCHEMA_VERSION,
    postgres: portal_store_postgres::SCHEMA_VERSION,
};

/// How the server is set up.
#[derive(Debug, Clone)]
pub struct Config {
    /// Folder of the built web app.
    pub dist: PathBuf,
    /// Where conversations are kept: a SQLite data folder (`--data`) or PostgreSQL
    /// (`--database`).
    pub database: portal_store::Location,
    /// Multiplies the demo model's pauses.
    pub demo_pace: f64,
    /// The models to offer; the demo model alone when `None`.
    pub models: Option<portal_model::ModelRegistry>,
    /// Organisations, users and agents; local mode when `None`.
    pub identity: Option<portal_identity::Identity>,
    /// What one request and one user may take (docs/security.md, "Limits").
    pub limits: limits::Limits,
    /// Timeouts, and what local mode serves.
    pub http: front::HttpConfig,
    /// Heartbeats, the idle limit and the linger of event streams.
    pub streams: portal_host::turn_log::StreamLimits,
    /// How long a replica's lease on a turn it runs lasts unless renewed (PostgreSQL only).
    pub turn_lease: std::time::Duration,
    /// How long sign-in sessions last, and the portal's public origin.
    pub sessions: sessions::SessionConfig,
    /// The `portal` program that reads PDFs in reader processes (`portal read-pdf`); this
    /// process's own program when `None`.
    pub pdf_reader: Option<PathBuf>,
    /// How long running turns may go on once the server is asked to stop (rule D2).
    pub shutdown_grace: std::time::Duration,
    /// How often the collections kept from folders are synced.
    pub knowledge_sync: std::time::Duration,
    /// What MCP servers are held to (docs/tools.md).
    pub mcp: portal_tools::mcp::McpLimits,
}

impl Config {
    /// Local mode on the data folder `data` with no web app to serve, the demo model without
    /// pauses and every default: the server benches, fuzz targets and tests start from.
    pub fn local(data: impl Into<PathBuf>) -> Config {
        let data = data.into();
        Config {
            dist: data.join("no-dist"),
            database: portal_store::Location::Sqlite(data),
            demo_pace: 0.0,
            models: None,
            identity: None,
            limits: limits::Limits::DEFAULT,
            http: front::HttpConfig::default(),
            streams: Default::default(),
            turn_lease: portal_host::replicas::DEFAULT_LEASE,
            sessions: Default::default(),
            pdf_reader: None,
            shutdown_grace: portal_host::lifecycle::DEFAULT_SHUTDOWN_GRACE,
            knowledge_sync: knowledge_sync::DEFAULT_EVERY,
            mcp: portal_tools::mcp::McpLimits::default(),
        }
    }
}

/// Serves `config` on `listener` until the process is asked to stop (SIGTERM or Ctrl-C), then
/// stops gracefully ([`serve_until`]). Where `listener` may listen is checked before, by
/// [`front::check_listen_address`].
pub async fn serve(listener: tokio::net::TcpListener, config: Config) -> anyhow::Result<()> {
    serve_until(
        listener,
        config,
        portal_host::lifecycle::Lifecycle::new(),
        stop_asked(),
    )
    .await
}

/// Serves on `listener` at once, the probes answering while the database opens ([`Server::open`];
/// other requests wait for it), and `config`'s server once it is open, until `stop` completes;
/// then stops (rules D1 to D3): readiness fails and no turn starts; running turns get the grace
/// to end and are cut off at its end; event streams end asking their readers to reconnect; the
/// listener closes and open requests get a moment to finish. `lifecycle` says where it is.
pub async fn serve_until(
    listener: tokio::net::TcpListener,
    config: Config,
    lifecycle: portal_host::lifecycle::Lifecycle,
    stop: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    allocator::return_large_buffers();
    let schema = SCHEMA_VERSIONS.of(&config.database);
    let front = front::Front::new(lifecycle.clone(), schema, config.http.request_timeout);
    let serving = tokio::spawn(front::serve_connections(
        listener,
        front.router(),
        config.http.clone(),
        {
            let lifecycle = lifecycle.clone();
            async move {
                lifecycle
                    .reached(portal_host::lifecycle::Phase::Closing)
                    .await
            }
        },
    ));
    let opening = {
        let lifecycle = lifecycle.clone();
        tokio::task::spawn_blocking(move || {
            Server::open_in(&config, lifecycle).map(|s| (s, config))
        })
    };
    let (server, config) = match opening.await.context("opening the server stopped")? {
        Ok(opened) => opened,
        Err(error) => {
            lifecycle.enter(portal_host::lifecycle::Phase::Closing);
            let _ = serving.await;
            return Err(error);
        }
    };
    front.open(server.app.clone(), server.turns.storage().clone());
    lifecycle.enter(portal_host::lifecycle::Phase::Ready);
    stop.await;
    lifecycle.enter(portal_host::lifecycle::Phase::Stopping);
    tracing::info!(
        "stopping: no new turns; running turns have {} s to end",
        config.shutdown_grace.as_secs()
    );
    let stopped = server.turns.stop(config.shutdown_grace).await;
    tracing::info!(
        "stopping: {} turn(s) were running, {} cut off at the grace's end; closing connections",
        stopped.running,
        stopped.cut_off
    );
    lifecycle.enter(portal_host::lifecycle::Phase::Closing);
    serving.await.context("serving stopped")?;
    drop(server);
    Ok(())
}

/// SIGTERM (what systemd, Docker and Kubernetes send) or Ctrl-C.
pub async fn stop_asked() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::warn!("SIGTERM cannot be caught ({error}); only Ctrl-C stops gracefully");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
    }
}

/// A server ready to serve: its database locked for it (a SQLite data folder) or joined as a
/// replica (PostgreSQL), recovered, and its API built.
#[derive(Debug)]
pub struct Server {
    _lock: Option<portal_store_sqlite::DataLock>,
    app: axum::Router,
    turns: Arc<portal_host::turn::Turns>,
}

impl Server {
    /// Opens the database: a SQLite data folder is locked for this server (a second is refused,
    /// naming it); on PostgreSQL this server is one replica of any number. Recovers the turns a
    /// stopped process left running (rule M10), and builds the API and the web app.
    ///
    /// This runs before anything but the probes is served, so its database work blocks nothing
    /// else; once serving, async code reaches the database through [`portal_store::AsyncStorage`].
    pub fn open(config: &Config) -> anyhow::Result<Server> {
        Server::open_in(config, portal_host::lifecycle::Lifecycle::new())
    }

    /// [`Server::open`], its event streams ending when `lifecycle` closes.
    fn open_in(
        config: &Config,
        lifecycle: portal_host::lifecycle::Lifecycle,
    ) -> anyhow::Result<Server> {
        // Opening and recovering block, and the PostgreSQL client may not block on an async
        // thread, so they run on a thread of their own.
        let Opened {
            storage,
            lock,
            shared,
        } = std::thread::scope(|scope| {
            scope
                .spawn(|| open_database(&config.database))
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })?;
        let replica = shared
            .map(|shared| {
                tokio::runtime::Handle::try_current().context(
                    "a replica on PostgreSQL runs its work in the background, so it is opened inside a tokio runtime",
                )?;
                portal_host::replicas::Replica::start(shared, config.turn_lease, config.streams.linger)
                    .map_err(anyhow::Error::from)
            })
            .transpose()?;
        let models = config
            .models
            .clone()
            .unwrap_or_else(|| portal_model::ModelRegistry::demo_only(config.demo_pace));
        let identity = Arc::new(
            config
                .identity
                .clone()
                .unwrap_or_else(portal_identity::Identity::local),
        );
        let skills = Arc::new(portal_tools::skills::SkillLibrary::load(&identity)?);
        let mcp = Arc::new(portal_tools::mcp::McpServers::start(&identity, &config.mcp));
        let mut tools = portal_tools::ToolRegistry::standard()
            .with_source(mcp.clone())
            .with_source(Arc::new(portal_knowledge::KnowledgeTools));
        portal_attachments::register(
            &mut tools,
            portal_attachments::DocumentToolConfig::default(),
        );
        tools.register(Arc::new(portal_tools::skills::LoadSkill {
            identity: Arc::clone(&identity),
            library: Arc::clone(&skills),
        }));
        for agent in identity.organisations().flat_map(|o| &o.agents) {
            tools.check_agent(agent)?;
        }
        let pictures = portal_attachments::ModelPictures::new(
            config.limits.uploads.clone(),
            config.limits.picture_decodes,
            config.limits.upload_quota_bytes,
        );
        let turns = portal_host::turn::Turns::new(
            storage,
            tools,
            config.streams,
            pictures,
            lifecycle.clone(),
            replica,
        );
        let mode = identity.mode();
        let pdf_reader = config
            .pdf_reader
            .clone()
            .unwrap_or_else(portal_attachments::this_program);
        if identity
            .organisations()
            .any(|o| !o.knowledge_folders.is_empty())
        {
            let handle = tokio::runtime::Handle::try_current().context(
                "collections kept from folders are synced in the background, so the server is opened inside a tokio runtime",
            )?;
            // Folders are read one PDF at a time, beside the uploads' reader places.
            let sync = knowledge_sync::Sync {
                storage: turns.storage().clone(),
                identity: Arc::clone(&identity),
                readers: portal_attachments::PdfReaders::new(
                    pdf_reader.clone(),
                    config.limits.uploads.pdf_limits(),
                    1,
                ),
                limits: config.limits.knowledge(),
                max_bytes: config.limits.uploads.max_bytes,
            };
            let every = config.knowledge_sync;
            handle.spawn(async move {
                tokio::select! {
                    () = sync.run(every) => {}
                    () = lifecycle.reached(portal_host::lifecycle::Phase::Stopping) => {}
                }
            });
        }
        let state = api::AppState::new(
            Arc::clone(&turns),
            models,
            identity,
            skills,
            config.limits.clone(),
            config.sessions.clone(),
            pdf_reader,
        )
        .map_err(anyhow::Error::msg)?
        .with_mcp(mcp);
        let app = app::router(state, &config.dist);
        Ok(Server {
            _lock: lock,
            app: front::protect(app, &config.http, mode, &config.dist),
            turns,
        })
    }

    /// What the server answers requests with, behind its protections, for calling it in this
    /// process (the request fuzz target) rather than over a connection.
    pub fn router(&self) -> axum::Router {
        self.app.clone()
    }
}

/// A database opened for a server.
struct Opened {
    storage: Arc<dyn portal_store::Storage>,
    /// The data folder's lock, for SQLite.
    lock: Option<portal_store_sqlite::DataLock>,
    /// The database replicas share, for PostgreSQL.
    shared: Option<Arc<portal_store_postgres::PostgresStorage>>,
}

/// Opens the database at `location` and recovers the turns a stopped process left running
/// (rule M10): on SQLite every running turn, as the folder is this server's alone, and the
/// documents it left reading; on PostgreSQL the turns whose lease ran out.
fn open_database(location: &portal_store::Location) -> anyhow::Result<Opened> {
    let opened = match location {
        portal_store::Location::Sqlite(dir) => {
            let lock = portal_store_sqlite::DataLock::acquire(dir)?;
            // A folder a newer build migrated says what to do itself; another folder is not it.
            let storage =
                portal_store_sqlite::SqliteStorage::open(dir).map_err(|error| match error {
                    too_new @ portal_store::StorageError::SchemaTooNew { .. } => {
                        anyhow::Error::new(too_new)
                    }
                    other => anyhow::Error::new(other).context(format!(
                        "cannot open the data folder {}; pick another with --data",
                        dir.display()
                    )),
                })?;
            let recovered = portal_store::Storage::recover(&storage)?;
            if !recovered.is_empty() {
                tracing::info!(
                    "{} turn(s) left running by a stopped process are now cut off",
                    recovered.len()
                );
            }
            for document in portal_store::Storage::recover_documents(&storage)? {
                tracing::warn!(
                    "document {} of organisation {} was being read when a process stopped; it is now failed, and can be uploaded again",
                    document.attachment_id,
                    document.org_id
                );
            }
            Opened {
                storage: Arc::new(storage),
                lock: Some(lock),
                shared: None,
            }
        }
        portal_store::Location::Postgres(url) => {
            let storage = Arc::new(portal_store_postgres::PostgresStorage::connect(url)?);
            let recovered = portal_host::replicas::Replica::cut_off_expired(&storage)?;
            if !recovered.is_empty() {
                tracing::info!(
                    "{} turn(s) whose replica stopped are now cut off",
                    recovered.len()
                );
            }
            Opened {
                storage: Arc::clone(&storage) as Arc<dyn portal_store::Storage>,
                lock: None,
                shared: Some(storage),
            }
        }
    };
    Ok(opened)
}
