//! Portal's native host: runs turns with portal-core, keeps conversations and streams their blocks.

pub mod api;
pub mod attachments;
pub mod compaction;
pub mod demo;
pub mod events;
pub mod identity;
pub mod model;
pub mod openai;
pub mod prompt_preview;
pub mod skills;
pub mod storage;
pub mod tokens;
pub mod tools;
pub mod turn;

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;

/// How the server is set up.
#[derive(Debug, Clone)]
pub struct Config {
    /// Folder of the built web app.
    pub dist: PathBuf,
    /// The data folder the SQLite database lives in.
    pub data: PathBuf,
    /// Multiplies the demo model's pauses.
    pub demo_pace: f64,
    /// The models to offer; the demo model alone when `None`.
    pub models: Option<model::ModelRegistry>,
    /// Organisations, users and agents; local mode when `None`.
    pub identity: Option<identity::Identity>,
    /// Heartbeats, the idle limit and the linger of event streams.
    pub streams: events::StreamLimits,
}

/// Opens the data folder, recovers turns a stopped process left running (rule M10), and serves
/// the API and the web app on `listener` until the process is stopped.
pub async fn serve(listener: tokio::net::TcpListener, config: Config) -> anyhow::Result<()> {
    let storage = storage::SqliteStorage::open(&config.data).with_context(|| {
        format!(
            "cannot open the data folder {}; pick another with --data",
            config.data.display()
        )
    })?;
    let recovered = storage::Storage::recover(&storage)?;
    if !recovered.is_empty() {
        tracing::info!(
            "{} turn(s) left running by a stopped process are now cut off",
            recovered.len()
        );
    }
    let models = config
        .models
        .clone()
        .unwrap_or_else(|| model::ModelRegistry::demo_only(config.demo_pace));
    let identity = Arc::new(
        config
            .identity
            .clone()
            .unwrap_or_else(identity::Identity::local),
    );
    let skills = Arc::new(skills::SkillLibrary::load(&identity)?);
    let mut tools = tools::ToolRegistry::standard();
    attachments::register(&mut tools, attachments::DocumentToolConfig::default());
    tools.register(Arc::new(skills::LoadSkill {
        identity: Arc::clone(&identity),
        library: Arc::clone(&skills),
    }));
    let turns = turn::Turns::new(Arc::new(storage), tools, config.streams);
    let state = api::AppState::new(turns, models, identity, skills);
    let app = api::router(state, &config.dist);
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
