// Projects (web/src/projects.rs): the panel loads on first need from /projects/, outside the app's bundle.
export function openProjects(opener, shown, conversation, title, inProject, pinned, changed) {
  import("/projects/panel.js").then((panel) => panel.open(opener, shown, conversation, title, inProject, pinned, changed), () => {});
}
