//! `cargo xtask setup`: installs what the build and the tests need, checking exact versions first,
//! so a second run installs nothing. `serving` is the part that building and serving the portal
//! needs (`cargo xtask demo` and `dist`); `all` adds the tests' toolchain, and `everything` the
//! benches' corpus.

use anyhow::{Context, bail};

use crate::{postgres, run};

/// Debian packages: Chromium and its driver for the browser tests, fonts so screenshots show
/// emoji, CJK, Thai and Devanagari instead of blanks.
const APT_PACKAGES: &[&str] = &[
    "chromium",
    "chromium-driver",
    "fonts-noto-color-emoji",
    "fonts-noto-cjk",
    "fonts-noto-core",
    "fonts-thai-tlwg",
];

/// Debian's PostgreSQL 15 server and its client tools, for the throwaway cluster the native tests
/// use (`postgres.rs`). Their programs live in /usr/lib/postgresql/15/bin, off PATH.
const POSTGRES_PACKAGES: &[&str] = &["postgresql-15", "postgresql-client-15"];

/// Debian's nginx, which `server/portal/tests/it/proxy.rs` runs in front of two replicas with the shipped
/// `deploy/nginx.conf`. Its program is /usr/sbin/nginx.
const PROXY_PACKAGES: &[&str] = &["nginx"];

/// Debian's Python with venv, for the deploy checks' virtualenv (`python_tools`), and systemd for
/// `systemd-analyze verify` of `deploy/portal.service` (`deploy.rs`).
const DEPLOY_PACKAGES: &[&str] = &["python3", "python3-venv", "systemd"];

/// Debian's copy of PostgreSQL 15's HTML documentation (`/usr/share/doc/postgresql-doc-15/html`,
/// some 1,170 pages), the corpus of the knowledge retrieval bench
/// (`server/portal/benches/knowledge.rs`); only `cargo xtask bench` needs it.
const BENCH_PACKAGES: &[&str] = &["postgresql-doc-15"];

/// A tool installed with `cargo install`: (crate, binary, version, version line, extra flags).
type CargoTool = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
);

/// What the web app's build needs besides wasm-opt: wasm-bindgen-cli must equal the workspace's
/// `wasm-bindgen = "=0.2.130"`, or Trunk tries to download its own, which fails here.
const SERVING_CARGO_TOOLS: &[CargoTool] = &[
    (
        "wasm-bindgen-cli",
        "wasm-bindgen",
        "0.2.130",
        "wasm-bindgen 0.2.130",
        &[],
    ),
    ("trunk", "trunk", "0.21.14", "trunk 0.21.14", &["--locked"]),
];

/// wasm-pack, for the wasm tests and the npm package; it too uses the wasm-bindgen above.
const TEST_CARGO_TOOLS: &[CargoTool] =
    &[("wasm-pack", "wasm-pack", "0.15.1", "wasm-pack 0.15.1", &[])];

/// The Python tools of the deploy checks, each pinned, and the virtualenv they go in.
const PYTHON_TOOLS: &str = "xtask/python-tools.txt";
pub const PYTHON_VENV: &str = "target/tools/venv";

/// Everything: what serving needs, then the tests' toolchain. The Debian, Node and Python
/// packages download while the Rust tools compile: the one waits on the network, the other on
/// the processor.
pub fn all() -> anyhow::Result<()> {
    std::thread::scope(|scope| {
        let packages = scope.spawn(|| -> anyhow::Result<()> {
            let debian: Vec<&str> = [
                APT_PACKAGES,
                POSTGRES_PACKAGES,
                PROXY_PACKAGES,
                DEPLOY_PACKAGES,
            ]
            .concat();
            apt_packages(
                "Chromium, ChromeDriver, fonts, PostgreSQL 15, nginx, Python's venv and systemd are installed",
                &debian,
            )?;
            postgres_found()?;
            node_tools(NodeTools::All)?;
            python_tools()
        });
        let tools = serving_tools().and_then(|()| {
            for (krate, binary, version, line, flags) in TEST_CARGO_TOOLS {
                cargo_tool(krate, binary, version, line, flags)?;
            }
            Ok(())
        });
        let packages = packages
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        tools.and(packages)
    })?;
    println!("xtask: setup: everything is installed");
    Ok(())
}

/// Only what building the web app and the server needs (`cargo xtask demo`, `dist`): the wasm
/// target, wasm-bindgen-cli, Trunk and wasm-opt; no browser, database, proxy or test tools.
pub fn serving() -> anyhow::Result<()> {
    serving_tools()?;
    node_tools(NodeTools::Serving)?;
    println!("xtask: setup: what serving needs is installed");
    Ok(())
}

/// Only what `deploy.rs`'s checks need: Python's venv, systemd-analyze, and the Python tools.
pub fn deploy_checks() -> anyhow::Result<()> {
    apt_packages("Python's venv and systemd are installed", DEPLOY_PACKAGES)?;
    python_tools()
}

fn serving_tools() -> anyhow::Result<()> {
    wasm_target()?;
    for (krate, binary, version, line, flags) in SERVING_CARGO_TOOLS {
        cargo_tool(krate, binary, version, line, flags)?;
    }
    Ok(())
}

fn wasm_target() -> anyhow::Result<()> {
    let installed = run::stdout("rustup", &["target", "list", "--installed"])
        .is_some_and(|targets| targets.lines().any(|t| t == "wasm32-unknown-unknown"));
    if installed {
        println!("xtask: setup: wasm32-unknown-unknown target is installed");
        return Ok(());
    }
    run::step(
        "Adding the wasm32-unknown-unknown target",
        "rustup",
        &["target", "add", "wasm32-unknown-unknown"],
    )
}

/// What `cargo xtask package` needs: what serving needs (the wasm target, wasm-bindgen, wasm-opt),
/// the Node tools its checks use, and Chromium with the fonts; no database, proxy or Python tools.
pub fn package() -> anyhow::Result<()> {
    serving_tools()?;
    node_tools(NodeTools::All)?;
    apt_packages(
        "Chromium, ChromeDriver and fonts are installed",
        APT_PACKAGES,
    )?;
    println!("xtask: setup: what the npm package needs is installed");
    Ok(())
}

/// What [`all`] installs and the knowledge bench's corpus, which only `cargo xtask bench` reads:
/// what `cargo xtask setup` and `bench` install (`test` needs no corpus).
pub fn everything() -> anyhow::Result<()> {
    all()?;
    apt_packages(
        "PostgreSQL 15's HTML documentation (the knowledge bench's corpus) is installed",
        BENCH_PACKAGES,
    )
}

/// Only PostgreSQL, for `cargo xtask postgres`.
pub fn postgres() -> anyhow::Result<()> {
    apt_packages("PostgreSQL 15 is installed", POSTGRES_PACKAGES)?;
    postgres_found()
}

fn postgres_found() -> anyhow::Result<()> {
    let bin = postgres::bin_dir()?;
    println!(
        "xtask: setup: {} is in {}",
        postgres::version(&bin).unwrap_or_else(|| "PostgreSQL".to_string()),
        bin.display()
    );
    Ok(())
}

/// Installs the packages dpkg does not list as installed, with one `apt-get update` first.
fn apt_packages(installed: &str, packages: &[&str]) -> anyhow::Result<()> {
    let missing: Vec<&str> = packages
        .iter()
        .copied()
        .filter(|p| {
            // The status's last word: "unknown ok not-installed" (a package dpkg knows of but
            // never installed) also ends in "installed".
            run::first_line("dpkg-query", &["-W", "-f=${Status}", p])
                .is_none_or(|status| status.split_whitespace().last() != Some("installed"))
        })
        .collect();
    if missing.is_empty() {
        println!("xtask: setup: {installed}");
        return Ok(());
    }
    if !run::succeeds("apt-get", &["--version"]) {
        bail!(
            "these Debian packages are missing and apt-get is not available: {}; install them by hand",
            missing.join(" ")
        );
    }
    run::step(
        "Updating Debian's package lists",
        "apt-get",
        &["update", "-qq"],
    )?;
    let mut args = vec!["install", "-y", "-qq"];
    args.extend(&missing);
    run::step(
        &format!("Installing {}", missing.join(", ")),
        "apt-get",
        &args,
    )
}

fn cargo_tool(
    krate: &str,
    binary: &str,
    version: &str,
    line: &str,
    flags: &[&str],
) -> anyhow::Result<()> {
    let found = run::first_line(binary, &["--version"]);
    if found.as_deref().is_some_and(|l| l.trim() == line) {
        println!("xtask: setup: {line} is installed");
        return Ok(());
    }
    let mut args = vec!["install", krate, "--version", version, "--force"];
    args.extend(flags);
    run::step_with_env(
        &format!(
            "Installing {krate} {version} (found: {})",
            found.as_deref().unwrap_or("none")
        ),
        "cargo",
        &args,
        TOOL_PROFILE,
    )
}

/// How the tools are compiled: they run for seconds at a time (Trunk hands the work to
/// wasm-bindgen and wasm-opt), so compiling them quickly matters more than their speed. Trunk's
/// own release profile asks for fat LTO on one codegen unit, which took 480 s of a cold CI run.
const TOOL_PROFILE: &[(&str, &str)] = &[
    ("CARGO_PROFILE_RELEASE_LTO", "off"),
    ("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16"),
    ("CARGO_PROFILE_RELEASE_OPT_LEVEL", "1"),
    ("CARGO_PROFILE_RELEASE_DEBUG", "false"),
];

/// Which of the root package.json's packages: its `dependencies` (binaryen, whose wasm-opt Trunk
/// runs) for serving, or those and its `devDependencies` too (playwright-core, axe-core and
/// oidc-provider for the browser tests, esbuild, TypeScript and React for the npm package's
/// checks).
#[derive(Clone, Copy, Debug, PartialEq)]
enum NodeTools {
    Serving,
    All,
}

/// The root package.json's packages, each at its exact version, installed from package-lock.json.
/// All come from the npm registry; none downloads anything when it runs.
fn node_tools(which: NodeTools) -> anyhow::Result<()> {
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string("package.json").context("cannot read package.json")?,
    )
    .context("package.json is not JSON")?;
    let mut wanted: Vec<(&String, &serde_json::Value)> = manifest["dependencies"]
        .as_object()
        .context("package.json has no dependencies")?
        .iter()
        .collect();
    if which == NodeTools::All {
        wanted.extend(
            manifest["devDependencies"]
                .as_object()
                .context("package.json has no devDependencies")?,
        );
    }
    let missing: Vec<String> = wanted
        .iter()
        .filter(|(name, version)| {
            let installed = std::fs::read_to_string(format!("node_modules/{name}/package.json"))
                .ok()
                .and_then(|p| serde_json::from_str::<serde_json::Value>(&p).ok());
            installed.as_ref().map(|p| &p["version"]) != Some(*version)
        })
        .map(|(name, version)| format!("{name}@{}", version.as_str().unwrap_or("?")))
        .collect();
    let wasm_opt = run::first_line("wasm-opt", &["--version"]);
    let (what, are) = match which {
        NodeTools::Serving => (
            "wasm-opt (binaryen), Prism and the demo's MCP server (package.json's dependencies)",
            "are",
        ),
        NodeTools::All => ("the Node tools in package.json", "are"),
    };
    if missing.is_empty()
        && wasm_opt
            .as_deref()
            .is_some_and(|l| l.contains("version 132"))
    {
        println!("xtask: setup: {what} {are} installed");
        return Ok(());
    }
    let mut args = vec!["ci", "--no-audit", "--no-fund"];
    if which == NodeTools::Serving {
        // Only `dependencies`; a later `npm ci` for the tests installs the rest.
        args.push("--omit=dev");
    }
    run::step(
        &format!(
            "Installing {what} from package-lock.json (missing: {})",
            if missing.is_empty() {
                "wasm-opt 132".to_string()
            } else {
                missing.join(", ")
            }
        ),
        "npm",
        &args,
    )
}

/// kubernetes-validate and hadolint (`deploy.rs`), mcp-server-time (the MCP tests) and openai
/// (the /v1 tests), with what they need, at the versions `xtask/python-tools.txt` pins, in a
/// virtualenv of Debian's python3 under target/ (Debian's own Python takes no `pip install`
/// outside one). Compared with `pip freeze` first.
fn python_tools() -> anyhow::Result<()> {
    let pinned = std::fs::read_to_string(PYTHON_TOOLS)
        .with_context(|| format!("cannot read {PYTHON_TOOLS}"))?;
    let wanted = requirement_set(&pinned);
    let pip = format!("{PYTHON_VENV}/bin/pip");
    let installed = run::stdout(&pip, &["freeze"]).map(|frozen| requirement_set(&frozen));
    if installed
        .as_ref()
        .is_some_and(|installed| installed.is_superset(&wanted))
    {
        println!(
            "xtask: setup: kubernetes-validate, hadolint and mcp-server-time are installed in {PYTHON_VENV}"
        );
        return Ok(());
    }
    if installed.is_none() {
        // None, or one whose Python is gone: made again.
        run::step(
            &format!("Making a Python virtualenv in {PYTHON_VENV}"),
            "/usr/bin/python3",
            &["-m", "venv", "--clear", PYTHON_VENV],
        )?;
    }
    run::step(
        &format!("Installing the Python tools {PYTHON_TOOLS} pins"),
        &pip,
        &[
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--requirement",
            PYTHON_TOOLS,
        ],
    )
}

/// A requirements file's (or `pip freeze`'s) `name==version` lines, names normalised as pip does
/// (lowercase, `_` and `.` as `-`), comments and blank lines left out.
fn requirement_set(text: &str) -> std::collections::BTreeSet<String> {
    text.lines()
        .map(|line| line.split('#').next().unwrap_or("").trim())
        .filter(|line| !line.is_empty())
        .map(|line| match line.split_once("==") {
            Some((name, version)) => format!(
                "{}=={}",
                name.trim().to_lowercase().replace(['_', '.'], "-"),
                version.trim()
            ),
            None => line.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::requirement_set;

    #[test]
    fn pins_and_pip_freeze_compare_by_normalised_name() {
        let pinned = requirement_set(
            "# tools\nkubernetes-validate==1.37.0\nimportlib_resources==7.1.0  # a comment\n\nPyYAML==6.0.4\n",
        );
        let frozen = requirement_set(
            "importlib-resources==7.1.0\npyyaml==6.0.4\nkubernetes_validate==1.37.0\n",
        );
        assert_eq!(pinned, frozen);
        let older = requirement_set("kubernetes-validate==1.36.0\n");
        assert!(!frozen.is_superset(&older));
    }
}
