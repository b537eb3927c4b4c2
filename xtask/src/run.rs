//! Running commands, each announced, with their output passed through.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use anyhow::{Context, bail};

/// The workspace root: the parent of this crate's folder.
pub fn workspace_root() -> anyhow::Result<PathBuf> {
    let xtask = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    xtask
        .parent()
        .map(Path::to_path_buf)
        .context("xtask is not inside the workspace")
}

static TOOL_PATH: OnceLock<OsString> = OnceLock::new();

/// Puts cargo's install folder and the workspace's Node tools ahead of PATH for every command
/// xtask runs, so installed tools are found even where the shell's PATH lacks them.
pub fn extend_path(root: &Path) {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let mut paths: Vec<PathBuf> = cargo_home.into_iter().map(|h| h.join("bin")).collect();
    paths.push(root.join("node_modules").join(".bin"));
    if let Some(current) = std::env::var_os("PATH") {
        paths.extend(std::env::split_paths(&current));
    }
    if let Ok(joined) = std::env::join_paths(paths) {
        let _ = TOOL_PATH.set(joined);
    }
}

/// A command that sees the extended PATH.
pub fn command(program: &str) -> Command {
    let mut command = Command::new(program);
    if let Some(path) = TOOL_PATH.get() {
        command.env("PATH", path);
    }
    command
}

/// Runs a command in the workspace root, announcing it first; fails if it fails.
pub fn step(what: &str, program: &str, args: &[&str]) -> anyhow::Result<()> {
    step_in(what, ".", program, args)
}

/// Runs a command in `dir`, announcing it first; fails if it fails.
pub fn step_in(what: &str, dir: &str, program: &str, args: &[&str]) -> anyhow::Result<()> {
    step_in_env(what, dir, program, args, &[])
}

/// Runs a command in the workspace root with these environment variables added, announcing it
/// (and the variables) first; fails if it fails.
pub fn step_with_env(
    what: &str,
    program: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> anyhow::Result<()> {
    step_in_env(what, ".", program, args, env)
}

fn step_in_env(
    what: &str,
    dir: &str,
    program: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> anyhow::Result<()> {
    let vars: String = env.iter().map(|(k, v)| format!("{k}={v} ")).collect();
    println!("\nxtask: {what}: {vars}{program} {}", args.join(" "));
    let started = std::time::Instant::now();
    let status = command(program)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .status()
        .with_context(|| {
            format!("cannot start `{program}`; run `cargo xtask setup` to install it")
        })?;
    if !status.success() {
        bail!("{what} failed ({program} exited with {status})");
    }
    println!("xtask: {what}: done in {:.0?}", started.elapsed());
    Ok(())
}

/// Fails, with what the command printed, unless a command run with `output()` started and
/// succeeded.
pub fn checked(what: &str, output: std::io::Result<Output>) -> anyhow::Result<()> {
    let output = output.with_context(|| format!("cannot start {what}"))?;
    if !output.status.success() {
        bail!(
            "{what} failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(())
}

/// What a command prints to stdout, or None when it cannot run or fails.
pub fn stdout(program: &str, args: &[&str]) -> Option<String> {
    let output = command(program).args(args).output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The first line a command prints to stdout, or None when it cannot run or fails.
pub fn first_line(program: &str, args: &[&str]) -> Option<String> {
    stdout(program, args)?.lines().next().map(str::to_string)
}

/// Whether a command runs and succeeds, quietly.
pub fn succeeds(program: &str, args: &[&str]) -> bool {
    command(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}
