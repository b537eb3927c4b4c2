// Share links (web/src/share.rs): the panel loads on first need from /share/, outside the app's bundle.
export function openShare(opener, conversation) {
  import("/share/panel.js").then((panel) => panel.open(opener, conversation), () => {});
}

// A shared conversation's page (web/src/shared_page.rs): its words load on first need from
// /shared/, outside the app's bundle.
export function showShared(page, token) {
  return import("/shared/page.js").then((module) => module.show(page, token));
}
