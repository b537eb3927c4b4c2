// Colours a settled reply's code blocks (web/src/highlight.rs): what does it, and Prism, load on
// first need from /highlight/, outside the app's bundle, in browsers that draw CSS highlights.
export function highlightCode(root) {
  if (!globalThis.CSS?.highlights) return;
  // A reloaded reply is drawn before its turn is in the page; the warm-up's reply never is.
  requestAnimationFrame(() => {
    if (root.isConnected && root.querySelector(".code-block")) {
      import("/highlight/paint.js").then((paint) => paint.highlightCode(root), () => {});
    }
  });
}
