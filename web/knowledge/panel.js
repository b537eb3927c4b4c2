// Knowledge (docs/knowledge.md): a modal dialog where the person lists the collections of
// documents their agents may search (the organisation's, then their own), makes one, opens one to
// see its documents, adds documents to it (each file its own request, its progress and any
// refusal shown in words) and deletes a document or the collection. Only the organisation's
// administrators may make or change its shared collections: the server says so when anyone else
// tries. Everything is drawn with text nodes only.

import { api, el, time, showPanel, confirmPanel, onSubmit } from "/panels/dom.js";

export async function open(opener) {
  const closeButton = el("button", { type: "button", "data-testid": "knowledge-close" }, "Close");
  const status = el("p", { class: "keys-note", role: "status" });
  const body = el("div", {}, el("p", { class: "keys-note" }, "Loading…"));
  const dialog = el(
    "dialog",
    { class: "panel knowledge", "aria-labelledby": "knowledge-title", "aria-describedby": "knowledge-intro", "data-testid": "knowledge" },
    el("header", {}, el("h2", { id: "knowledge-title" }, "Knowledge"), closeButton),
    el(
      "p",
      { id: "knowledge-intro", class: "keys-note" },
      "Collections of documents an agent searches when its file names them. The organisation's are shared with everyone in it; yours are yours alone.",
    ),
    status,
    body,
  );
  showPanel(dialog, closeButton, opener);

  // Every collection, with the form making one; a collection made is opened.
  const list = async () => {
    let collections;
    try {
      collections = (await api("GET", "/api/collections")).collections;
    } catch (error) {
      body.replaceChildren(el("p", { class: "problem", role: "alert" }, `The collections could not be read: ${error.message}`));
      return;
    }
    const form = collectionForm(async (made) => {
      status.textContent = `“${made.name}” is made: add its documents.`;
      await show(made.id);
    });
    body.replaceChildren(
      form,
      el("section", { "aria-labelledby": "knowledge-listed" }, el("h3", { id: "knowledge-listed", tabindex: "-1" }, "Collections"), collectionList(collections, show)),
    );
  };
  // Collection `id` with its documents.
  const show = async (id) => {
    let read;
    try {
      read = await api("GET", `/api/collections/${encodeURIComponent(id)}`);
    } catch (error) {
      status.textContent = `The collection could not be read: ${error.message}`;
      return;
    }
    const back = el("button", { type: "button", class: "knowledge-back" }, "‹ All collections");
    back.addEventListener("click", () => {
      status.textContent = "";
      list().then(() => dialog.querySelector("#knowledge-listed")?.focus());
    });
    const remove = async (c) => {
      if (await confirmRemove(c)) {
        status.textContent = `“${c.name}” is deleted, with its documents.`;
        await list();
        dialog.querySelector("#knowledge-listed")?.focus();
      }
    };
    body.replaceChildren(back, collectionView(read, remove, status));
    dialog.querySelector("#knowledge-collection")?.focus();
  };
  await list();
  dialog.querySelector("input")?.focus();
}

// The form making a collection: its name, its description and whether it is the organisation's.
// `made` is given the server's answer; a refusal (shared by someone not an administrator) is
// shown in words under the form.
function collectionForm(made) {
  const name = el("input", { id: "collection-name", type: "text", required: "", maxlength: "80", autocomplete: "off", placeholder: "handbook" });
  const description = el("textarea", { id: "collection-description", rows: "2", maxlength: "2000", placeholder: "What its documents are about" });
  const shared = el("input", { id: "collection-shared", type: "checkbox" });
  const problem = el("p", { class: "problem", role: "alert" });
  const submit = el("button", { type: "submit", class: "primary" }, "Make collection");
  const form = el(
    "form",
    { class: "keys-form", "aria-labelledby": "knowledge-new" },
    el("h3", { id: "knowledge-new" }, "New collection"),
    el("label", { for: name.id }, "Name"),
    name,
    el("label", { for: description.id }, "Description"),
    description,
    el("label", { class: "projects-pin" }, shared, "The organisation's, for everyone in it (administrators only)"),
    problem,
    el("div", { class: "keys-actions" }, submit),
  );
  onSubmit(form, submit, problem, async () =>
    made(await api("POST", "/api/collections", { name: name.value, description: description.value, shared: shared.checked })),
  );
  return form;
}

// The collections, the organisation's first: each with whose it is, its documents and their size,
// and Open.
function collectionList(collections, show) {
  if (collections.length === 0) return el("p", { class: "keys-note" }, "No collections yet.");
  return el(
    "ul",
    { class: "projects-list", "data-testid": "knowledge-list" },
    ...collections.map((c) => {
      const openButton = el("button", { type: "button", "aria-label": `Open “${c.name}”` }, "Open");
      openButton.addEventListener("click", () => show(c.id));
      return el(
        "li",
        { "data-collection": c.id, "data-name": c.name },
        el(
          "div",
          { class: "projects-item" },
          el("span", { class: "keys-item" }, el("span", { class: "projects-name" }, c.name), el("span", { class: "keys-state" }, c.shared ? "Organisation's" : "Yours")),
          c.description ? el("span", { class: "keys-note" }, c.description) : null,
          el("span", { class: "keys-note" }, `${count(c.documents, "document")} · ${size(c.bytes)} · made `, time(c.created)),
        ),
        el("div", { class: "projects-actions" }, openButton),
      );
    }),
  );
}

// A collection read (`read`: its entry and documents): what it holds, and for whoever may change
// it, adding documents, deleting one and deleting it. `remove(c)` asks before deleting it;
// `status` says what was done.
function collectionView(read, remove, status) {
  let c = read.collection;
  const path = `/api/collections/${encodeURIComponent(c.id)}`;
  const about = el("p", { class: "keys-note" });
  const documents = el("ul", { class: "projects-list knowledge-documents", "data-testid": "knowledge-documents" });
  // Draws what the collection holds from `read`, the server's answer.
  const draw = (read) => {
    c = read.collection;
    about.textContent = `${c.shared ? "The organisation's" : "Yours"} · ${count(c.documents, "document")} · ${size(c.bytes)}`;
    documents.replaceChildren(...read.documents.map(documentItem));
    if (read.documents.length === 0) documents.append(el("li", { class: "keys-note" }, "No documents yet."));
  };
  // Reads the collection again and draws it.
  const again = async () => {
    try {
      draw(await api("GET", path));
    } catch (error) {
      status.textContent = `The collection could not be read: ${error.message}`;
    }
  };
  // Document `d`: its name, kind, pages, passages, size and when it was added, and Delete.
  const documentItem = (d) => {
    const meta = [kind(d.media_type), d.pages ? count(d.pages, "page") : null, count(d.passages, "passage"), size(d.bytes)];
    const item = el(
      "li",
      { "data-document": d.id, "data-name": d.name },
      el("div", { class: "projects-item" }, el("span", { class: "projects-name" }, d.name), el("span", { class: "keys-note" }, meta.filter(Boolean).join(" · "), " · added ", time(d.created_at_ms))),
    );
    if (c.manageable) {
      const button = el("button", { type: "button", "aria-label": `Delete “${d.name}”` }, "Delete");
      button.addEventListener("click", async () => {
        if (await confirmRemoveDocument(c, d)) {
          status.textContent = `“${d.name}” is deleted: no search finds it now.`;
          await again();
        }
      });
      item.append(el("div", { class: "projects-actions" }, button));
    }
    return item;
  };
  draw(read);
  const heading = el("h3", { id: "knowledge-collection", tabindex: "-1" }, c.name);
  const section = el(
    "section",
    { class: "knowledge-collection", "aria-labelledby": heading.id, "data-testid": "knowledge-collection" },
    heading,
    c.description ? el("p", { class: "keys-note" }, c.description) : null,
    about,
    c.manageable ? adder(path, again) : el("p", { class: "keys-note" }, "Only the organisation's administrators change it."),
    el("h4", {}, "Documents"),
    documents,
  );
  if (c.manageable) {
    const button = el("button", { type: "button", class: "danger", "data-testid": "knowledge-delete" }, "Delete collection");
    button.addEventListener("click", () => remove(c));
    section.append(el("div", { class: "keys-actions" }, button));
  }
  return section;
}

// Adding documents to the collection at `path`: a file input taking several, each sent in its own
// request, one after another, its line saying "adding…" until it is added or refused (the
// server's sentence); `again` draws the collection's documents afresh once every file is done.
function adder(path, again) {
  const input = el("input", { id: "knowledge-files", type: "file", multiple: "", accept: ".pdf,.md,.markdown,.html,.htm,.txt,application/pdf,text/*" });
  const progress = el("ul", { class: "knowledge-progress", "aria-live": "polite", "data-testid": "knowledge-progress" });
  input.addEventListener("change", async () => {
    const files = [...input.files];
    input.disabled = true;
    const lines = files.map((file) => {
      const state = el("span", { class: "keys-note" }, "adding…");
      progress.append(el("li", { "data-name": file.name }, el("span", {}, file.name), " ", state));
      return state;
    });
    for (const [i, file] of files.entries()) {
      try {
        await upload(path, file);
        lines[i].textContent = "added";
      } catch (error) {
        lines[i].textContent = error.message;
        lines[i].className = "problem";
      }
    }
    input.value = "";
    input.disabled = false;
    await again();
  });
  return el(
    "div",
    { class: "keys-form knowledge-add" },
    el("label", { for: input.id }, "Add documents"),
    el("p", { class: "keys-note" }, "PDF, Markdown, HTML or text; each is read and split into passages as it is added."),
    input,
    progress,
  );
}

// Sends `file` to the collection at `path`; resolves to the document added, or throws an Error
// whose message is the server's sentence.
async function upload(path, file) {
  const answer = await fetch(`${path}/documents?filename=${encodeURIComponent(file.name)}`, {
    method: "POST",
    headers: { accept: "application/json", "content-type": "application/octet-stream" },
    body: file,
  });
  const read = await answer.json().catch(() => ({}));
  if (!answer.ok) throw new Error(read.error || `the portal could not add it (${answer.status}); try again in a moment`);
  return read;
}

// Asks before collection `c` is deleted with its documents; resolves to whether it was.
function confirmRemove(c) {
  return confirmPanel({
    id: "collection-delete",
    title: `Delete “${c.name}”?`,
    describedBy: "collection-delete-warning",
    body: [el("p", { id: "collection-delete-warning" }, `Its ${count(c.documents, "document")} go with it, and no agent finds them again. This cannot be undone.`)],
    label: "Delete collection",
    act: () => api("DELETE", `/api/collections/${encodeURIComponent(c.id)}`).then(() => true),
  }).then((done) => done === true);
}

// Asks before document `d` of collection `c` is deleted; resolves to whether it was.
function confirmRemoveDocument(c, d) {
  return confirmPanel({
    id: "document-delete",
    title: `Delete “${d.name}”?`,
    describedBy: "document-delete-warning",
    body: [el("p", { id: "document-delete-warning" }, `No agent finds its passages in “${c.name}” again. This cannot be undone.`)],
    label: "Delete document",
    act: () => api("DELETE", `/api/collections/${encodeURIComponent(c.id)}/documents/${encodeURIComponent(d.id)}`).then(() => true),
  }).then((done) => done === true);
}

const KINDS = { "application/pdf": "PDF", "text/markdown": "Markdown", "text/html": "HTML", "text/plain": "Text" };
const kind = (media) => KINDS[media] ?? media;
const count = (n, noun) => `${n} ${noun}${n === 1 ? "" : "s"}`;

// `bytes` in words: bytes, KB or MB.
function size(bytes) {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
