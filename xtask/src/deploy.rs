//! The deploy recipe's checks (`deploy/`, docs/deploy.md "Deploying"), run early in
//! `cargo xtask test` and alone by `cargo xtask check-deploy`:
//!
//! - every manifest in `deploy/kubernetes/` against Kubernetes' schemas (kubernetes-validate,
//!   strict: an unknown field fails, and so does a kind it has no schema for);
//! - `deploy/Dockerfile` by hadolint, failing on any finding (`.hadolint.yaml` lists the rules
//!   left out, each with its reason);
//! - `deploy/portal.service` by `systemd-analyze verify`, which reports a misspelt key or a bad
//!   value only as a warning: any line it prints fails the check;
//! - and what the three must agree on, read from their text: the process manager waits longer
//!   than the grace `portal serve` takes on SIGTERM, the probes are `/readyz` and `/healthz`, the
//!   portal runs as a user other than root, and no database password is written in them.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail, ensure};

use crate::{run, setup};

const MANIFESTS: &str = "deploy/kubernetes";
const DEPLOYMENT: &str = "deploy/kubernetes/deployment.yaml";
const DOCKERFILE: &str = "deploy/Dockerfile";
const HADOLINT_CONFIG: &str = ".hadolint.yaml";
const UNIT: &str = "deploy/portal.service";

/// The Kubernetes versions the manifests are validated against: a version providers still ran in
/// 2026 and the newest kubernetes-validate 1.37.0 knows.
const KUBERNETES_VERSIONS: &[&str] = &["1.33.0", "1.37.0"];

/// `portal serve --shutdown-grace-seconds`' default, for a file that does not give the flag.
const DEFAULT_GRACE_SECONDS: u64 = 30;

pub fn check() -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    println!("\nxtask: Checking the deploy recipe (deploy/)");
    kubernetes()?;
    dockerfile()?;
    systemd_unit()?;
    println!(
        "xtask: Checking the deploy recipe: done in {:.0?}",
        started.elapsed()
    );
    Ok(())
}

fn kubernetes() -> anyhow::Result<()> {
    let mut manifests: Vec<String> = std::fs::read_dir(MANIFESTS)
        .with_context(|| format!("cannot read {MANIFESTS}"))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| {
            path.extension()
                .is_some_and(|ext| ext == "yaml" || ext == "yml")
        })
        .map(|path| path.display().to_string())
        .collect();
    manifests.sort();
    ensure!(!manifests.is_empty(), "{MANIFESTS} holds no manifest");
    let validate = venv_tool("kubernetes-validate");
    for version in KUBERNETES_VERSIONS {
        let mut args = vec!["--strict", "--quiet", "--kubernetes-version", version];
        args.extend(manifests.iter().map(String::as_str));
        silent(
            &format!("kubernetes-validate for Kubernetes {version}"),
            &validate,
            &args,
        )?;
    }
    let deployment =
        std::fs::read_to_string(DEPLOYMENT).with_context(|| format!("cannot read {DEPLOYMENT}"))?;
    pod_stops_gracefully(&deployment).with_context(|| format!("in {DEPLOYMENT}"))?;
    println!(
        "xtask: deploy: {} manifests are valid for Kubernetes {} (strict), and {DEPLOYMENT} waits \
         for the grace",
        manifests.len(),
        KUBERNETES_VERSIONS.join(" and ")
    );
    Ok(())
}

fn dockerfile() -> anyhow::Result<()> {
    silent(
        "hadolint",
        &venv_tool("hadolint"),
        &[
            "--config",
            HADOLINT_CONFIG,
            "--disable-ignore-pragma",
            "--no-color",
            DOCKERFILE,
        ],
    )?;
    let text =
        std::fs::read_to_string(DOCKERFILE).with_context(|| format!("cannot read {DOCKERFILE}"))?;
    image_stops_gracefully(&text).with_context(|| format!("in {DOCKERFILE}"))?;
    println!("xtask: deploy: hadolint finds nothing in {DOCKERFILE}");
    Ok(())
}

fn systemd_unit() -> anyhow::Result<()> {
    let text = std::fs::read_to_string(UNIT).with_context(|| format!("cannot read {UNIT}"))?;
    unit_stops_gracefully(&text).with_context(|| format!("in {UNIT}"))?;
    // `systemd-analyze verify` checks that ExecStart's program exists and loads the units the
    // service depends on, so it runs on a root of its own: this machine's units, the unit, and
    // an empty program where ExecStart's is.
    let root = PathBuf::from("target/tools/systemd-root");
    if root.exists() {
        std::fs::remove_dir_all(&root)
            .with_context(|| format!("cannot remove {}", root.display()))?;
    }
    let units = root.join("usr/lib/systemd");
    let installed = root.join("etc/systemd/system");
    for dir in [&units, &installed] {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot make {}", dir.display()))?;
    }
    run::checked(
        "copying the system's units",
        run::command("cp")
            .args(["-a", "/usr/lib/systemd/system"])
            .arg(&units)
            .output(),
    )?;
    std::fs::copy(UNIT, installed.join("portal.service"))
        .with_context(|| format!("cannot copy {UNIT}"))?;
    let program = exec_start_program(&text).context("the unit has no ExecStart")?;
    let stub = root.join(program.trim_start_matches('/'));
    if let Some(parent) = stub.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&stub, "#!/bin/sh\n")?;
    make_executable(&stub)?;
    let root = root.canonicalize()?;
    let copy = format!("{}/etc/systemd/system/portal.service", root.display());
    silent(
        "systemd-analyze verify",
        "systemd-analyze",
        &[
            "verify",
            &format!("--root={}", root.display()),
            "--man=no",
            "--generators=no",
            "portal.service",
        ],
    )
    // Its lines name the copy; the line numbers are the file's.
    .map_err(|e| anyhow::anyhow!(e.to_string().replace(&copy, UNIT)))?;
    println!(
        "xtask: deploy: systemd-analyze verify finds nothing in {UNIT}, which waits for the grace"
    );
    Ok(())
}

fn venv_tool(name: &str) -> String {
    format!("{}/bin/{name}", setup::PYTHON_VENV)
}

fn make_executable(path: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("cannot make {} executable", path.display()))
}

/// Runs a checker that prints nothing when all is well: fails, with what it printed, when it
/// fails or prints anything.
fn silent(what: &str, program: &str, args: &[&str]) -> anyhow::Result<()> {
    let output = run::command(program).args(args).output().with_context(|| {
        format!("cannot start `{program}`; run `cargo xtask setup` to install it")
    })?;
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    if !output.status.success() || !printed.trim().is_empty() {
        bail!(
            "{what} found problems ({program} exited with {}):\n{}",
            output.status,
            printed.trim_end()
        );
    }
    Ok(())
}

/// The unit's `[Service]` settings, in order, continuation lines joined.
fn service_settings(unit: &str) -> Vec<(String, String)> {
    let mut settings = Vec::new();
    let mut in_service = false;
    let mut pending: Option<String> = None;
    for line in unit.lines() {
        let line = line.trim();
        if let Some(mut joined) = pending.take() {
            joined.push(' ');
            joined.push_str(line.trim_end_matches('\\').trim());
            if line.ends_with('\\') {
                pending = Some(joined);
            } else if let Some((key, value)) = joined.split_once('=') {
                settings.push((key.trim().to_string(), value.trim().to_string()));
            }
            continue;
        }
        if line.starts_with('[') {
            in_service = line == "[Service]";
            continue;
        }
        if !in_service || line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if line.ends_with('\\') {
            pending = Some(line.trim_end_matches('\\').trim().to_string());
        } else if let Some((key, value)) = line.split_once('=') {
            settings.push((key.trim().to_string(), value.trim().to_string()));
        }
    }
    settings
}

fn setting<'a>(settings: &'a [(String, String)], key: &str) -> Option<&'a str> {
    settings
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// ExecStart's program, without systemd's prefixes (`-`, `@`, `:`, `+`, `!`).
fn exec_start_program(unit: &str) -> Option<String> {
    let settings = service_settings(unit);
    let exec = setting(&settings, "ExecStart")?;
    let program = exec.split_whitespace().next()?;
    Some(
        program
            .trim_start_matches(['-', '@', ':', '+', '!'])
            .to_string(),
    )
}

/// The number after `--shutdown-grace-seconds` (as the next word or after `=`), or the default.
fn grace_seconds(words: &[&str]) -> anyhow::Result<u64> {
    for (i, word) in words.iter().enumerate() {
        let value = if *word == "--shutdown-grace-seconds" {
            words.get(i + 1).copied()
        } else if let Some(value) = word.strip_prefix("--shutdown-grace-seconds=") {
            Some(value)
        } else {
            continue;
        };
        let value = value.context("--shutdown-grace-seconds has no value")?;
        return value
            .trim_matches('"')
            .parse()
            .with_context(|| format!("--shutdown-grace-seconds {value} is not a number"));
    }
    Ok(DEFAULT_GRACE_SECONDS)
}

/// A systemd time span in seconds: `45`, `45s`, `1min`, `1min 30s`.
fn systemd_seconds(span: &str) -> anyhow::Result<u64> {
    let mut total = 0;
    for part in span.split_whitespace() {
        let digits = part.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        let number: u64 = digits
            .parse()
            .with_context(|| format!("`{span}` is not a time span this check reads"))?;
        total += match &part[digits.len()..] {
            "" | "s" | "sec" => number,
            "m" | "min" => number * 60,
            "h" => number * 3600,
            _ => bail!("`{span}` is not a time span this check reads"),
        };
    }
    Ok(total)
}

/// Whether a text holds a URL with a password in it (`scheme://user:password@host`).
fn has_url_password(text: &str) -> bool {
    text.match_indices("://").any(|(at, _)| {
        let rest = &text[at + 3..];
        let authority = rest
            .split(|c: char| c == '/' || c == '?' || c.is_whitespace() || c == '"')
            .next()
            .unwrap_or("");
        authority
            .rsplit_once('@')
            .is_some_and(|(userinfo, _)| userinfo.contains(':'))
    })
}

fn unit_stops_gracefully(unit: &str) -> anyhow::Result<()> {
    let settings = service_settings(unit);
    let exec = setting(&settings, "ExecStart").context("the unit has no ExecStart")?;
    let words: Vec<&str> = exec.split_whitespace().collect();
    ensure!(
        words.get(1) == Some(&"serve"),
        "ExecStart does not run `portal serve`"
    );
    let grace = grace_seconds(&words)?;
    let signal = setting(&settings, "KillSignal").unwrap_or("SIGTERM");
    ensure!(
        signal == "SIGTERM",
        "KillSignal is {signal}: the portal stops gracefully on SIGTERM"
    );
    let timeout = systemd_seconds(
        setting(&settings, "TimeoutStopSec")
            .context("no TimeoutStopSec: systemd's default (90 s) is not written down here")?,
    )?;
    ensure!(
        timeout > grace,
        "TimeoutStopSec is {timeout} s, not above the grace of {grace} s: systemd would kill the \
         portal while its turns may still run"
    );
    let user = setting(&settings, "User").unwrap_or("root");
    ensure!(
        user != "root" && user != "0",
        "the portal runs as root (User={user})"
    );
    ensure!(
        !has_url_password(exec),
        "ExecStart has a password in a URL, which `ps` shows to every user"
    );
    ensure!(
        !settings
            .iter()
            .any(|(k, v)| k == "Environment" && v.contains("PASSWORD")),
        "an Environment= line holds a password: unit files are readable by every user, and so is \
         `systemctl show`; use LoadCredential= or EnvironmentFile="
    );
    Ok(())
}

/// The YAML lines of a block of `text`: those after the line ending with `key:`, while indented
/// deeper than it.
fn yaml_block<'a>(text: &'a str, key: &str) -> Option<Vec<&'a str>> {
    let mut lines = text.lines();
    let start = lines.find(|l| l.trim() == format!("{key}:"))?;
    let indent = start.len() - start.trim_start().len();
    Some(
        lines
            .take_while(|l| l.trim().is_empty() || l.len() - l.trim_start().len() > indent)
            .collect(),
    )
}

/// The value of the first `key: value` line among `lines`, without quotes.
fn yaml_value<'a>(lines: &[&'a str], key: &str) -> Option<&'a str> {
    lines.iter().find_map(|l| {
        l.trim()
            .strip_prefix(&format!("{key}:"))
            .map(|v| v.trim().trim_matches('"'))
    })
}

fn pod_stops_gracefully(deployment: &str) -> anyhow::Result<()> {
    let lines: Vec<&str> = deployment.lines().collect();
    let period: u64 = yaml_value(&lines, "terminationGracePeriodSeconds")
        .context(
            "no terminationGracePeriodSeconds: Kubernetes' default (30 s) is the grace itself",
        )?
        .parse()
        .context("terminationGracePeriodSeconds is not a number")?;
    let args: Vec<&str> = yaml_block(deployment, "args")
        .context("the container has no args")?
        .iter()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(|a| a.trim().trim_matches('"'))
        .collect();
    let grace = grace_seconds(&args)?;
    // Kubernetes counts the preStop hook's time in the period too.
    let pre_stop = match yaml_block(deployment, "preStop") {
        None => 0,
        Some(block) => {
            let joined = block.join(" ");
            let after = joined
                .split_once("\"sleep\",")
                .context("preStop is not `sleep N`, whose time this check can count")?
                .1;
            after
                .trim()
                .trim_start_matches('"')
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .unwrap_or("")
                .parse()
                .context("preStop's sleep has no number of seconds")?
        }
    };
    ensure!(
        period > pre_stop + grace,
        "terminationGracePeriodSeconds is {period}, not above the preStop sleep ({pre_stop} s) \
         plus the grace ({grace} s): Kubernetes would kill the portal while its turns may still run"
    );
    for (probe, path) in [("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")] {
        let block = yaml_block(deployment, probe).with_context(|| format!("no {probe}"))?;
        ensure!(
            yaml_value(&block, "path") == Some(path),
            "the {probe} is not on {path}"
        );
    }
    ensure!(
        !has_url_password(deployment),
        "a URL holds a password; give it as PORTAL_DATABASE_PASSWORD from a Secret"
    );
    let password = yaml_block(deployment, "env")
        .and_then(|env| {
            let at = env
                .iter()
                .position(|l| l.trim() == "- name: PORTAL_DATABASE_PASSWORD")?;
            env.get(at + 1).map(|l| l.trim())
        })
        .context("no PORTAL_DATABASE_PASSWORD in the container's env")?;
    ensure!(
        password == "valueFrom:",
        "PORTAL_DATABASE_PASSWORD is not read from a Secret (`valueFrom: secretKeyRef`)"
    );
    let pod_security = yaml_block(deployment, "securityContext").context("no securityContext")?;
    ensure!(
        yaml_value(&pod_security, "runAsNonRoot") == Some("true"),
        "the pod is not runAsNonRoot"
    );
    Ok(())
}

fn image_stops_gracefully(dockerfile: &str) -> anyhow::Result<()> {
    let instructions: Vec<(String, &str)> = dockerfile
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| {
            let (word, rest) = l.trim().split_once(char::is_whitespace)?;
            Some((word.to_ascii_uppercase(), rest.trim()))
        })
        .collect();
    let last = |name: &str| {
        instructions
            .iter()
            .rev()
            .find(|(w, _)| w == name)
            .map(|(_, rest)| *rest)
    };
    ensure!(
        last("STOPSIGNAL") == Some("SIGTERM"),
        "no STOPSIGNAL SIGTERM: the portal stops gracefully on SIGTERM"
    );
    // HEALTHCHECK's command is on its continuation line.
    ensure!(
        dockerfile.contains("HEALTHCHECK") && dockerfile.contains("/healthz"),
        "no HEALTHCHECK on /healthz"
    );
    let user = last("USER").context("no USER: the portal would run as root")?;
    let name = user.split(':').next().unwrap_or(user);
    ensure!(
        name != "root" && name != "0",
        "the portal runs as root (USER {user})"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNIT_FILE: &str = include_str!("../../deploy/portal.service");
    const DEPLOYMENT_FILE: &str = include_str!("../../deploy/kubernetes/deployment.yaml");
    const DOCKERFILE_FILE: &str = include_str!("../../deploy/Dockerfile");

    #[test]
    fn the_shipped_files_wait_for_the_grace() {
        unit_stops_gracefully(UNIT_FILE).expect("portal.service");
        pod_stops_gracefully(DEPLOYMENT_FILE).expect("deployment.yaml");
        image_stops_gracefully(DOCKERFILE_FILE).expect("Dockerfile");
        assert_eq!(
            exec_start_program(UNIT_FILE).as_deref(),
            Some("/usr/local/bin/portal")
        );
    }

    #[test]
    fn a_unit_that_kills_within_the_grace_fails() {
        let short = UNIT_FILE.replace("TimeoutStopSec=45s", "TimeoutStopSec=30s");
        let error = unit_stops_gracefully(&short).expect_err("30 s is the grace");
        assert!(error.to_string().contains("not above the grace of 30 s"));
        let longer =
            UNIT_FILE.replace("--shutdown-grace-seconds 30", "--shutdown-grace-seconds 60");
        assert!(unit_stops_gracefully(&longer).is_err());
        let minutes = UNIT_FILE.replace("TimeoutStopSec=45s", "TimeoutStopSec=1min 15s");
        unit_stops_gracefully(&minutes).expect("75 s");
        let signal = UNIT_FILE.replace("KillSignal=SIGTERM", "KillSignal=SIGKILL");
        assert!(unit_stops_gracefully(&signal).is_err());
    }

    #[test]
    fn a_unit_with_a_password_or_as_root_fails() {
        let url = UNIT_FILE.replace("postgres://portal@", "postgres://portal:secret@");
        assert!(unit_stops_gracefully(&url).is_err());
        let env = UNIT_FILE.replace(
            "KillSignal=SIGTERM",
            "Environment=PORTAL_DATABASE_PASSWORD=secret\nKillSignal=SIGTERM",
        );
        assert!(unit_stops_gracefully(&env).is_err());
        let root = UNIT_FILE.replace("User=portal", "User=root");
        assert!(unit_stops_gracefully(&root).is_err());
    }

    #[test]
    fn a_pod_that_is_killed_within_the_grace_fails() {
        // 45 > 5 + 30; 35 is not above 5 + 30.
        let short = DEPLOYMENT_FILE.replace(
            "terminationGracePeriodSeconds: 45",
            "terminationGracePeriodSeconds: 35",
        );
        let error = pod_stops_gracefully(&short).expect_err("35 s");
        assert!(error.to_string().contains("preStop sleep (5 s)"));
        let sleep = DEPLOYMENT_FILE.replace(r#"["sleep", "5"]"#, r#"["sleep", "15"]"#);
        assert!(pod_stops_gracefully(&sleep).is_err());
        let probe = DEPLOYMENT_FILE.replace("path: /readyz", "path: /healthz");
        assert!(pod_stops_gracefully(&probe).is_err());
        let secret = DEPLOYMENT_FILE.replace(
            "postgres://portal@postgres",
            "postgres://portal:secret@postgres",
        );
        assert!(pod_stops_gracefully(&secret).is_err());
    }

    #[test]
    fn an_image_as_root_or_without_its_stop_signal_fails() {
        let root = DOCKERFILE_FILE.replace("USER 10001:10001", "USER root");
        assert!(image_stops_gracefully(&root).is_err());
        let signal = DOCKERFILE_FILE.replace("STOPSIGNAL SIGTERM", "STOPSIGNAL SIGKILL");
        assert!(image_stops_gracefully(&signal).is_err());
    }

    #[test]
    fn time_spans_and_url_passwords_are_read() {
        assert_eq!(systemd_seconds("45").unwrap(), 45);
        assert_eq!(systemd_seconds("45s").unwrap(), 45);
        assert_eq!(systemd_seconds("1min 30s").unwrap(), 90);
        assert!(systemd_seconds("infinity").is_err());
        assert!(has_url_password("postgres://u:p@h/d"));
        assert!(!has_url_password("postgres://u@h/d?sslmode=verify-full"));
        assert!(!has_url_password("https://chat.example.com"));
    }
}
