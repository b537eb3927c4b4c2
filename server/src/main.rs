//! `portal`: the Portal server.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "portal", about = "Portal: an AI chat portal's server", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the web app and the HTTP API.
    Serve {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1")]
        host: std::net::IpAddr,
        /// Port to listen on; 0 picks a free one.
        #[arg(long, default_value_t = 8080)]
        port: u16,
        /// Folder holding the built web app (`trunk build --release` writes `dist/`).
        #[arg(long, default_value = "dist")]
        dist: PathBuf,
        /// Multiplies the demo model's pauses; 0 streams without pauses.
        #[arg(long, default_value_t = 1.0)]
        demo_pace: f64,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "portal_server=info".into()),
        )
        .init();
    match Cli::parse().command {
        Command::Serve {
            host,
            port,
            dist,
            demo_pace,
        } => {
            if !dist.join("index.html").is_file() {
                tracing::warn!(
                    "{} has no index.html: the API works, but there is no web app to serve; build it with `cargo xtask demo` or `trunk build --release`",
                    dist.display()
                );
            }
            let config = portal_server::Config { dist, demo_pace };
            let listener = tokio::net::TcpListener::bind(SocketAddr::new(host, port))
                .await
                .with_context(|| {
                    format!("cannot listen on {host}:{port}; pick another port with --port")
                })?;
            let address = listener.local_addr()?;
            println!("Portal is serving on http://{address}");
            portal_server::serve(listener, config).await
        }
    }
}
