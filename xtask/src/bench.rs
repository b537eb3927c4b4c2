//! `cargo xtask bench`: performance is measured here, never in timed tests. The criterion benches
//! of core, the server's load bench (200 conversations streaming at once), the conversation list
//! at 10,000 conversations, then the browser
//! playout bench, which writes `target/bench/playout.json` and prints a table (`docs/bench.md`).

use crate::{build_web, run, setup};

pub fn all() -> anyhow::Result<()> {
    setup::all()?;
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
    build_web()?;
    run::step(
        "Building the server for the browser bench",
        "cargo",
        &["build", "-p", "portal-server"],
    )?;
    run::step(
        "Running the browser playout bench",
        "node",
        &["tests/bench/playout.mjs"],
    )
}
