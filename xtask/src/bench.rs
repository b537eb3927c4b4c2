//! `cargo xtask bench`: performance is measured here, never in timed tests.

use crate::run;

pub fn all() -> anyhow::Result<()> {
    run::step(
        "Benchmarking core",
        "cargo",
        &["bench", "-p", "portal-core"],
    )
}
