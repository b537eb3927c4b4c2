/**
 * Colours the code blocks under `root` by their language, as Portal's web app does. Give it to
 * `ReplyView` as its `highlightCode` option (or to `<portal-reply>` and `<PortalReply>`), and each
 * reply's code is coloured once the reply settled, never while it plays out.
 *
 * Prism 1.30 (tokenizing only) is imported on first need: its core and then each language's
 * grammar, from files beside this module that a bundler splits into chunks of their own, so
 * nothing loads until a reply holds code in a language it knows (`markup`/`html`/`xml`, `css`,
 * `json`, `bash`/`sh`, `python`, `rust`, `sql`, `yaml`, `toml`, `diff`, `swift`, `javascript`,
 * `typescript`, `go`, `java`, `c`, `cpp`, `csharp`, `ruby`, `kotlin`, `markdown` and their
 * usual aliases). A page with a Prism of its own keeps it and gets the grammars it lacks.
 *
 * The DOM is never changed: ranges of the code's text are named as CSS highlights
 * (`code-comment`, `code-keyword`, `code-string`, `code-number`, `code-function`, `code-type`,
 * `code-tag`, `code-property`, `code-inserted`, `code-deleted`, `code-variable`), which
 * `portal-wasm/reply.css` colours. In a browser without CSS highlights (Firefox before 140) code
 * stays plain.
 */
export declare function highlightCode(root: ParentNode): void;
