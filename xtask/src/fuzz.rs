//! `cargo xtask fuzz [seconds] [target...]`: every fuzz target under `fuzz/` (or the ones named)
//! for `seconds` each (default 60), seeded from the project's fixtures. The targets are cargo-fuzz targets (libFuzzer); xtask
//! builds them on the stable toolchain with the coverage instrumentation cargo-fuzz would add,
//! so no nightly toolchain is needed. A crash stops the run and leaves its input in
//! `target/fuzz/artifacts/<target>/`.

use std::path::Path;

use anyhow::{Context, bail};

use crate::run;

/// Each target with the fixture folders its corpus is seeded from.
const TARGETS: &[(&str, &[&str])] = &[
    ("transcript_json", &["tests/fixtures/transcripts"]),
    ("memory_pairing", &["tests/fixtures/transcripts"]),
    (
        "skill_front_matter",
        &[
            "tests/fixtures/cli/config/organisations/acme/skills/fact-check",
            "tests/fixtures/cli/config/organisations/acme/skills/itinerary",
        ],
    ),
    ("provider_sse", &["tests/fixtures/openai"]),
    ("request_parameters", &[]),
    ("markdown", &["tests/markdown"]),
    ("pdf_reading", &["tests/fixtures/fuzz/pdf"]),
    ("picture_decoding", &["tests/fixtures/fuzz/pictures"]),
];

/// The flags cargo-fuzz passes to rustc for libFuzzer's coverage, without a sanitizer.
const COVERAGE_FLAGS: &str = "-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
     -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
     -Cllvm-args=-sanitizer-coverage-pc-table -Cllvm-args=-sanitizer-coverage-trace-compares \
     --cfg fuzzing -Cdebug-assertions -Coverflow-checks";

const HOST: &str = "x86_64-unknown-linux-gnu";

pub fn all(args: &[String]) -> anyhow::Result<()> {
    let (seconds, chosen): (u64, &[String]) = match args {
        [] => (60, &[]),
        [seconds, chosen @ ..] => (
            seconds
                .parse()
                .with_context(|| format!("`{seconds}` is not a number of seconds"))?,
            chosen,
        ),
    };
    if let Some(unknown) = chosen
        .iter()
        .find(|name| !TARGETS.iter().any(|(target, _)| target == name))
    {
        let names: Vec<&str> = TARGETS.iter().map(|(target, _)| *target).collect();
        bail!(
            "`{unknown}` is not a fuzz target; usage: cargo xtask fuzz [seconds] [{}]...",
            names.join("|")
        );
    }
    let root = run::workspace_root()?;
    let target_dir = root.join("target").join("fuzz");
    println!("\nxtask: Building the fuzz targets (libFuzzer, coverage only)");
    // An explicit --target keeps the coverage flags off build scripts and proc macros.
    let status = run::command("cargo")
        .args(["build", "--release", "--target", HOST, "--bins"])
        .current_dir(root.join("fuzz"))
        .env("RUSTFLAGS", COVERAGE_FLAGS)
        .env("CARGO_TARGET_DIR", &target_dir)
        .status()
        .context("cannot start cargo")?;
    if !status.success() {
        bail!("building the fuzz targets failed ({status})");
    }
    let max_time = format!("-max_total_time={seconds}");
    let targets = TARGETS
        .iter()
        .filter(|(target, _)| chosen.is_empty() || chosen.iter().any(|name| name == target));
    for (target, seeds) in targets {
        let corpus = target_dir.join("corpus").join(target);
        let artifacts = target_dir.join("artifacts").join(target);
        std::fs::create_dir_all(&corpus)?;
        std::fs::create_dir_all(&artifacts)?;
        let binary = target_dir.join(HOST).join("release").join(target);
        let mut command = run::command(path(&binary)?);
        command
            .arg(&max_time)
            .arg("-max_len=65536")
            .arg("-print_final_stats=1")
            .arg(format!("-artifact_prefix={}/", path(&artifacts)?))
            .arg(&corpus);
        command.args(seeds.iter().map(|s| root.join(s)));
        println!("\nxtask: Fuzzing {target} for {seconds} s");
        let started = std::time::Instant::now();
        let status = command.status().context("cannot start the fuzz target")?;
        if !status.success() {
            bail!(
                "fuzz target {target} found a crash ({status}); its input is in {}",
                artifacts.display()
            );
        }
        println!("xtask: {target}: no crash in {:.0?}", started.elapsed());
    }
    Ok(())
}

fn path(path: &Path) -> anyhow::Result<&str> {
    path.to_str()
        .with_context(|| format!("{} is not valid UTF-8", path.display()))
}
