//! Size budgets: files compressed by `gzip -9` (as a server or CDN sends them, and as anyone can
//! measure again with `gzip -9c FILE | wc -c`), printed as a table and checked. 1 KB is 1,024
//! bytes.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::run;

/// Raw and gzipped bytes of some files, each compressed on its own and then added up.
#[derive(Debug, Clone, Copy)]
pub struct Size {
    pub raw: u64,
    pub gzipped: u64,
}

impl Size {
    /// What `self` holds beyond `other`.
    pub fn minus(self, other: Size) -> Size {
        Size {
            raw: self.raw.saturating_sub(other.raw),
            gzipped: self.gzipped.saturating_sub(other.gzipped),
        }
    }
}

pub fn measure(files: &[PathBuf]) -> anyhow::Result<Size> {
    let mut size = Size { raw: 0, gzipped: 0 };
    for file in files {
        let output = run::command("gzip")
            .args(["-9", "-c", "--"])
            .arg(file)
            .output()
            .context("cannot run gzip; install it (Debian: apt-get install gzip)")?;
        if !output.status.success() {
            bail!("gzip could not compress {}", file.display());
        }
        size.raw += std::fs::metadata(file)?.len();
        size.gzipped += output.stdout.len() as u64;
    }
    Ok(size)
}

/// Prints each (what, size, budget) and fails naming every budget that is exceeded.
pub fn check(rows: &[(&str, Size, u64)]) -> anyhow::Result<()> {
    println!("\nxtask: size budgets (gzip -9; 1 KB = 1,024 bytes)");
    println!(
        "  {:<44} {:>10} {:>10} {:>10}",
        "", "raw", "gzipped", "budget"
    );
    let mut over = Vec::new();
    for (what, size, budget) in rows {
        let verdict = if size.gzipped <= *budget {
            "ok"
        } else {
            "OVER"
        };
        println!(
            "  {what:<44} {:>10} {:>10} {:>10}  {verdict}",
            kb(size.raw),
            kb(size.gzipped),
            kb(*budget)
        );
        if size.gzipped > *budget {
            over.push(format!(
                "{what} is {} gzipped, over its budget of {}",
                kb(size.gzipped),
                kb(*budget)
            ));
        }
    }
    if !over.is_empty() {
        bail!(
            "{}; make the build smaller (twiggy shows what takes the room) or raise the budget \
             in xtask with a reason in docs/decisions.md",
            over.join("; ")
        );
    }
    Ok(())
}

fn kb(bytes: u64) -> String {
    format!("{:.1} KB", bytes as f64 / 1024.0)
}

/// The web app's budget, wasm and JavaScript together: issue 17's 300 KB for the app, plus 84 KB
/// for markdown until its layer is within issue 15's 80 KB (the app is 383.4 KB with it;
/// pulldown-cmark's table of entity names is the remaining lever, docs/bench.md). Sign-in, the sidebar and the chat's comfort took
/// the app to 357 KB; Leptos' erased components (`.cargo/config.toml`), no resources, one request
/// function for every answer type and no float printing brought it back to 297 KB. Asking again
/// after a 503 while a server restarts and the reason under a cut-off turn (rolling deploys)
/// took it from 383.8 to 385.6 KB: 4 KB more. Usage under each reply (issue 29) and the page a
/// person trusts (issue 32) took it to 410.0 KB: 28 KB more; its answers' versions 5.5 KB more;
/// the single sign-on buttons, an approval's arguments and the inspector's button (issues 28, 27
/// and 31) 2 KB more, to 419.4 KB; editing as a mode, the decision in the approval card and
/// Stop until the reply settles (issue 48) 2.6 KB more, to 422.1 KB; three wasm-opt options in
/// index.html (low memory unused, big functions of one caller not inlined, tool sections
/// stripped) took it from 424.8 to 418.2 KB with the same code, and the header holding its rows
/// (issue 48) to 418.8 KB; export, import and share links (issue 45) to 422.8 KB, and projects'
/// sidebar (the list's project, Move or pin, the pin's mark; issue 45) 3.4 KB more, to 426.2 KB
/// (docs/decisions.md, "Size budgets"); maths drawn as MathML (math-core, issue 47) 54.4 KB more,
/// to 480.2 KB, drawn in the frame its closer arrives rather than loaded on first need; the sources
/// under an answer (core's `sources::of_turn` reading a turn's passages, and their list; issue 43)
/// 3.9 KB more, to 484.9 KB.
const WEB_APP_BUDGET: u64 = (300 + 84 + 43 + 55 + 4) * 1024;

/// The code highlighter (web/highlight/ and the Prism files index.html copies), loaded on first
/// need and kept outside the app's budget (issue 32): its whole, 31 KB with every language; a reply
/// with code loads Prism's core and its languages only (about 4 KB for Rust).
const HIGHLIGHTER_BUDGET: u64 = 36 * 1024;

/// The prompt inspector's panel (web/inspector/), loaded on first need and kept outside the app's
/// budget (issue 31).
const INSPECTOR_BUDGET: u64 = 4 * 1024;

/// The API keys panel (web/keys/), loaded on first need and kept outside the app's budget
/// (issue 46).
const KEYS_BUDGET: u64 = 4 * 1024;

/// The export and import panel (web/exchange/), loaded on first need and kept outside the app's
/// budget (issue 45).
const EXCHANGE_BUDGET: u64 = 4 * 1024;

/// The share links panel (web/share/), loaded on first need and kept outside the app's budget.
const SHARE_BUDGET: u64 = 4 * 1024;

/// The projects panel (web/projects/), loaded on first need and kept outside the app's budget
/// (issue 45).
const PROJECTS_BUDGET: u64 = 4 * 1024;

/// The knowledge panel (web/knowledge/: collections, their documents, adding and deleting them),
/// loaded on first need and kept outside the app's budget (issue 43).
const KNOWLEDGE_BUDGET: u64 = 4 * 1024;

/// What the panels loaded on first need share (web/panels/: calling the API, making elements,
/// showing a panel and asking before what cannot be undone),
/// loaded with the first of them and kept outside the app's budget.
const PANELS_SHARED_BUDGET: u64 = 2 * 1024;

/// A shared conversation's page's words (web/shared/: its title, who shared it, Continue, why a
/// link shows nothing), loaded on first need and kept outside the app's budget; the app draws
/// its turns.
const SHARED_PAGE_BUDGET: u64 = 2 * 1024;

/// The parts of the web app loaded on first need, each in its folder of `dist/` with its own
/// budget: the rest is the app.
const LAZY: [(&str, &str, u64); 9] = [
    (
        "dist/highlight",
        "code highlighter (lazy, dist/highlight)",
        HIGHLIGHTER_BUDGET,
    ),
    (
        "dist/inspector",
        "prompt inspector (lazy, dist/inspector)",
        INSPECTOR_BUDGET,
    ),
    ("dist/keys", "API keys panel (lazy, dist/keys)", KEYS_BUDGET),
    (
        "dist/exchange",
        "export/import panel (lazy, dist/exchange)",
        EXCHANGE_BUDGET,
    ),
    (
        "dist/shared",
        "shared conversation's page (lazy, dist/shared)",
        SHARED_PAGE_BUDGET,
    ),
    (
        "dist/share",
        "share links panel (lazy, dist/share)",
        SHARE_BUDGET,
    ),
    (
        "dist/projects",
        "projects panel (lazy, dist/projects)",
        PROJECTS_BUDGET,
    ),
    (
        "dist/knowledge",
        "knowledge panel (lazy, dist/knowledge)",
        KNOWLEDGE_BUDGET,
    ),
    (
        "dist/panels",
        "the panels' shared helpers (lazy, dist/panels)",
        PANELS_SHARED_BUDGET,
    ),
];

/// Checks the web app in `dist/` (Trunk's release build): its wasm and every JavaScript file,
/// and apart from them each part in [`LAZY`].
pub fn web_app_budget() -> anyhow::Result<()> {
    let mut files = Vec::new();
    collect(Path::new("dist"), &mut files)?;
    files.retain(|f| matches!(f.extension().and_then(|e| e.to_str()), Some("wasm" | "js")));
    let mut rows = Vec::new();
    for (folder, name, budget) in LAZY {
        let (part, rest): (Vec<PathBuf>, Vec<PathBuf>) =
            files.into_iter().partition(|f| f.starts_with(folder));
        files = rest;
        if part.is_empty() {
            bail!(
                "dist/ lacks the web app's {name}; build the web app first (trunk build --release)"
            );
        }
        rows.push((name, measure(&part)?, budget));
    }
    if files.is_empty() {
        bail!("dist/ lacks the web app; build it first (trunk build --release)");
    }
    rows.insert(0, ("web app (wasm + js)", measure(&files)?, WEB_APP_BUDGET));
    check(&rows)
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            collect(&entry.path(), files)?;
        } else {
            files.push(entry.path());
        }
    }
    Ok(())
}
