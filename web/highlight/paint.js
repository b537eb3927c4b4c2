// Colours a settled reply's code blocks by their language: the lazy part of web/src/highlight.js,
// served from /highlight/ outside the app's bundle with the Prism files it loads, one language
// at a time, on first need (Prism only tokenizes here). Colours are drawn by the CSS Custom
// Highlight API, so the code's text nodes are never changed: ranges over them are named, and
// style.css colours each name in both themes.

/** What a language's Prism file needs loaded before it. */
export const REQUIRES = { javascript: "clike", typescript: "javascript", go: "clike", java: "clike", c: "clike", cpp: "c", csharp: "clike", ruby: "clike", kotlin: "clike", markdown: "markup" };
/** The languages coloured, by Prism's names (each is /highlight/prism-NAME.min.js). */
export const LANGUAGES = ["markup", "css", "json", "bash", "python", "rust", "sql", "yaml", "toml", "diff", "swift", ...Object.keys(REQUIRES)];
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

function script(name) {
  return new Promise((loaded, failed) => {
    const tag = document.createElement("script");
    tag.src = `/highlight/prism-${name}.min.js`;
    tag.onload = loaded;
    tag.onerror = failed;
    document.head.append(tag);
  });
}

function load(language) {
  if (!loading.has(language)) {
    const before = REQUIRES[language] ? load(REQUIRES[language]) : core();
    loading.set(language, before.then(() => script(language)));
  }
  return loading.get(language);
}

function core() {
  if (!loading.has("core")) {
    // Manual: Prism must not colour the page itself, only tokenize what it is given.
    globalThis.Prism = { manual: true, disableWorkerMessageHandler: true };
    loading.set("core", script("core"));
  }
  return loading.get("core");
}

/** Colours the code blocks under `root` whose language is known; others stay plain. */
export function highlightCode(root) {
  for (const block of root.querySelectorAll(".code-block")) {
    const label = block.querySelector(".code-language")?.textContent.trim().toLowerCase();
    const language = ALIASES[label] ?? (LANGUAGES.includes(label) ? label : null);
    const code = block.querySelector("code");
    if (!language || !code || painted.has(code)) continue;
    painted.add(code);
    // Each block is coloured in an idle task of its own, so a reply with many never janks.
    load(language).then(() => idle(() => code.isConnected && paint(code, language)), () => {});
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
