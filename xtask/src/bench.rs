//! `cargo xtask bench`: performance is measured here, never in timed tests. The criterion benches
//! of core, the server's load bench (200 conversations streaming at once), two replicas on
//! PostgreSQL under 2 × 500 streams next to one on SQLite (given a throwaway PostgreSQL in
//! `PORTAL_TEST_POSTGRES`, `postgres.rs`), the usage report over 1,000,000 rows on both
//! databases (the same PostgreSQL), knowledge retrieval on PostgreSQL's documentation (recall,
//! and latency at 100,000 passages, on both databases; writes `target/bench/knowledge.json`), a
//! call's prompt from storage, the conversation list at 10,000 conversations, then the browser
//! playout bench, which writes `target/bench/playout.json` and prints a table, the npm package's bench (the README's markdown loop against the
//! package's `ReplyView`), which writes `target/bench/package.json`, and the Streamdown bench
//! (`<Streamdown>` against `<PortalReply>`), which writes `target/bench/streamdown.json`
//! (`docs/bench.md`).

use crate::{build_web, package, postgres, run, setup};

pub fn all() -> anyhow::Result<()> {
    setup::everything()?;
    run::step(
        "Benchmarking core (criterion)",
        "cargo",
        &[
            "bench",
            "-p",
            "portal-core",
            "--bench",
            "*",
            "--",
            "--warm-up-time",
            "1",
            "--measurement-time",
            "3",
        ],
    )?;
    run::step(
        "Benchmarking the server under load (200 conversations streaming at once)",
        "cargo",
        &["bench", "-p", "portal-server", "--bench", "load"],
    )?;
    // The replicas bench gets a throwaway PostgreSQL, stopped when it is done, failed or not.
    let postgres = postgres::Cluster::start()?;
    run::step_with_env(
        "Benchmarking replicas (2 replicas on PostgreSQL × 500 streams, next to 1 on SQLite)",
        "cargo",
        &["bench", "-p", "portal-server", "--bench", "replicas"],
        &postgres.test_env(),
    )?;
    run::step_with_env(
        "Benchmarking the usage report (1,000,000 rows by user, on SQLite and PostgreSQL)",
        "cargo",
        &["bench", "-p", "portal-server", "--bench", "usage_report"],
        &postgres.test_env(),
    )?;
    run::step_with_env(
        "Benchmarking knowledge retrieval (PostgreSQL's documentation, 100,000 passages, on SQLite and PostgreSQL)",
        "cargo",
        &["bench", "-p", "portal-server", "--bench", "knowledge"],
        &postgres.test_env(),
    )?;
    drop(postgres);
    run::step(
        "Benchmarking a call's prompt from storage (100 and 10,000 turns, rule M1)",
        "cargo",
        &["bench", "-p", "portal-server", "--bench", "prompt_window"],
    )?;
    run::step(
        "Benchmarking the conversation list (10,000 conversations)",
        "cargo",
        &[
            "bench",
            "-p",
            "portal-server",
            "--bench",
            "conversation_list",
        ],
    )?;
    build_web("dist")?;
    run::step(
        "Building the server for the browser bench",
        "cargo",
        &["build", "-p", "portal-server"],
    )?;
    run::step(
        "Running the browser playout bench",
        "node",
        &["tests/bench/playout.mjs"],
    )?;
    package::build()?;
    run::step(
        "Running the package's bench (the README's markdown loop against ReplyView)",
        "node",
        &["tests/bench/package.mjs"],
    )?;
    run::step(
        "Running the Streamdown bench (<Streamdown> against <PortalReply>, maths and code)",
        "node",
        &["tests/bench/streamdown.mjs"],
    )
}
