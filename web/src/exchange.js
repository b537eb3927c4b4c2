// Export and import (web/src/exchange.rs): the panel loads on first need from /exchange/,
// outside the app's bundle.
export function openExchange(opener, imported) {
  import("/exchange/panel.js").then((panel) => panel.open(opener, imported), () => {});
}
