// What the panels loaded on first need (web/keys, web/share, web/projects, web/exchange,
// web/inspector, web/shared) share: the API called as JSON, elements made with text nodes only,
// and a date as the panels show it. Loaded with the first of them, outside the app's bundle.

// Calls the portal's API; resolves to the answer's JSON (`{}` for 204), or throws an Error whose
// message is the server's sentence for a refusal.
export async function api(method, path, body) {
  const headers = { accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  const answer = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const read = answer.status === 204 ? {} : await answer.json().catch(() => ({}));
  if (!answer.ok) throw new Error(read.error || `the portal could not do that (${answer.status}); try again in a moment`);
  return read;
}

// An element with `attributes` (those undefined, null or false left out) and `children` (nodes or
// strings, drawn as text; null and undefined left out).
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined && value !== null && value !== false) node.setAttribute(name, value);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

const date = (ms) => new Date(ms).toLocaleDateString("en-GB", { day: "numeric", month: "short", year: "numeric" });

// A `<time>` showing the day of `ms` (milliseconds since the epoch), the full time in its title.
export const time = (ms) => el("time", { datetime: new Date(ms).toISOString(), title: new Date(ms).toLocaleString() }, date(ms));

// Runs `act` when `form` is submitted, with `submit` disabled meanwhile; a refusal is shown in
// words in `problem`, and `submit` enabled again.
export function onSubmit(form, submit, problem, act) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    submit.disabled = true;
    problem.textContent = "";
    try {
      await act();
    } catch (error) {
      problem.textContent = error.message;
      submit.disabled = false;
    }
  });
}

// Shows `dialog` as a modal over the page until `closeButton` or Esc closes it; then it is
// removed and the focus goes back to `opener`.
export function showPanel(dialog, closeButton, opener) {
  closeButton.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => {
    dialog.remove();
    opener?.focus();
  });
  document.body.append(dialog);
  dialog.showModal();
}

// Asks before something that cannot be undone, in a modal dialog over the panel: `title`, then
// `body` (nodes; `describedBy` names the one that describes it), Cancel and a button labelled `label` that runs `act(dialog)`. A refusal is shown
// in words in the dialog, which stays open. Resolves, once the dialog has closed, to what `act`
// resolved to, or null when the person cancelled (or closed it while `act` failed).
export function confirmPanel({ id, title, body, label, act, describedBy }) {
  const problem = el("p", { class: "problem", role: "alert" });
  const cancel = el("button", { type: "button" }, "Cancel");
  const confirm = el("button", { type: "button", class: "danger" }, label);
  const dialog = el(
    "dialog",
    { class: "confirm", "aria-labelledby": `${id}-title`, "aria-describedby": describedBy, "data-testid": `${id}-dialog` },
    el("h2", { id: `${id}-title` }, title),
    ...body,
    problem,
    el("div", { class: "dialog-buttons" }, cancel, confirm),
  );
  // What was asked for, if anything: Esc may close the dialog while it is on its way.
  let acting = null;
  cancel.addEventListener("click", () => dialog.close());
  confirm.addEventListener("click", async () => {
    confirm.disabled = true;
    problem.textContent = "";
    acting = act(dialog);
    try {
      await acting;
      dialog.close();
    } catch (error) {
      problem.textContent = error.message;
      confirm.disabled = false;
    }
  });
  document.body.append(dialog);
  dialog.showModal();
  cancel.focus();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => {
      dialog.remove();
      resolve(acting ? acting.catch(() => null) : null);
    });
  });
}
