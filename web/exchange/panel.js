// Export and import (docs/export.md): a modal dialog where the person downloads the open
// conversation as Markdown or JSON, or all of their work as one ZIP archive, and imports conversations from a file: Portal's export, or
// ChatGPT's or Claude's conversations.json. What each import made is listed with what of it did
// not map. Everything is drawn with text nodes only.

import { el, showPanel } from "/panels/dom.js";

// The conversation the page shows, from its address (/c/<id>), or null on a new chat.
function openConversation() {
  const match = /^\/c\/([^/]+)$/.exec(location.pathname);
  return match ? decodeURIComponent(match[1]) : null;
}

export function open(opener, imported) {
  const closeButton = el("button", { type: "button", "data-testid": "exchange-close" }, "Close");
  const dialog = el(
    "dialog",
    { class: "panel exchange", "aria-labelledby": "exchange-title", "data-testid": "exchange" },
    el("header", {}, el("h2", { id: "exchange-title" }, "Export and import"), closeButton),
    exportSection(openConversation()),
    archiveSection(),
    importSection(imported),
  );
  showPanel(dialog, closeButton, opener);
}

function exportSection(id) {
  const heading = el("h3", { id: "exchange-export" }, "Export this conversation");
  if (id === null) {
    return el("section", { "aria-labelledby": "exchange-export" }, heading, el("p", { class: "keys-note" }, "Open a conversation to export it."));
  }
  const path = (format) => `/api/conversations/${encodeURIComponent(id)}/export?format=${format}`;
  return el(
    "section",
    { "aria-labelledby": "exchange-export" },
    heading,
    el("p", { class: "keys-note" }, "Markdown to read and keep; JSON to bring back into a portal later."),
    el(
      "p",
      { class: "exchange-links" },
      el("a", { href: path("markdown"), download: "", "data-testid": "export-markdown" }, "Download Markdown"),
      el("a", { href: path("json"), download: "", "data-testid": "export-json" }, "Download JSON"),
    ),
  );
}

function archiveSection() {
  return el(
    "section",
    { "aria-labelledby": "exchange-archive" },
    el("h3", { id: "exchange-archive" }, "Export everything"),
    el("p", { class: "keys-note" }, "Every conversation (JSON and Markdown) and the files they used, in one ZIP archive."),
    el(
      "p",
      { class: "exchange-links" },
      el("a", { href: "/api/export", download: "", "data-testid": "export-archive" }, "Download archive"),
    ),
  );
}

function importSection(imported) {
  const file = el("input", { type: "file", id: "exchange-file", accept: ".zip,.json,application/zip,application/json", "data-testid": "import-file" });
  const submit = el("button", { type: "submit", class: "primary", "data-testid": "import-submit" }, "Import");
  const status = el("p", { class: "keys-note", role: "status" });
  const problem = el("p", { class: "problem", role: "alert" });
  const made = el("ul", { class: "exchange-made", "data-testid": "import-made" });
  const form = el(
    "form",
    { class: "keys-form" },
    el("label", { for: "exchange-file" }, "File"),
    file,
    el("div", { class: "keys-actions" }, submit),
    problem,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    problem.textContent = "";
    const chosen = file.files?.[0];
    if (!chosen) {
      problem.textContent = "Choose a file to import first.";
      file.focus();
      return;
    }
    submit.disabled = true;
    made.replaceChildren();
    status.textContent = `Importing ${chosen.name}…`;
    try {
      const answer = await fetch("/api/conversations/import", {
        method: "POST",
        headers: { accept: "application/json", "content-type": chosen.type || "application/octet-stream" },
        body: chosen,
      });
      const read = await answer.json().catch(() => ({}));
      if (!answer.ok) throw new Error(read.error || `the portal could not import it (${answer.status}); try again in a moment`);
      const count = read.conversations.length;
      const projects = read.projects ?? [];
      const madeProjects = projects.length ? ` Projects made: ${projects.map((p) => `“${p.name}”`).join(", ")}.` : "";
      status.textContent = `Imported ${count} conversation${count === 1 ? "" : "s"} from ${read.source}.${madeProjects}`;
      const projectNotes = projects.flatMap((p) => p.notes);
      made.replaceChildren(
        ...read.conversations.map(item),
        ...(projectNotes.length ? [el("li", {}, "Projects", el("ul", { class: "exchange-notes" }, ...projectNotes.map((note) => el("li", {}, note))))] : []),
      );
      form.reset();
      imported?.();
    } catch (error) {
      status.textContent = "";
      problem.textContent = `Nothing was imported: ${error.message}`;
    } finally {
      submit.disabled = false;
    }
  });
  return el(
    "section",
    { "aria-labelledby": "exchange-import" },
    el("h3", { id: "exchange-import" }, "Import conversations"),
    el("p", { class: "keys-note" }, "Portal's export or archive, or ChatGPT's or Claude's data export (the ZIP file, or the conversations.json inside it)."),
    form,
    status,
    made,
  );
}

function item(conversation) {
  const turns = `${conversation.turns} turn${conversation.turns === 1 ? "" : "s"}`;
  return el(
    "li",
    {},
    el("a", { href: `/c/${encodeURIComponent(conversation.id)}` }, conversation.title || "New chat"),
    el("span", { class: "keys-note" }, ` · ${turns}`),
    conversation.notes.length ? el("ul", { class: "exchange-notes" }, ...conversation.notes.map((note) => el("li", {}, note))) : null,
  );
}
