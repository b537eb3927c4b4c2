// A code block's Copy button (drawn with the block by describe.rs): one click listener for every
// reply's body copies the block's code and says "Copied" for two seconds. Written in JavaScript
// because the same in Rust cost the package 2.3 KB of wasm (the clipboard's and the timer's
// bindings and closures).

const COPIED_FOR_MS = 2000;

function copy(event) {
  const button = event.target instanceof Element ? event.target.closest("button.code-copy") : null;
  const code = button?.closest(".code-block")?.querySelector("code");
  if (!code) return;
  navigator.clipboard?.writeText(code.textContent).catch(() => {});
  button.textContent = "Copied";
  setTimeout(() => { button.textContent = "Copy"; }, COPIED_FOR_MS);
}

/** Makes the Copy buttons drawn under `body` copy their code; listening twice adds nothing. */
export function listenForCopy(body) {
  body.addEventListener("click", copy);
}
