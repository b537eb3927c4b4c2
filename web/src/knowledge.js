// Knowledge (web/src/knowledge.rs): the panel loads on first need from /knowledge/, outside the app's bundle.
export function openKnowledge(opener) {
  import("/knowledge/panel.js").then((panel) => panel.open(opener), () => {});
}
