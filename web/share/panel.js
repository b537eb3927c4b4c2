// Share links (docs/share.md): a modal dialog where the person makes a link to a read-only
// snapshot of the open conversation (its ended turns as they are now), for their organisation
// or, where the organisation allows it, anyone with the link, for as long as they choose; copies
// it; and revokes the links made before. Everything is drawn with text nodes only.

import { api, el, time, showPanel } from "/panels/dom.js";

const turns = (n) => (n === 1 ? "1 turn" : `${n} turns`);

// Who sees a link, in words.
const WHO = { organisation: "Your organisation", public: "Anyone with the link" };

// The lifetimes a link may be given, in days ("" lives until revoked).
const LIFETIMES = [
  ["", "Never"],
  ["1", "In 1 day"],
  ["7", "In 7 days"],
  ["30", "In 30 days"],
];

export async function open(opener, conversation) {
  const closeButton = el("button", { type: "button" }, "Close");
  const intro = el(
    "p",
    { id: "share-intro", class: "keys-note" },
    "A link shows this conversation as it is now, read only: its finished turns, without the model's thinking. What is said after is not in it.",
  );
  const form = newLinkForm(conversation, async (link) => {
    made.show(link);
    listStatus.textContent = "";
    await refresh();
  });
  const made = madeLink();
  const list = el("ul", { class: "keys-list", "data-testid": "share-list" });
  const listHeading = el("h3", { id: "share-listed", tabindex: "-1" }, "Links to this conversation");
  const listStatus = el("p", { class: "keys-note", role: "status" });
  const listProblem = el("p", { class: "problem", role: "alert" });
  const dialog = el(
    "dialog",
    { class: "panel share", "aria-labelledby": "share-title", "aria-describedby": "share-intro", "data-testid": "share" },
    el("header", {}, el("h2", { id: "share-title" }, "Share this conversation"), closeButton),
    intro,
    form.node,
    made.node,
    el("section", { "aria-labelledby": "share-listed" }, listHeading, listStatus, listProblem, list),
  );
  showPanel(dialog, closeButton, opener);
  form.first.focus();

  const refresh = async () => {
    try {
      const read = await api("GET", `/api/shares?conversation=${encodeURIComponent(conversation)}`);
      form.allowPublic(read.public_allowed);
      drawList(list, read.links, revoke);
    } catch (error) {
      listProblem.textContent = `The links could not be read: ${error.message}`;
    }
  };
  const revoke = async (link, button) => {
    button.disabled = true;
    listProblem.textContent = "";
    try {
      await api("DELETE", `/api/shares/${encodeURIComponent(link.id)}`);
      made.revoked(link);
      listStatus.textContent = "The link is revoked: whoever opens it now is told it does not exist.";
      await refresh();
      listHeading.focus();
    } catch (error) {
      listProblem.textContent = error.message;
      button.disabled = false;
    }
  };
  await refresh();
}

// The form making a link: who sees it and when it expires. `made` is given the server's
// answer; a refusal is shown in words under the form.
function newLinkForm(conversation, made) {
  const choice = (value, checked) =>
    el("input", { type: "radio", name: "visibility", id: `share-${value}`, value, checked });
  const organisation = choice("organisation", true);
  const anyone = choice("public");
  const publicNote = el("p", { id: "share-public-note", class: "keys-note", hidden: "" }, "Your organisation does not allow links for anyone.");
  const lifetime = el("select", { id: "share-expires", name: "expires" });
  for (const [days, label] of LIFETIMES) lifetime.append(el("option", { value: days }, label));
  const problem = el("p", { class: "problem", role: "alert" });
  const create = el("button", { type: "submit", class: "primary" }, "Create link");
  const node = el(
    "form",
    { class: "keys-form", "aria-labelledby": "share-new" },
    el("h3", { id: "share-new" }, "New link"),
    el(
      "fieldset",
      {},
      el("legend", {}, "Who can see it"),
      el(
        "div",
        { class: "keys-agents" },
        el("label", {}, organisation, "Your organisation, signed in"),
        el("label", {}, anyone, WHO.public),
      ),
      publicNote,
    ),
    el("label", { for: "share-expires" }, "Expires"),
    lifetime,
    problem,
    el("div", { class: "keys-actions" }, create),
  );
  // Whether the organisation allows links for anyone; when not, the choice is disabled and says so.
  const allowPublic = (allowed) => {
    anyone.disabled = !allowed;
    publicNote.hidden = allowed;
    if (allowed) anyone.removeAttribute("aria-describedby");
    else anyone.setAttribute("aria-describedby", "share-public-note");
    if (!allowed && anyone.checked) organisation.checked = true;
  };
  node.addEventListener("submit", async (event) => {
    event.preventDefault();
    create.disabled = true;
    problem.textContent = "";
    const asked = { visibility: anyone.checked ? "public" : "organisation" };
    if (lifetime.value) asked.expires_in_days = Number(lifetime.value);
    try {
      await made(await api("POST", `/api/conversations/${encodeURIComponent(conversation)}/shares`, asked));
    } catch (error) {
      problem.textContent = error.message;
    } finally {
      create.disabled = false;
    }
  });
  return { node, first: organisation, allowPublic };
}

// The link just made, its address whole in a read-only field with Copy; focus goes to Copy.
function madeLink() {
  const node = el("section", { class: "keys-secret", "aria-label": "Your new link", hidden: "" });
  let shown = null;
  const show = (link) => {
    shown = link.id;
    const address = location.origin + link.url;
    const field = el("input", { type: "text", id: "share-url", readonly: "", value: address, "data-testid": "share-url" });
    const copy = el("button", { type: "button" }, "Copy");
    copy.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(address);
        copy.textContent = "Copied";
      } catch {
        field.select();
        copy.textContent = "Selected: copy it with the keyboard";
      }
    });
    const who = link.visibility === "public" ? "Anyone with the link" : "People in your organisation, signed in,";
    node.replaceChildren(
      el("label", { for: "share-url" }, "Your new link"),
      el("div", { class: "keys-secret-line" }, field, copy),
      el("p", { class: "keys-note" }, `${who} can see its ${turns(link.turns)}.`),
    );
    node.hidden = false;
    copy.focus();
  };
  // A revoked link is no longer offered to copy.
  const revoked = (link) => {
    if (link.id === shown) node.hidden = true;
  };
  return { node, show, revoked };
}

// The conversation's links, newest first: who sees them, how many turns, when made, and whether
// live (its address, and Revoke), expired or revoked.
function drawList(list, links, revoke) {
  if (links.length === 0) {
    list.replaceChildren(el("li", { class: "keys-note" }, "No links yet."));
    return;
  }
  const now = Date.now();
  list.replaceChildren(
    ...links.map((link) => {
      const expired = link.expires !== null && link.expires <= now;
      const state = link.revoked !== null ? "revoked" : expired ? "expired" : "live";
      const ends =
        state === "revoked"
          ? ["Revoked ", time(link.revoked)]
          : link.expires === null
            ? ["Never expires"]
            : [expired ? "Expired " : "Expires ", time(link.expires)];
      const line = el("p", { class: "keys-note", id: `share-link-${link.id}` }, `${turns(link.turns)} · made `, time(link.created), " · ", ...ends);
      let button = null;
      if (state === "live") {
        button = el("button", { type: "button", "aria-describedby": line.id }, "Revoke");
        button.addEventListener("click", () => revoke(link, button));
      }
      return el(
        "li",
        { "data-link": link.id, "data-state": state },
        el(
          "div",
          { class: "keys-item" },
          el("span", { class: "keys-name" }, WHO[link.visibility]),
          state === "live" ? null : el("span", { class: "keys-state" }, state === "revoked" ? "Revoked" : "Expired"),
        ),
        line,
        state === "live" ? el("code", { class: "share-address" }, location.origin + link.url) : null,
        button,
      );
    }),
  );
}
