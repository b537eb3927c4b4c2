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
pub mod store;
pub mod tokens;
pub mod tools;
pub mod turn;

use std::path::PathBuf;
use std::sync::Arc;

/// How the server is set up.
#[derive(Debug, Clone)]
pub struct Config {
    /// Folder of the built web app.
    pub dist: PathBuf,
    /// Multiplies the demo model's pauses.
    pub demo_pace: f64,
    /// The models to offer; the demo model alone when `None`.
    pub models: Option<model::ModelRegistry>,
}

/// Serves the API and the web app on `listener` until the process is stopped.
pub async fn serve(listener: tokio::net::TcpListener, config: Config) -> anyhow::Result<()> {
    let models = config
        .models
        .clone()
        .unwrap_or_else(|| model::ModelRegistry::demo_only(config.demo_pace));
    let model: Arc<dyn model::Model> = Arc::clone(models.default_model());
    let state = api::AppState::new(model);
    let app = api::router(state, &config.dist);
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
