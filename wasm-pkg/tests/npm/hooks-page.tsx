// The page the browser test bundles with esbuild (code splitting on, as an app's bundler does)
// for the hooks: portal-wasm/highlight colouring a settled reply's code, loaded only once a
// reply has code, and a diagram hook, through ReplyView's options, <portal-reply>'s properties
// and <PortalReply>'s props; driven from the test through `window.portalHooksTest`.
import { flushSync } from "react-dom";
import { createRoot } from "react-dom/client";
import init, { ReplyView, type DiagramOptions } from "portal-wasm/web";
import wasmUrl from "portal-wasm/portal_wasm_bg.wasm";
import { definePortalReply } from "portal-wasm/element";
import { createPortalReply } from "portal-wasm/react";
import { highlightCode } from "portal-wasm/highlight";
import "portal-wasm/reply.css";

export const CODE =
  "Some Rust:\n\n```rust\nfn main() {\n    let answer = 42;\n}\n```\n\nAnd a flow:\n\n" +
  "```mermaid\ngraph TD\n  A-->B\n```\n\nThe end, after the diagram.";
const FLOW = "graph TD\n  A-->B\n";

await init({ module_or_path: wasmUrl });
definePortalReply(ReplyView);
const PortalReply = createPortalReply(ReplyView);

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function box() {
  const element = document.createElement("div");
  document.body.append(element);
  return element;
}

/** The Prism files the page has fetched, by their chunks' names. */
const prism = () =>
  performance.getEntriesByType("resource").map((entry) => entry.name.split("/").pop() ?? "")
    .filter((name) => name.startsWith("prism-"));

/** The texts of the ranges named `code-keyword` in `root`'s code, once there are some. */
async function keywords(root: Element) {
  const found = () => [...(CSS.highlights.get("code-keyword") ?? [])]
    .filter((range) => root.contains(range.startContainer)).map((range) => range.toString());
  for (let n = 0; n < 200 && found().length === 0; n++) await pause(25);
  return found();
}

/** A diagram hook noting its calls and drawing an SVG of the source, as mermaid would. */
function diagrams(calls: string[][]): DiagramOptions {
  return {
    draw(element, source, language) {
      calls.push([source, language, element.className]);
      const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
      svg.append(source);
      element.append(svg);
    },
  };
}

/** What a settled reply in `root` shows: its keywords, its diagrams and its code's text nodes. */
async function shown(root: Element) {
  return {
    keywords: await keywords(root),
    svgs: [...root.querySelectorAll(".diagram svg")].map((svg) => svg.textContent),
    codeTexts: root.querySelector("pre code")?.childNodes.length,
  };
}

/** Pushes CODE in chunks, noting the Prism files fetched until `settled` says it settled. */
async function play(push: (chunk: string) => void, finish: () => void, settled: () => boolean) {
  const before: string[] = [];
  for (let at = 0; at < CODE.length; at += 9) {
    push(CODE.slice(at, at + 9));
    await pause(10);
    before.push(...prism());
  }
  finish();
  while (!settled()) {
    before.push(...prism());
    await pause(10);
  }
  return before;
}

Object.assign(window, {
  portalHooksTest: {
    CODE,
    FLOW,
    prism,
    /** A reply without code, settled with highlightCode: nothing is fetched. */
    async plain() {
      const view = new ReplyView(box(), { highlightCode });
      view.push("# Plain\n\nNo code here, only `inline` code.");
      view.finish();
      await view.settled;
      await pause(300);
      return prism();
    },
    /** ReplyView with highlightCode and diagrams plays CODE and settles. */
    async view() {
      const element = box();
      const calls: string[][] = [];
      const view = new ReplyView(element, { highlightCode, diagrams: diagrams(calls) });
      let settled = false;
      view.settled.then(() => { settled = true; });
      const before = await play((chunk) => view.push(chunk), () => view.finish(), () => settled);
      const reloaded = box();
      ReplyView.drawReply(reloaded, CODE, { diagrams: diagrams([]) });
      await pause(0);
      return { before, calls, ...(await shown(element)), after: prism(),
        same: element.innerHTML === reloaded.innerHTML };
    },
    /** <portal-reply> with the hooks as properties. */
    async element() {
      const element = document.createElement("portal-reply");
      document.body.append(element);
      const calls: string[][] = [];
      element.highlightCode = highlightCode;
      element.diagrams = diagrams(calls);
      let settled = false;
      element.settled.then(() => { settled = true; });
      await play((chunk) => element.push(chunk), () => element.finish(), () => settled);
      return { calls, ...(await shown(element)) };
    },
    /** <PortalReply> with the hooks as props, fed the whole text so far. */
    async react() {
      const host = box();
      const root = createRoot(host);
      const calls: string[][] = [];
      const hook = diagrams(calls);
      let done: (text: string) => void = () => {};
      const settled = new Promise<string>((resolve) => { done = resolve; });
      const show = (text: string, streaming: boolean) => flushSync(() => root.render(
        <PortalReply text={text} streaming={streaming} highlightCode={highlightCode} diagrams={hook} onSettled={done} />,
      ));
      for (let at = 9; at < CODE.length; at += 9) {
        show(CODE.slice(0, at), true);
        await pause(10);
      }
      show(CODE, false);
      const text = await settled;
      return { text, calls, ...(await shown(host)) };
    },
  },
});
