//! `portal`: the Portal server.

mod serve_flags;

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};
use portal_host::lifecycle::Phase;
use portal_server::{front, prompt_preview};
use serve_flags::ServeArgs;

#[derive(Debug, Parser)]
#[command(
    name = "portal",
    about = "Portal: an AI chat portal's server",
    version = version_text()
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
#[allow(
    clippy::large_enum_variant,
    reason = "made once, when the command line is read"
)]
enum Command {
    /// Serve the web app and the HTTP API.
    Serve(ServeArgs),
    /// Add users and set their passwords in a configuration directory (docs/identity.md).
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// Print the exact request a model would receive if MESSAGE were sent now.
    Prompt {
        /// The conversation so far, in the transcript format (docs/transcript-format.md).
        #[arg(long)]
        transcript: PathBuf,
        /// The agent's file (`agents/<id>.toml`, docs/identity.md).
        #[arg(long)]
        agent: PathBuf,
        /// The message as typed, `/slug` tokens included.
        #[arg(long)]
        message: String,
        /// A file holding the instructions of the project the conversation is in (docs/projects.md),
        /// read as the prompt's layer 3, "Project instructions"; none without it.
        #[arg(long)]
        project_instructions: Option<PathBuf>,
        /// The configuration directory holding the agent and its skills (docs/identity.md).
        #[arg(long)]
        config: Option<PathBuf>,
        /// The models file (docs/models.md); the demo model alone without it.
        #[arg(long)]
        models: Option<PathBuf>,
        /// Whose view of the skills to take, when the configuration has users.
        #[arg(long)]
        user: Option<String>,
        /// Overrides the agent's effort for this message.
        #[arg(long, value_parser = parse_effort)]
        effort: Option<portal_core::effort::Effort>,
        /// The request shape; defaults to the model's provider.
        #[arg(long, value_enum)]
        format: Option<prompt_preview::Format>,
    },
    /// Print what model calls spent, per day, user, model or agent (docs/usage.md).
    Usage(UsageArgs),
    /// Read a PDF from standard input within the limits given, reporting each page on standard
    /// output: how `portal serve` reads an upload, in a process of its own.
    #[command(hide = true)]
    ReadPdf {
        /// The limits, as `portal serve` writes them.
        #[arg(long)]
        limits: String,
    },
}

/// Where the conversations are kept, as `portal serve` and `portal usage` take it.
#[derive(Debug, clap::Args)]
struct Store {
    /// Folder holding the conversations (SQLite); `portal serve` creates it when missing. The
    /// same as `--database sqlite://FOLDER`.
    #[arg(long, default_value = portal_store::DEFAULT_DATA_DIR)]
    data: PathBuf,
    /// The database holding the conversations: `sqlite://FOLDER` (what --data gives) or
    /// `postgres://USER@HOST:PORT/DATABASE`, with `?sslmode=verify-full&sslrootcert=CA.pem`
    /// for TLS (docs/deploy.md). Its password comes from PORTAL_DATABASE_PASSWORD or
    /// --database-password-file; one in the URL works, with a warning, as `ps` shows it.
    #[arg(long, value_name = "URL", conflicts_with = "data")]
    database: Option<portal_store::Location>,
    /// A file holding the PostgreSQL password (a newline at its end is left out), for a
    /// --database URL without one; readable by its owner alone (chmod 600), else a warning.
    #[arg(long, value_name = "PATH")]
    database_password_file: Option<PathBuf>,
}

impl Store {
    /// The database, with its password where one is given apart, saying on standard error what
    /// about the password should change.
    fn location(self) -> anyhow::Result<portal_store::Location> {
        let (database, warnings) = self
            .database
            .unwrap_or(portal_store::Location::Sqlite(self.data))
            .with_password(&portal_store::PasswordSources {
                file: self.database_password_file,
                environment: std::env::var(portal_store::PASSWORD_VARIABLE).ok(),
            })?;
        for warning in warnings {
            eprintln!("Warning: {warning}");
        }
        Ok(database)
    }
}

#[derive(Debug, clap::Args)]
struct UsageArgs {
    /// The configuration directory (docs/identity.md): --org and --user are checked against it.
    #[arg(long)]
    config: Option<PathBuf>,
    #[command(flatten)]
    store: Store,
    /// Only this organisation's usage; every organisation's when left out.
    #[arg(long, value_name = "ORG")]
    org: Option<String>,
    /// Only this user's usage; needs --org.
    #[arg(long, value_name = "USER", requires = "org")]
    user: Option<String>,
    /// The first day counted (UTC), YYYY-MM-DD.
    #[arg(long, value_name = "YYYY-MM-DD")]
    since: Option<String>,
    /// The last day counted (UTC, the whole day), YYYY-MM-DD.
    #[arg(long, value_name = "YYYY-MM-DD")]
    until: Option<String>,
    /// A line per day, user, model or agent.
    #[arg(long, default_value = "day", value_parser = grouping)]
    by: portal_store::UsageGrouping,
    /// Print the report as JSON instead of a table.
    #[arg(long)]
    json: bool,
}

fn grouping(name: &str) -> Result<portal_store::UsageGrouping, String> {
    portal_store::usage::parse_grouping(name).map_err(|e| e.to_string())
}

#[derive(Debug, Subcommand)]
enum UserCommand {
    /// Add a user who signs in with a password, read from standard input (its first line) or
    /// asked for twice at a terminal. A new organisation's folder is made too.
    Add {
        /// The configuration directory (`portal serve --config DIR`).
        #[arg(long)]
        config: PathBuf,
        /// The user's name as the portal shows it; the user's id when left out.
        #[arg(long)]
        name: Option<String>,
        /// The organisation's id.
        organisation: String,
        /// The user's id: what they type to sign in.
        user: String,
    },
    /// Set an existing user's password, read as `add` reads it. Sessions signed in with the
    /// old password end once the portal is restarted with the new one.
    Passwd {
        /// The configuration directory (`portal serve --config DIR`).
        #[arg(long)]
        config: PathBuf,
        /// The organisation's id.
        organisation: String,
        /// The user's id.
        user: String,
    },
}

/// The new password: asked for twice at a terminal, else the first line of standard input.
fn read_password() -> anyhow::Result<String> {
    use std::io::{BufRead, IsTerminal};
    if std::io::stdin().is_terminal() {
        let first = rpassword::prompt_password("New password: ")?;
        let again = rpassword::prompt_password("The same password again: ")?;
        anyhow::ensure!(
            first == again,
            "the two passwords differ; nothing was changed"
        );
        return Ok(first);
    }
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(line.trim_end_matches(['\n', '\r']).to_string())
}

/// What `portal --version` prints after the name: the build's version and the schema version it
/// migrates each database to, such as `0.1.0 (schema versions: SQLite 4, PostgreSQL 3)`.
fn version_text() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        format!(
            "{} (schema versions: {})",
            env!("CARGO_PKG_VERSION"),
            portal_server::SCHEMA_VERSIONS
        )
    })
}

fn parse_effort(text: &str) -> Result<portal_core::effort::Effort, String> {
    serde_json::from_value(serde_json::Value::String(text.to_string()))
        .map_err(|_| format!("`{text}` is not an effort level; use low, medium or high"))
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    // A PDF reader runs on this thread alone, without the async runtime's threads.
    if let Command::ReadPdf { limits } = &cli.command {
        return Ok(portal_attachments::run_reader(limits)?);
    }
    // PostgreSQL's blocking client may not run on the async runtime's threads.
    if let Command::Usage(args) = cli.command {
        return usage(args);
    }
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("the async runtime could not start")?
        .block_on(run(cli))
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                // Targets match by prefix: this binary's own (`portal`) and the library's.
                .unwrap_or_else(|_| "portal=info".into()),
        )
        .init();
    match cli.command {
        Command::Serve(ServeArgs {
            host,
            port,
            dist,
            demo_pace,
            demo_window,
            store,
            models,
            config,
            limits,
            http,
            streams,
            sessions,
            lifetimes,
        }) => {
            if !dist.join("index.html").is_file() {
                tracing::warn!(
                    "{} has no index.html: the API works, but there is no web app to serve; build it with `cargo xtask demo` or `trunk build --release`",
                    dist.display()
                );
            }
            let models = match models {
                Some(path) => portal_model::ModelRegistry::load(&path, demo_pace)
                    .with_context(|| format!("cannot use the models file {}", path.display()))?,
                None => match demo_window {
                    Some(window) => {
                        portal_model::ModelRegistry::demo_with_window(demo_pace, window)
                    }
                    None => portal_model::ModelRegistry::demo_only(demo_pace),
                },
            };
            let identity = config
                .map(|dir| {
                    portal_identity::Identity::load(&dir).with_context(|| {
                        format!("cannot use the configuration directory {}", dir.display())
                    })
                })
                .transpose()?;
            let mode = identity
                .as_ref()
                .map_or(portal_identity::Mode::Local, |i| i.mode());
            // On standard error, as a refusal would be, whatever the log's filter keeps.
            if let Some(warning) =
                front::check_listen_address(host, mode, http.allow_remote_without_sign_in)?
            {
                eprintln!("Warning: {warning}");
            }
            let database = store.location()?;
            let config = portal_server::Config {
                dist,
                database,
                demo_pace,
                models: Some(models),
                identity,
                limits,
                http: http.config(),
                streams: streams.limits(),
                turn_lease: lifetimes.turn_lease(),
                sessions: sessions.config(),
                pdf_reader: None,
                shutdown_grace: lifetimes.shutdown_grace(),
                knowledge_sync: lifetimes.knowledge_sync(),
                mcp: Default::default(),
            };
            let listener = tokio::net::TcpListener::bind(SocketAddr::new(host, port))
                .await
                .with_context(|| {
                    format!("cannot listen on {host}:{port}; pick another port with --port")
                })?;
            let address = listener.local_addr()?;
            let lifecycle = portal_host::lifecycle::Lifecycle::new();
            let ready = lifecycle.clone();
            tokio::spawn(async move {
                ready.reached(Phase::Ready).await;
                if ready.phase() == Phase::Ready {
                    println!("Portal is serving on http://{address}");
                }
            });
            println!("Portal is starting on http://{address} (/healthz, /readyz)");
            portal_server::serve_until(listener, config, lifecycle, portal_server::stop_asked())
                .await
        }
        Command::User { command } => {
            let written = match command {
                UserCommand::Add {
                    config,
                    name,
                    organisation,
                    user,
                } => {
                    let password = read_password()?;
                    let name = name.unwrap_or_else(|| user.clone());
                    portal_identity::add_user(&config, &organisation, &user, &name, &password)?
                }
                UserCommand::Passwd {
                    config,
                    organisation,
                    user,
                } => {
                    let password = read_password()?;
                    portal_identity::set_password(&config, &organisation, &user, &password)?
                }
            };
            println!(
                "wrote {}; restart `portal serve` to apply it",
                written.display()
            );
            Ok(())
        }
        Command::ReadPdf { .. } => unreachable!("a PDF reader runs before the runtime starts"),
        Command::Usage(_) => unreachable!("the usage report runs before the runtime starts"),
        Command::Prompt {
            transcript,
            agent,
            message,
            project_instructions,
            config,
            models,
            user,
            effort,
            format,
        } => {
            let preview = prompt_preview::preview(&prompt_preview::PreviewRequest {
                transcript,
                agent,
                message,
                project_instructions,
                config,
                models,
                user,
                effort,
                format,
            })?;
            for note in &preview.notes {
                eprintln!("note: {note}");
            }
            println!("{}", serde_json::to_string_pretty(&preview.body)?);
            Ok(())
        }
    }
}

/// `portal usage`: the report, read from the server's database.
fn usage(args: UsageArgs) -> anyhow::Result<()> {
    use portal_store::{Location, Storage, UsageQuery};
    use portal_store_postgres::PostgresStorage;
    use portal_store_sqlite::SqliteStorage;

    let (since_ms, until_ms) =
        portal_store::usage::period(args.since.as_deref(), args.until.as_deref())?;
    if let Some(dir) = &args.config {
        let identity = portal_identity::Identity::load(dir)
            .with_context(|| format!("cannot use the configuration directory {}", dir.display()))?;
        if let Some(org) = &args.org {
            match identity.organisation(org) {
                None => eprintln!(
                    "note: {} has no organisation `{org}`; its rows are reported if the database has any",
                    dir.display()
                ),
                Some(_) => {
                    if let Some(user) = &args.user
                        && identity.user(org, user).is_none()
                    {
                        eprintln!(
                            "note: {} has no user `{user}` in `{org}`; their rows are reported if the database has any",
                            dir.display()
                        );
                    }
                }
            }
        }
    }
    let database = args.store.location()?;
    let storage: Box<dyn Storage> = match &database {
        Location::Sqlite(dir) => {
            let file = dir.join(portal_store_sqlite::DATABASE_FILE);
            if !file.is_file() {
                anyhow::bail!(
                    "there is no database in {}; point --data (or --database) at the folder `portal serve` keeps its conversations in",
                    dir.display()
                );
            }
            Box::new(SqliteStorage::open_without_migrating(dir)?)
        }
        Location::Postgres(url) => Box::new(PostgresStorage::connect_without_migrating(url)?),
    };
    let query = UsageQuery {
        org_id: args.org,
        user_id: args.user,
        since_ms,
        until_ms,
        by: args.by,
    };
    let report = portal_store::usage::Report::new(args.by, storage.usage_report(&query)?);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", portal_store::usage::table(&report));
    }
    Ok(())
}
