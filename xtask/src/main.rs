//! `cargo xtask setup | test | check-deploy | package | dist | demo | bench | fuzz | postgres`:
//! Portal's developer commands.

mod bench;
mod deploy;
mod fuzz;
mod native_tests;
mod package;
mod postgres;
mod run;
mod setup;
mod sizes;

use std::path::PathBuf;

use anyhow::{Context, bail};

const USAGE: &str = "usage: cargo xtask <command>

commands:
  setup              install what the build, tests and benches need (idempotent; checks exact
                     versions)
  test               setup, then fmt, the deploy recipe's checks (as check-deploy), clippy,
                     native tests (given a throwaway PostgreSQL in PORTAL_TEST_POSTGRES, with
                     PORTAL_REQUIRE_POSTGRES=1), wasm tests in headless Chromium, the npm package
                     (packed, installed into a fresh project and used from Node, an esbuild page in
                     Chromium and tsc), the Trunk release build, the size budgets and the browser
                     end-to-end tests
  test-native        the native tests alone, as `test` runs them: built once, then the test
                     binaries that measure their process's memory or CPU time in a lane of their
                     own beside the others, on a throwaway PostgreSQL; then the doc tests
  check-deploy       install kubernetes-validate and hadolint (a virtualenv in target/tools/venv)
                     and systemd-analyze if missing, then check deploy/: the Kubernetes manifests
                     (strict, Kubernetes 1.33 and 1.37), the Dockerfile (hadolint), the systemd
                     unit (systemd-analyze verify), and that each waits longer than the grace
  package [--check]  install what it needs (the wasm tools, the Node tools, Chromium), then build
                     the npm package of portal-wasm into target/npm/portal-wasm, pack
                     target/npm/portal-wasm-<version>.tgz and check its size budgets; --check
                     then uses it as `test` does (installed into target/npm/consumer: Node, an
                     esbuild page in Chromium, tsc, npm publish --dry-run)
  dist [--out DIR]   install what serving needs (the wasm target, wasm-bindgen-cli, Trunk,
                     wasm-opt), build the web app (Trunk, release) into DIR/dist and the server
                     (release) into DIR/portal (default DIR: target/portal-dist); what
                     deploy/Dockerfile runs
  demo [--port N]    install what serving needs (as dist), build the web app (release) and serve
                     the portal (default port 8080)
  bench              setup (with PostgreSQL's HTML documentation, the knowledge bench's corpus),
                     criterion benchmarks of core, the server's benches: the load bench, two
                     replicas on a throwaway PostgreSQL (PORTAL_TEST_POSTGRES) next to one on
                     SQLite, the usage report, knowledge retrieval (recall on PostgreSQL's
                     documentation, latency at 100,000 passages; writes
                     target/bench/knowledge.json), a call's prompt and the conversation list at
                     10,000 conversations, then the browser playout bench: prose at 200 and 2,000
                     characters a second, markdown at 2,000 (writes target/bench/playout.json)
  fuzz [seconds] [target...]
                     every fuzz target (or those named) for `seconds` each (default 60), seeded
                     from the fixtures
  postgres           install PostgreSQL 15 if missing, start a throwaway cluster for `cargo test`
                     by hand, print its URL as `export PORTAL_TEST_POSTGRES=...`, and keep it
                     until Ctrl-C or the end of standard input (Ctrl-D), then stop and delete it";

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = run::workspace_root()?;
    std::env::set_current_dir(&root).context("cannot enter the workspace root")?;
    run::extend_path(&root);
    match args.first().map(String::as_str) {
        Some("setup") => setup::everything(),
        Some("test") => test(),
        Some("test-native") => {
            setup::postgres()?;
            let postgres = postgres::Cluster::start()?;
            native_tests::run(&postgres.test_env())
        }
        Some("package") => {
            let check = match &args[1..] {
                [] => false,
                [flag] if flag == "--check" => true,
                _ => bail!("usage: cargo xtask package [--check]"),
            };
            setup::package()?;
            let tarball = package::build()?;
            println!("xtask: the package is {}", tarball.display());
            if check {
                package::check(&tarball)?;
            }
            Ok(())
        }
        Some("check-deploy") => {
            setup::deploy_checks()?;
            deploy::check()
        }
        Some("dist") => dist(&args[1..]),
        Some("demo") => demo(&args[1..]),
        Some("bench") => bench::all(),
        Some("fuzz") => fuzz::all(&args[1..]),
        Some("postgres") => {
            setup::postgres()?;
            postgres::serve()
        }
        Some("help" | "--help" | "-h") => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => bail!("unknown command `{other}`\n\n{USAGE}"),
        None => bail!("no command given\n\n{USAGE}"),
    }
}

fn test() -> anyhow::Result<()> {
    setup::all()?;
    run::step(
        "Checking formatting",
        "cargo",
        &["fmt", "--all", "--", "--check"],
    )?;
    deploy::check()?;
    run::step(
        "Linting native crates",
        "cargo",
        &["clippy", "--all-targets", "--", "-D", "warnings"],
    )?;
    run::step(
        "Linting browser crates",
        "cargo",
        &[
            "clippy",
            "--target",
            "wasm32-unknown-unknown",
            "-p",
            "portal-web",
            "-p",
            "portal-drawer",
            "-p",
            "portal-wasm",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
    )?;
    // Linted with the others, the drawer has the package's `diagrams`; the web app builds it
    // without.
    run::step(
        "Linting the drawer as the web app builds it (without diagrams)",
        "cargo",
        &[
            "clippy",
            "--target",
            "wasm32-unknown-unknown",
            "-p",
            "portal-drawer",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
    )?;
    run::step(
        "Linting the playout-only package build",
        "cargo",
        &[
            "clippy",
            "--target",
            "wasm32-unknown-unknown",
            "-p",
            "portal-wasm",
            "--no-default-features",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
    )?;
    // The native tests' PostgreSQL; dropping it stops it, on the error path too.
    let postgres = postgres::Cluster::start()?;
    native_tests::run(&postgres.test_env())?;
    drop(postgres);
    run::step_in(
        "Running wasm tests in headless Chromium",
        "wasm-pkg",
        "wasm-pack",
        &["test", "--headless", "--chrome"],
    )?;
    run::step_in(
        "Running the drawer's wasm tests in headless Chromium",
        "drawer",
        "wasm-pack",
        &[
            "test",
            "--headless",
            "--chrome",
            "--",
            "--features",
            "diagrams",
        ],
    )?;
    let tarball = package::build()?;
    package::check(&tarball)?;
    build_web("dist")?;
    sizes::web_app_budget()?;
    // The end-to-end tests run the `portal` that the native tests' build made (the server's
    // integration tests run it too): `cargo build -p portal-server` alone would resolve other
    // features for its dependencies and build them all again, some three minutes on a cold
    // machine.
    let portal = target_dir()?.join("debug").join("portal");
    if !portal.is_file() {
        bail!(
            "the native tests' build made no {}; run `cargo test --no-run`",
            portal.display()
        );
    }
    run::step(
        "Running browser end-to-end tests",
        "node",
        &["--test", "--test-concurrency=1", "tests/e2e/"],
    )?;
    println!("xtask: all checks passed");
    Ok(())
}

/// The web app, built by Trunk with the size-first profile (`release-wasm`, set in index.html),
/// into `dist`. Trunk's `--offline` reaches its cargo build too, so the crates are fetched first:
/// a machine whose cargo has never built the web app (a container's build) has none of them.
fn build_web(dist: &str) -> anyhow::Result<()> {
    run::step(
        "Fetching the crates Cargo.lock names",
        "cargo",
        &["fetch", "--locked"],
    )?;
    run::step(
        "Building the web app (Trunk, release, size-first profile)",
        "trunk",
        &["build", "--release", "--offline", "--dist", dist],
    )
}

/// `cargo xtask dist`: the server and the web app, built for release into one folder, what
/// deploy/Dockerfile copies into the image.
fn dist(args: &[String]) -> anyhow::Result<()> {
    let out = match args {
        [] => PathBuf::from("target/portal-dist"),
        [flag, dir] if flag == "--out" => PathBuf::from(dir),
        _ => bail!("usage: cargo xtask dist [--out DIR]"),
    };
    setup::serving()?;
    std::fs::create_dir_all(&out).with_context(|| format!("cannot make {}", out.display()))?;
    let web = out.join("dist");
    build_web(web.to_str().context("the folder's name is not UTF-8")?)?;
    run::step(
        "Building the server (release)",
        "cargo",
        &["build", "--release", "-p", "portal-server"],
    )?;
    let binary = target_dir()?.join("release").join("portal");
    std::fs::copy(&binary, out.join("portal"))
        .with_context(|| format!("cannot copy {} into {}", binary.display(), out.display()))?;
    println!(
        "xtask: dist: {0}/portal and the web app in {0}/dist: `{0}/portal serve --dist {0}/dist`",
        out.display()
    );
    Ok(())
}

/// Cargo's target folder, wherever CARGO_TARGET_DIR or a config puts it.
pub(crate) fn target_dir() -> anyhow::Result<PathBuf> {
    let metadata = run::stdout(
        "cargo",
        &[
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ],
    )
    .context("cargo metadata failed")?;
    let metadata: serde_json::Value =
        serde_json::from_str(&metadata).context("cargo metadata printed no JSON")?;
    metadata["target_directory"]
        .as_str()
        .map(PathBuf::from)
        .context("cargo metadata names no target directory")
}

fn demo(args: &[String]) -> anyhow::Result<()> {
    let port = match args {
        [] => "8080".to_string(),
        [flag, port] if flag == "--port" => port.clone(),
        _ => bail!("usage: cargo xtask demo [--port N]"),
    };
    setup::serving()?;
    build_web("dist")?;
    let config = demo_config()?;
    println!("xtask: the portal will be on http://127.0.0.1:{port}");
    run::step(
        "Serving the portal",
        "cargo",
        &[
            "run",
            "--release",
            "-p",
            "portal-server",
            "--",
            "serve",
            "--port",
            &port,
            "--dist",
            "dist",
            "--config",
            &config,
        ],
    )
}

/// Where `cargo xtask demo` writes the configuration it serves.
const DEMO_CONFIG: &str = "target/demo-config";

/// The demo's configuration: local mode's organisation `local`, its agent `assistant` with the
/// demo tools and every tool of one real MCP server, `server-everything` from npm (package.json's
/// dependencies), run by this machine's `node`. Written afresh each time; the folder's path.
fn demo_config() -> anyhow::Result<String> {
    let org = PathBuf::from(DEMO_CONFIG).join("organisations/local");
    let server =
        std::fs::canonicalize("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
            .context("the demo's MCP server is missing; run `cargo xtask setup`")?;
    let node = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join("node"))
        .find(|node| node.is_file())
        .context("the demo's MCP server runs on node, which is not on PATH; install Node.js")?;
    let quoted = |path: &std::path::Path| serde_json::to_string(&path.display().to_string());
    std::fs::create_dir_all(org.join("mcp"))?;
    std::fs::create_dir_all(org.join("agents"))?;
    std::fs::write(org.join("organisation.toml"), "name = \"Local\"\n")?;
    std::fs::write(
        org.join("mcp/everything.toml"),
        format!(
            "# The MCP reference server from npm, run by the demo (docs/tools.md).\n\
             command = {}\nargs = [{}, \"stdio\"]\n",
            quoted(&node)?,
            quoted(&server)?
        ),
    )?;
    std::fs::write(org.join("agents/assistant.toml"), DEMO_AGENT)?;
    Ok(DEMO_CONFIG.to_string())
}

/// The demo's agent: local mode's default agent, with the tools of the MCP server `everything`.
const DEMO_AGENT: &str = r#"name = "Assistant"
tools = ["count_characters", "publish_note", "ask_user"]
mcp = { everything = ["*"] }
description = "Answers your questions, and shows what an agent does: it counts characters, publishes notes once you approve them, asks when something is unclear, and uses the tools of an MCP server when you name one."
examples = [
    "Tell me about writing systems",
    "Please publish a note on the herons",
    'use get-sum with {"a": 1, "b": 2}',
]
"#;
