//! `cargo xtask package`: the npm package of `portal-wasm` in `target/npm/portal-wasm/`, packed
//! as `target/npm/portal-wasm-<version>.tgz`, and the checks a front-end team would make of it
//! (`check`): the tarball installed into a fresh project, used from Node (ESM and CommonJS), from
//! pages bundled with esbuild and a Vite app with the AI SDK's `useChat` in headless Chromium, and
//! by `tsc --strict`.
//!
//! Each build (the full engine, and playout alone) is one wasm file shared by three glues that
//! wasm-bindgen writes for the same wasm: `portal_wasm.js` for bundlers (WebAssembly ESM
//! integration), `web.js` for browsers without a bundler (explicit `init`), and `node.cjs` for
//! Node. docs/decisions.md ("wasm-pkg") explains the layout and the `exports` map.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail, ensure};

use crate::{run, sizes};

/// Where the package is assembled, and where its tarball and the consumer project go.
const NPM_DIR: &str = "target/npm";
const PACKAGE_DIR: &str = "target/npm/portal-wasm";
const CONSUMER_DIR: &str = "target/npm/consumer";
/// The checked-in package files: package.json, README.md, CHANGELOG.md.
const TEMPLATE_DIR: &str = "wasm-pkg/npm";
/// The consumer project's tests and the examples they run.
const CONSUMER_TESTS: &str = "wasm-pkg/tests/npm";
const EXAMPLES: &str = "wasm-pkg/examples";

/// The two builds: the package folder each goes to, and the cargo feature flags that make it.
const BUILDS: &[(&str, &[&str])] = &[("full", &[]), ("playout", &["--no-default-features"])];

/// The full engine without markdown, built only to measure what markdown adds to the full wasm.
const WITHOUT_MARKDOWN: &[&str] = &["--no-default-features", "--features", "prompt"];
/// The full engine without `ReplyView` (and so without the drawer), built only to measure what
/// they add to the full wasm.
const WITHOUT_REPLY_VIEW: &[&str] = &["--no-default-features", "--features", "prompt,markdown"];
/// The full engine without maths drawn as MathML, built only to measure what math-core adds.
const WITHOUT_MATHS: &[&str] = &[
    "--no-default-features",
    "--features",
    "prompt,markdown,reply-view",
];

/// Budgets in gzipped bytes (issue 17), checked whenever the package is built. The full engine's
/// 180 KB stood before markdown, which adds 82.9 KB to it; issue 15 allows markdown 80 KB. The
/// markdown layer's row holds the line until its largest part, pulldown-cmark's table of 2,125
/// entity names (20.8 KB, only with a patched pulldown-cmark), is dealt with (docs/bench.md); it
/// leaves a kilobyte for gzip, which moves the layer by up to 0.7 KB on changes of a few bytes.
/// `ReplyView` with portal-drawer adds 16.0 KB (issue 33), and 17 KB holds it. Maths (issue 47)
/// took the layer to 86.4 KB: `\(…\)` and `\[…\]` read by rewriting them and checking the
/// rewrite with a second parse, and open maths held back (docs/decisions.md, "Size budgets").
const FULL_WASM_BUDGET: u64 = (180 + 88 + 20 + 57) * 1024;
const PLAYOUT_WASM_BUDGET: u64 = 60 * 1024;
const MARKDOWN_LAYER_BUDGET: u64 = 88 * 1024;
/// `ReplyView` with portal-drawer (issue 33): 16.0 KB, 17.1 KB once a turn's events carried
/// tools' pictures (issue 48), 18.9 KB with the code and diagram hooks (issue 47: the options
/// read field by field, the drawer's `diagrams` feature; 3.7 KB, of which the drawer's blocks
/// compiled once for both their callers took back 1.8 KB), and room for gzip
/// (docs/decisions.md, "Size budgets").
const REPLY_VIEW_BUDGET: u64 = 20 * 1024;
/// Maths drawn as MathML (issue 47): math-core, its command and symbol tables and the MathML
/// rebuilt from its markup, 55.5 KB (docs/decisions.md, "Size budgets").
const MATHS_BUDGET: u64 = 57 * 1024;
/// `portal-wasm/react` (issue 47), shipped unminified as it is written: 1.6 KB (4.3 KB raw).
/// 2 KB holds a thin component; more means it grew beyond feeding `ReplyView` (docs/decisions.md,
/// "Size budgets").
const REACT_BUDGET: u64 = 2 * 1024;
/// `portal-wasm/highlight` (issue 47), what importing it costs: the web app's painter
/// (web/highlight/paint.js), shipped as it is written, 2.5 KB. 3 KB holds a painter that names
/// ranges; more means it grew into drawing code itself (docs/decisions.md, "Size budgets").
const HIGHLIGHT_BUDGET: u64 = 3 * 1024;
/// Prism's files that `portal-wasm/highlight` imports on first need, never with the package's
/// other entries: 28.3 KB with all 23, of which a reply loads its languages' alone (Prism's core
/// and Rust: about 4 KB). 33 KB is the web app's 36 KB for the same painter and files together
/// (xtask/src/sizes.rs) less the painter's 3 KB.
const PRISM_BUDGET: u64 = 33 * 1024;

/// Builds the package and packs it; returns the tarball's path.
pub fn build() -> anyhow::Result<PathBuf> {
    let package = Path::new(PACKAGE_DIR);
    if package.exists() {
        fs::remove_dir_all(package).context("cannot clear target/npm/portal-wasm")?;
    }
    fs::create_dir_all(package).context("cannot create target/npm/portal-wasm")?;
    for (name, flags) in BUILDS {
        build_one(name, flags, &package.join(name))?;
    }
    copy_files(package)?;
    let tarball = pack(package)?;
    let without_markdown = without("without markdown", WITHOUT_MARKDOWN)?;
    let without_reply_view = without("without ReplyView", WITHOUT_REPLY_VIEW)?;
    let without_maths = without("without maths", WITHOUT_MATHS)?;
    budgets(
        package,
        &without_markdown,
        &without_reply_view,
        &without_maths,
    )?;
    Ok(tarball)
}

/// The wasm cargo writes for portal-wasm, in cargo's target folder (wherever `CARGO_TARGET_DIR`
/// puts it).
fn cargo_wasm() -> anyhow::Result<PathBuf> {
    Ok(crate::target_dir()?.join("wasm32-unknown-unknown/release-wasm/portal_wasm.wasm"))
}

/// cargo with the size-first profile and `flags`; the wasm is [`cargo_wasm`].
fn cargo_build(name: &str, flags: &[&str]) -> anyhow::Result<()> {
    let mut args = vec![
        "build",
        "-p",
        "portal-wasm",
        "--target",
        "wasm32-unknown-unknown",
        "--profile",
        "release-wasm",
    ];
    args.extend(flags);
    run::step(&format!("Building portal-wasm ({name})"), "cargo", &args)
}

fn wasm_opt(name: &str, from: &Path, to: &Path) -> anyhow::Result<()> {
    run::step(
        &format!("Optimising the wasm for size ({name})"),
        "wasm-opt",
        &["-Oz", path_str(from)?, "-o", path_str(to)?],
    )
}

/// The full engine's wasm built with `flags` (without a part, to measure it), made as the
/// package's wasm files are (the bundler glue's wasm, optimised), outside the package; its path.
fn without(name: &str, flags: &[&str]) -> anyhow::Result<PathBuf> {
    cargo_build(name, flags)?;
    let dir = Path::new(NPM_DIR).join("glue").join(name.replace(' ', "-"));
    write_glue(name, "bundler", &dir)?;
    let wasm = dir.join("optimised.wasm");
    wasm_opt(name, &dir.join("portal_wasm_bg.wasm"), &wasm)?;
    Ok(wasm)
}

/// wasm-bindgen's glue for `target` (bundler, web, nodejs) of the last cargo build, written into
/// `dir` after clearing it.
fn write_glue(name: &str, target: &str, dir: &Path) -> anyhow::Result<()> {
    if dir.exists() {
        fs::remove_dir_all(dir)?;
    }
    let wasm = cargo_wasm()?;
    run::step(
        &format!("Writing the {target} glue ({name})"),
        "wasm-bindgen",
        &[
            "--target",
            target,
            "--out-name",
            "portal_wasm",
            "--out-dir",
            path_str(dir)?,
            path_str(&wasm)?,
        ],
    )
}

/// One build: cargo with the size-first profile, wasm-bindgen's three glues, wasm-opt once.
fn build_one(name: &str, flags: &[&str], out: &Path) -> anyhow::Result<()> {
    cargo_build(name, flags)?;
    let glue = Path::new(NPM_DIR).join("glue").join(name);
    for target in ["bundler", "web", "nodejs"] {
        write_glue(name, target, &glue.join(target))?;
    }
    fs::create_dir_all(out)?;
    let bundler = glue.join("bundler");
    for file in ["portal_wasm.js", "portal_wasm_bg.js"] {
        fs::copy(bundler.join(file), out.join(file))
            .with_context(|| format!("cannot copy the bundler glue's {file}"))?;
    }
    copy_glue(&bundler, "portal_wasm.d.ts", &out.join("portal_wasm.d.ts"))?;
    copy_glue(&glue.join("web"), "portal_wasm.js", &out.join("web.js"))?;
    copy_glue(&glue.join("web"), "portal_wasm.d.ts", &out.join("web.d.ts"))?;
    copy_glue(
        &glue.join("nodejs"),
        "portal_wasm.js",
        &out.join("node.cjs"),
    )?;
    copy_glue(
        &glue.join("nodejs"),
        "portal_wasm.d.ts",
        &out.join("node.d.cts"),
    )?;
    copy_dir(&bundler.join("snippets"), &out.join("snippets"))?;
    // The three targets' wasm files are the same bytes; the package keeps one, optimised once.
    for target in ["web", "nodejs"] {
        let other = fs::read(glue.join(target).join("portal_wasm_bg.wasm"))?;
        ensure!(
            other == fs::read(bundler.join("portal_wasm_bg.wasm"))?,
            "wasm-bindgen wrote a different wasm for --target {target}, so its glues cannot \
             share one; give each target its own folder in xtask/src/package.rs"
        );
    }
    wasm_opt(
        name,
        &bundler.join("portal_wasm_bg.wasm"),
        &out.join("portal_wasm_bg.wasm"),
    )
}

/// wasm-bindgen declares `[Symbol.dispose]()` on classes; this makes TypeScript load its lib
/// wherever the declarations are read, so a project whose `lib` stops short of ES2025 (or
/// `esnext.disposable`) needs no `skipLibCheck`.
const DISPOSABLE_LIB: &str = "/// <reference lib=\"esnext.disposable\" />\n";

/// A glue file under its package name. Its JSR types comment names the declarations beside it;
/// declarations get [`DISPOSABLE_LIB`].
fn copy_glue(dir: &Path, file: &str, to: &Path) -> anyhow::Result<()> {
    let text = fs::read_to_string(dir.join(file)).with_context(|| format!("cannot read {file}"))?;
    let types = match to.extension().and_then(|e| e.to_str()) {
        Some("js") => to.with_extension("d.ts"),
        Some("cjs") => to.with_extension("d.cts"),
        _ => to.to_path_buf(),
    };
    let types = types.file_name().and_then(|n| n.to_str()).unwrap_or(file);
    let mut text = text.replace(
        "@ts-self-types=\"./portal_wasm.d.ts\"",
        &format!("@ts-self-types=\"./{types}\""),
    );
    if file.ends_with(".d.ts") {
        text.insert_str(0, DISPOSABLE_LIB);
    }
    fs::write(to, text).with_context(|| format!("cannot write {}", to.display()))
}

fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from).with_context(|| format!("cannot read {}", from.display()))? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// The files the package ships as they are: the reply's style sheet, the `<portal-reply>`
/// element and the React component, each with its declarations.
const SHIPPED: &[(&str, &str)] = &[
    ("wasm-pkg/js/reply.css", "reply.css"),
    ("wasm-pkg/js/reply.css.d.ts", "reply.css.d.ts"),
    (
        "wasm-pkg/js/element/portal-reply.js",
        "element/portal-reply.js",
    ),
    (
        "wasm-pkg/js/element/portal-reply.d.ts",
        "element/portal-reply.d.ts",
    ),
    ("wasm-pkg/js/react/portal-reply.js", "react/portal-reply.js"),
    (
        "wasm-pkg/js/react/portal-reply.d.ts",
        "react/portal-reply.d.ts",
    ),
    (PAINTER, "highlight/paint.js"),
    ("wasm-pkg/js/highlight/paint.d.ts", "highlight/paint.d.ts"),
];

/// The code highlighter's painter, the web app's own: the package ships it as it is, with the
/// Prism files it imports beside it ([`copy_prism`]).
const PAINTER: &str = "web/highlight/paint.js";
/// Where npm installs Prism (package.json's `prismjs`), whose files the painter imports.
const PRISM: &str = "node_modules/prismjs";

/// package.json (its version checked against the workspace's), the README for npm users, the
/// changelog, the repository's LICENSE and the [`SHIPPED`] files.
fn copy_files(package: &Path) -> anyhow::Result<()> {
    let manifest = fs::read_to_string(Path::new(TEMPLATE_DIR).join("package.json"))
        .context("cannot read wasm-pkg/npm/package.json")?;
    let version = env!("CARGO_PKG_VERSION");
    ensure!(
        manifest.contains(&format!("\"version\": \"{version}\"")),
        "wasm-pkg/npm/package.json does not give the workspace's version {version}; set its \
         \"version\" to {version}"
    );
    fs::write(package.join("package.json"), manifest)?;
    for file in ["README.md", "CHANGELOG.md"] {
        fs::copy(Path::new(TEMPLATE_DIR).join(file), package.join(file))
            .with_context(|| format!("cannot copy wasm-pkg/npm/{file}"))?;
    }
    fs::copy("LICENSE", package.join("LICENSE")).context("cannot copy LICENSE")?;
    for (from, to) in SHIPPED {
        let to = package.join(to);
        if let Some(folder) = to.parent() {
            fs::create_dir_all(folder)?;
        }
        fs::copy(from, &to).with_context(|| format!("cannot copy {from}"))?;
    }
    copy_prism(&package.join("highlight"))
}

/// The Prism files the painter imports (`import("./prism/NAME")`, as a bundler finds them), into
/// `highlight/prism/` with Prism's licence. They are scripts that set the global `Prism`, and
/// their `package.json` says they are CommonJS, so a bundler wraps them as such rather than
/// warning about `module` in an ES module; browsers without a bundler import them as they are.
fn copy_prism(highlight: &Path) -> anyhow::Result<()> {
    let painter = fs::read_to_string(PAINTER).with_context(|| format!("cannot read {PAINTER}"))?;
    let prism = highlight.join("prism");
    fs::create_dir_all(&prism)?;
    let mut files = 0;
    for imported in painter.split("import(\"./prism/").skip(1) {
        let Some((name, _)) = imported.split_once("\")") else {
            bail!("{PAINTER} imports a Prism file whose name does not end in \"): {imported:.40}");
        };
        let from = Path::new(PRISM).join("components").join(name);
        fs::copy(&from, prism.join(name)).with_context(|| {
            format!(
                "cannot copy {}, which {PAINTER} imports; run `npm ci` (package.json's prismjs \
                 has it) or correct the name",
                from.display()
            )
        })?;
        files += 1;
    }
    ensure!(
        files > 0,
        "{PAINTER} imports no Prism file (import(\"./prism/prism-NAME.min.js\")), so the \
         package would colour nothing; xtask/src/package.rs reads its imports"
    );
    fs::copy(Path::new(PRISM).join("LICENSE"), prism.join("LICENSE"))
        .with_context(|| format!("cannot copy {PRISM}/LICENSE; run `npm ci`"))?;
    fs::write(prism.join("package.json"), "{ \"type\": \"commonjs\" }\n")?;
    Ok(())
}

/// `npm pack` into target/npm; the tarball's path.
fn pack(package: &Path) -> anyhow::Result<PathBuf> {
    let tarball = Path::new(NPM_DIR).join(format!("portal-wasm-{}.tgz", env!("CARGO_PKG_VERSION")));
    if tarball.exists() {
        fs::remove_file(&tarball)?;
    }
    run::step_in(
        "Packing the npm package",
        path_str(package)?,
        "npm",
        &["pack", "--pack-destination", ".."],
    )?;
    ensure!(
        tarball.exists(),
        "npm pack did not write {}",
        tarball.display()
    );
    Ok(tarball)
}

/// The budgets: printed, and an error when one is over. The markdown layer is the full engine's
/// wasm without `ReplyView` less the one without markdown, and `ReplyView` with the drawer the
/// full wasm less the one without it, each compressed whole; the React component and the
/// highlighter's painter are their files, and Prism's files are counted each on its own.
fn budgets(
    package: &Path,
    without_markdown: &Path,
    without_reply_view: &Path,
    without_maths: &Path,
) -> anyhow::Result<()> {
    let full = sizes::measure(&[package.join("full/portal_wasm_bg.wasm")])?;
    let playout = sizes::measure(&[package.join("playout/portal_wasm_bg.wasm")])?;
    let without_markdown = sizes::measure(&[without_markdown.to_path_buf()])?;
    let without_reply_view = sizes::measure(&[without_reply_view.to_path_buf()])?;
    let without_maths = sizes::measure(&[without_maths.to_path_buf()])?;
    let react = sizes::measure(&[package.join("react/portal-reply.js")])?;
    let painter = sizes::measure(&[package.join("highlight/paint.js")])?;
    let mut prism = Vec::new();
    for entry in fs::read_dir(package.join("highlight/prism"))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "js") {
            prism.push(path);
        }
    }
    let prism = sizes::measure(&prism)?;
    sizes::check(&[
        ("portal-wasm, full engine (wasm)", full, FULL_WASM_BUDGET),
        ("portal-wasm/playout (wasm)", playout, PLAYOUT_WASM_BUDGET),
        (
            "markdown layer (no ReplyView − no markdown)",
            without_reply_view.minus(without_markdown),
            MARKDOWN_LAYER_BUDGET,
        ),
        (
            "ReplyView and drawer (no maths − no ReplyView)",
            without_maths.minus(without_reply_view),
            REPLY_VIEW_BUDGET,
        ),
        (
            "maths as MathML (full − no maths)",
            full.minus(without_maths),
            MATHS_BUDGET,
        ),
        ("portal-wasm/react (JavaScript)", react, REACT_BUDGET),
        (
            "portal-wasm/highlight (painter, on import)",
            painter,
            HIGHLIGHT_BUDGET,
        ),
        ("its Prism files (each on first need)", prism, PRISM_BUDGET),
    ])
}

/// The tarball installed into a fresh project and used as a front-end team would use it.
pub fn check(tarball: &Path) -> anyhow::Result<()> {
    let consumer = Path::new(CONSUMER_DIR);
    if consumer.exists() {
        fs::remove_dir_all(consumer).context("cannot clear target/npm/consumer")?;
    }
    copy_dir(Path::new(CONSUMER_TESTS), consumer)?;
    copy_dir(Path::new(EXAMPLES), &consumer.join("examples"))?;
    let tarball = fs::canonicalize(tarball)?;
    // The package has no dependencies, so its install needs no registry; the project's tools
    // (esbuild, typescript, react) resolve from the repository's node_modules above it.
    run::step_in(
        "Installing the packed tarball into a fresh project",
        path_str(consumer)?,
        "npm",
        &[
            "install",
            "--offline",
            "--no-audit",
            "--no-fund",
            path_str(&tarball)?,
        ],
    )?;
    run::step_in(
        "Using the installed package: Node ESM and CommonJS, esbuild pages and a Vite app in Chromium, tsc",
        path_str(consumer)?,
        "node",
        &["--test", "--test-concurrency=1"],
    )?;
    publish_dry_run(&tarball)
}

/// `npm publish --dry-run` on the tarball: any warning but the one about not being logged in
/// (a missing field, a field npm had to correct) fails the check.
fn publish_dry_run(tarball: &Path) -> anyhow::Result<()> {
    println!("\nxtask: npm publish --dry-run {}", tarball.display());
    let output = run::command("npm")
        .args(["publish", "--dry-run", "--no-audit"])
        .arg(tarball)
        .current_dir(NPM_DIR)
        .output()
        .context("cannot run npm; run `cargo xtask setup`")?;
    let text = String::from_utf8_lossy(&output.stderr).into_owned()
        + &String::from_utf8_lossy(&output.stdout);
    let warnings: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("npm warn") && !line.contains("logged in"))
        .collect();
    if !output.status.success() || !warnings.is_empty() {
        let shown = if warnings.is_empty() {
            text.clone()
        } else {
            warnings.join("\n")
        };
        bail!(
            "npm publish --dry-run is not clean ({}):\n{shown}",
            output.status
        );
    }
    println!("xtask: npm publish --dry-run: no warnings about the package");
    Ok(())
}

fn path_str(path: &Path) -> anyhow::Result<&str> {
    match path.to_str() {
        Some(text) => Ok(text),
        None => bail!("{} is not UTF-8", path.display()),
    }
}
