// Colours a settled reply's code blocks by their language, for the web app (the lazy part of
// web/src/highlight.js, served from /highlight/ outside the app's bundle) and for the npm package
// (portal-wasm/highlight) alike. Prism's files, in prism/ beside it, are imported one language at
// a time on first need (Prism only tokenizes here), each by a literal import() that a bundler
// splits into a chunk of its own. Colours are drawn by the CSS Custom Highlight API, so the
// code's text nodes are never changed: ranges over them are named `code-KIND`, and a style sheet
// (style.css, the package's reply.css) colours each name in both themes.

/** Prism's files: its core, and each language's grammar, imported once each on first need. */
const FILES = {
  core: () => import("./prism/prism-core.min.js"),
  clike: () => import("./prism/prism-clike.min.js"),
  markup: () => import("./prism/prism-markup.min.js"),
  css: () => import("./prism/prism-css.min.js"),
  json: () => import("./prism/prism-json.min.js"),
  bash: () => import("./prism/prism-bash.min.js"),
  python: () => import("./prism/prism-python.min.js"),
  rust: () => import("./prism/prism-rust.min.js"),
  sql: () => import("./prism/prism-sql.min.js"),
  yaml: () => import("./prism/prism-yaml.min.js"),
  toml: () => import("./prism/prism-toml.min.js"),
  diff: () => import("./prism/prism-diff.min.js"),
  swift: () => import("./prism/prism-swift.min.js"),
  javascript: () => import("./prism/prism-javascript.min.js"),
  typescript: () => import("./prism/prism-typescript.min.js"),
  go: () => import("./prism/prism-go.min.js"),
  java: () => import("./prism/prism-java.min.js"),
  c: () => import("./prism/prism-c.min.js"),
  cpp: () => import("./prism/prism-cpp.min.js"),
  csharp: () => import("./prism/prism-csharp.min.js"),
  ruby: () => import("./prism/prism-ruby.min.js"),
  kotlin: () => import("./prism/prism-kotlin.min.js"),
  markdown: () => import("./prism/prism-markdown.min.js"),
};
/** What a language's grammar needs loaded before it; the others need the core alone. */
const REQUIRES = { javascript: "clike", typescript: "javascript", go: "clike", java: "clike", c: "clike", cpp: "c", csharp: "clike", ruby: "clike", kotlin: "clike", markdown: "markup" };
/** The languages coloured, by Prism's names. */
const LANGUAGES = Object.keys(FILES).filter((name) => name !== "core" && name !== "clike");
const ALIASES = { html: "markup", xml: "markup", svg: "markup", js: "javascript", jsx: "javascript", ts: "typescript", tsx: "typescript", sh: "bash", shell: "bash", zsh: "bash", console: "bash", py: "python", rs: "rust", golang: "go", "c++": "cpp", cs: "csharp", "c#": "csharp", rb: "ruby", kt: "kotlin", yml: "yaml", md: "markdown", patch: "diff" };
// Prism's token types, by the colour they get.
const KINDS = {
  comment: "comment prolog doctype cdata",
  keyword: "keyword atrule important rule title",
  string: "string char attr-value regex url template-string",
  number: "number boolean constant symbol",
  function: "function function-definition macro",
  type: "class-name builtin namespace table",
  tag: "tag selector",
  property: "property attr-name key",
  inserted: "inserted",
  deleted: "deleted",
  variable: "variable",
};
const KIND = {};
for (const [kind, types] of Object.entries(KINDS)) for (const type of types.split(" ")) KIND[type] = kind;

const loading = new Map();
const idle = (task) => globalThis.requestIdleCallback
  ? requestIdleCallback(task, { timeout: 500 })
  : setTimeout(task, 0);
const painted = new WeakSet();

function load(name) {
  if (!loading.has(name)) {
    loading.set(name, name === "core" ? core() : load(REQUIRES[name] ?? "core").then(FILES[name]));
  }
  return loading.get(name);
}

// A page with a Prism of its own keeps it, and gets the grammars it lacks; otherwise Prism is
// made manual: it must not colour the page itself, only tokenize what it is given.
function core() {
  if (globalThis.Prism?.tokenize) return Promise.resolve();
  globalThis.Prism = { manual: true, disableWorkerMessageHandler: true };
  return FILES.core();
}

/**
 * Colours the code blocks under `root` whose language is known; others stay plain, as does all
 * code in a browser without CSS highlights.
 */
export function highlightCode(root) {
  if (!globalThis.CSS?.highlights) return;
  for (const block of root.querySelectorAll(".code-block")) {
    const label = block.querySelector(".code-language")?.textContent.trim().toLowerCase();
    const language = ALIASES[label] ?? (LANGUAGES.includes(label) ? label : null);
    const code = block.querySelector("code");
    if (!language || !code || painted.has(code)) continue;
    painted.add(code);
    // Each block is coloured in an idle task of its own, so a reply with many never janks; code
    // not in the page by then is left for a later call.
    const later = () => (code.isConnected ? paint(code, language) : painted.delete(code));
    load(language).then(() => idle(later), () => painted.delete(code));
  }
}

function paint(code, language) {
  const texts = [];
  const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) texts.push(walker.currentNode);
  const at = (offset) => {
    for (const text of texts) {
      if (offset <= text.length) return [text, offset];
      offset -= text.length;
    }
    return [texts[texts.length - 1], texts[texts.length - 1].length];
  };
  forget();
  let offset = 0;
  const walk = (tokens, kind) => {
    for (const token of typeof tokens === "string" ? [tokens] : Array.isArray(tokens) ? tokens : [tokens]) {
      if (typeof token === "string") {
        if (kind && token.trim()) {
          const range = new Range();
          range.setStart(...at(offset));
          range.setEnd(...at(offset + token.length));
          named(kind).add(range);
        }
        offset += token.length;
      } else {
        const own = [token.type, ...[token.alias ?? []].flat()].map((t) => KIND[t]).find(Boolean);
        walk(token.content, own ?? kind);
      }
    }
  };
  walk(Prism.tokenize(texts.map((t) => t.data).join(""), Prism.languages[language]));
}

function named(kind) {
  const name = `code-${kind}`;
  if (!CSS.highlights.has(name)) CSS.highlights.set(name, new Highlight());
  return CSS.highlights.get(name);
}

// Ranges over code that left the page (another conversation opened) are let go.
function forget() {
  for (const kind of Object.keys(KINDS)) {
    const highlight = CSS.highlights.get(`code-${kind}`);
    for (const range of highlight ?? []) if (!range.startContainer.isConnected) highlight.delete(range);
  }
}
