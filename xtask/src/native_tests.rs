//! The native tests, built once and run in two lanes at once: the test binaries that measure
//! their own process's memory or CPU time, one after another, beside every other test binary,
//! then the doc tests. A measuring binary reads only its own process's peak and CPU time, so
//! what runs in the other lane moves nothing it measures; the lanes overlap the measuring
//! binaries' minutes with the integration tests', which mostly wait on clocks
//! (docs/decisions.md, "CI time").

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::run;

/// The test binaries that measure their own process: a lane of their own, one at a time.
const MEASURING: &[&str] = &[
    "attack_memory",
    "attack_limits",
    "attack_streams",
    "mcp_memory",
    "upload_memory",
];

/// One test executable as cargo built it.
struct TestBinary {
    /// The test target's name (`it`, `attack_memory`, the library's crate name).
    name: String,
    package: String,
    /// The package's folder, where cargo runs its tests.
    dir: PathBuf,
    path: PathBuf,
}

/// Builds the workspace's tests and runs them in two lanes, then the doc tests; fails naming
/// every test binary that failed.
pub fn run(env: &[(&str, &str)]) -> anyhow::Result<()> {
    let binaries = build(env)?;
    let (measuring, others): (Vec<TestBinary>, Vec<TestBinary>) = binaries
        .into_iter()
        .partition(|b| MEASURING.contains(&b.name.as_str()));
    println!(
        "\nxtask: Running native tests: {} test binaries, beside {} that measure their process",
        others.len(),
        measuring.len()
    );
    let started = Instant::now();
    let (mut failed, measured) = std::thread::scope(|scope| {
        let measured = scope.spawn(|| lane("measuring", &measuring, env));
        (lane("tests", &others, env), measured.join())
    });
    failed.extend(measured.map_err(|_| anyhow::anyhow!("the measuring lane panicked"))?);
    println!(
        "xtask: Running native tests: both lanes done in {:.0?}",
        started.elapsed()
    );
    if !failed.is_empty() {
        bail!("native tests failed in: {}", failed.join(", "));
    }
    run::step_with_env("Running doc tests", "cargo", &["test", "--doc"], env)
}

/// `cargo test --no-run`, and the executables it built.
fn build(env: &[(&str, &str)]) -> anyhow::Result<Vec<TestBinary>> {
    println!("\nxtask: Building native tests: cargo test --no-run");
    let started = Instant::now();
    let output = run::command("cargo")
        .args([
            "test",
            "--no-run",
            "--message-format=json-render-diagnostics",
        ])
        .envs(env.iter().copied())
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("cannot start cargo")?;
    if !output.status.success() {
        bail!("building the native tests failed ({})", output.status);
    }
    let mut binaries = Vec::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let (Some(path), Some(name), Some(manifest), Some(id)) = (
            message["executable"].as_str(),
            message["target"]["name"].as_str(),
            message["manifest_path"].as_str(),
            message["package_id"].as_str(),
        ) else {
            continue;
        };
        if message["profile"]["test"] != true {
            continue;
        }
        let dir = PathBuf::from(manifest)
            .parent()
            .context("a manifest has a folder")?
            .to_path_buf();
        binaries.push(TestBinary {
            name: name.to_string(),
            package: package_name(id, &dir),
            dir,
            path: PathBuf::from(path),
        });
    }
    if binaries.is_empty() {
        bail!("cargo built no test binaries");
    }
    println!(
        "xtask: Building native tests: done in {:.0?}",
        started.elapsed()
    );
    Ok(binaries)
}

/// A package's name from its cargo id: `path+file:///…/core#portal-core@0.1.0`, or
/// `path+file:///…/xtask#0.1.0` for a package named as its folder.
fn package_name(id: &str, dir: &std::path::Path) -> String {
    match id.rsplit_once('#').map(|(_, rest)| rest.rsplit_once('@')) {
        Some(Some((name, _))) => name.to_string(),
        _ => dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    }
}

/// Runs `binaries` one after another, as cargo would (in the package's folder, with its name),
/// each one's output printed whole when it ends; returns those that failed.
fn lane(lane: &str, binaries: &[TestBinary], env: &[(&str, &str)]) -> Vec<String> {
    let mut failed = Vec::new();
    for binary in binaries {
        let started = Instant::now();
        let output = run::command(&binary.path.to_string_lossy())
            .current_dir(&binary.dir)
            .env("CARGO_PKG_NAME", &binary.package)
            .env("CARGO_MANIFEST_DIR", &binary.dir)
            .envs(env.iter().copied())
            .output();
        let what = format!("{} {}", binary.package, binary.name);
        let mut said = format!("\nxtask: {lane}: {what} ({})\n", seconds(started.elapsed()));
        let passed = match output {
            Ok(output) => {
                said.push_str(&String::from_utf8_lossy(&output.stdout));
                said.push_str(&String::from_utf8_lossy(&output.stderr));
                output.status.success()
            }
            Err(error) => {
                said.push_str(&format!(
                    "cannot start {}: {error}\n",
                    binary.path.display()
                ));
                false
            }
        };
        if !passed {
            said.push_str(&format!("xtask: {lane}: {what} FAILED\n"));
            failed.push(what);
        }
        let _ = std::io::stdout().lock().write_all(said.as_bytes());
    }
    failed
}

fn seconds(took: Duration) -> String {
    format!("{:.1} s", took.as_secs_f64())
}
