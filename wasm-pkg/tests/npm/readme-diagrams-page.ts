// The page the browser test bundles for the README's diagrams example (readme-diagrams.ts,
// written by readme.mjs, mermaid standing in as mermaid-stub.ts): the engine initialised with the
// bundled wasm's address, then the example run on `#reply` with `stream` giving REPLY in chunks.
import init from "portal-wasm/web";
import wasmUrl from "portal-wasm/portal_wasm_bg.wasm";

export const REPLY =
  "A flow:\n\n```mermaid\ngraph TD\n  A-->B\n```\n\n```mermaid\nnot a diagram\n```\n\n" +
  "```rust\nfn main() { let a = 1; }\n```\n\nThe end.";

await init({ module_or_path: wasmUrl });
const reply = document.createElement("div");
reply.id = "reply";
document.body.append(reply);
Object.assign(globalThis, {
  portalReadmeDiagrams: { REPLY },
  stream: (async function* () {
    for (let at = 0; at < REPLY.length; at += 7) {
      yield REPLY.slice(at, at + 7);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })(),
});
await import("./readme-diagrams");
