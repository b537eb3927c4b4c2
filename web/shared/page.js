// A shared conversation's page (web/src/shared_page.rs, docs/share.md): reads the link and draws,
// around the turns the app draws, the page's words: the title, who shared it and when, and
// "Continue this conversation" for a reader who may; or why the link shows nothing. Everything
// is drawn with text nodes only.

import { el } from "/panels/dom.js";

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// The link's answer; a portal restarting (503) is asked again for up to 45 s, as the app does.
async function read(method, path) {
  for (let waited = 0; ; waited += 3000) {
    const answer = await fetch(path, { method, headers: { accept: "application/json" } }).catch(() => {
      throw new Error("The portal cannot be reached; check the connection, then try again.");
    });
    if (answer.status !== 503 || waited >= 45000) return [answer.status, await answer.json().catch(() => ({}))];
    await pause(3000);
  }
}

// Resolves to the snapshot's transcript as JSON, to `null` when the link needs the reader signed
// in, and to nothing when the link shows nothing (the page then says why).
export async function show(page, token) {
  const turns = page.querySelector(".conversation");
  const say = (heading, detail, attributes = { class: "problem", role: "alert" }) =>
    turns.before(el("div", { class: "shared-about", "data-testid": "shared-unshown" }, el("h1", {}, heading), el("p", attributes, detail)));
  let status, shared;
  try {
    [status, shared] = await read("GET", `/api/shared/${encodeURIComponent(token)}`);
  } catch (error) {
    return say("This conversation could not be shown.", error.message);
  }
  if (status === 401) return null;
  if (status === 404) return say("This link does not exist, was revoked or has expired.", "Ask whoever shared it for a new one.", { class: "shared-line" });
  if (status !== 200) return say("This conversation could not be shown.", shared.error || `The portal answered ${status}; try again in a moment.`);
  const title = shared.title || "A shared conversation";
  const when = new Date(shared.created);
  document.title = `${title} · Portal`;
  turns.before(
    el(
      "div",
      { class: "shared-about" },
      el("h1", { dir: "auto", "data-testid": "shared-title" }, title),
      el(
        "p",
        { class: "shared-line", "data-testid": "shared-line" },
        "Shared by ",
        el("span", { dir: "auto" }, shared.shared_by),
        ` · ${shared.turns === 1 ? "1 turn" : `${shared.turns} turns`} · a snapshot from `,
        el("time", { datetime: when.toISOString(), title: when.toLocaleString() }, when.toLocaleDateString("en-GB", { day: "numeric", month: "short", year: "numeric" })),
      ),
    ),
  );
  if (shared.can_continue) turns.after(el("div", { class: "dock" }, continueButton(token)));
  return JSON.stringify(shared.transcript);
}

// "Continue this conversation": the snapshot copied as the reader's own conversation, which then
// opens; a refusal is said in words beside the button.
function continueButton(token) {
  const problem = el("p", { class: "problem", role: "alert" });
  const button = el("button", { type: "button", "data-testid": "continue" }, "Continue this conversation");
  button.addEventListener("click", async () => {
    button.disabled = true;
    problem.textContent = "";
    try {
      const [status, copy] = await read("POST", `/api/shared/${encodeURIComponent(token)}/continue`);
      if (status !== 201) throw new Error(copy.error || `The portal answered ${status}; try again in a moment.`);
      location.assign(`/c/${encodeURIComponent(copy.id)}`);
    } catch (error) {
      problem.textContent = error.message;
      button.disabled = false;
    }
  });
  return el("div", { class: "shared-continue" }, problem, button);
}
