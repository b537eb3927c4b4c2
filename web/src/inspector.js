// What the model saw (web/src/inspector.rs): the panel loads on first need from /inspector/,
// outside the app's bundle.
export function openInspector(conversation, turn, opener) {
  import("/inspector/panel.js").then((panel) => panel.open(conversation, turn, opener), () => {});
}
