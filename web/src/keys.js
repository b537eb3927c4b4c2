// API keys (web/src/keys.rs): the panel loads on first need from /keys/, outside the app's bundle.
export function openKeys(opener) {
  import("/keys/panel.js").then((panel) => panel.open(opener), () => {});
}
