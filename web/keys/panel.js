// API keys (docs/api.md): a modal dialog where the person lists the keys programs use for the
// OpenAI-compatible API, makes one (named, limited to some agents, expiring) and revokes one. A
// new key's secret is shown once, with Copy; the server never answers it again. Everything is
// drawn with text nodes only.

import { api, el, time, showPanel, confirmPanel } from "/panels/dom.js";

// The lifetimes a key may be given, in days ("" lives until revoked).
const LIFETIMES = [
  ["", "Never"],
  ["7", "In 7 days"],
  ["30", "In 30 days"],
  ["90", "In 90 days"],
  ["365", "In a year"],
];

export async function open(opener) {
  const closeButton = el("button", { type: "button", "data-testid": "keys-close" }, "Close");
  const intro = el(
    "p",
    { id: "keys-intro", class: "keys-note" },
    "A key lets a program use your agents through the portal's OpenAI-compatible API at ",
    el("code", {}, `${location.origin}/v1`),
    ", as you: its conversations are yours and count toward your limits.",
  );
  const secret = el("section", { class: "keys-secret", "aria-label": "Your new key", hidden: "" });
  const form = newKeyForm(async (made) => {
    showSecret(secret, made.secret);
    listStatus.textContent = "";
    await refresh();
  });
  const list = el("ul", { class: "keys-list", "data-testid": "keys-list" });
  const listHeading = el("h3", { id: "keys-listed", tabindex: "-1" }, "Your keys");
  const listStatus = el("p", { class: "keys-note", role: "status" });
  const dialog = el(
    "dialog",
    { class: "panel keys", "aria-labelledby": "keys-title", "aria-describedby": "keys-intro", "data-testid": "keys" },
    el("header", {}, el("h2", { id: "keys-title" }, "API keys"), closeButton),
    intro,
    secret,
    form.node,
    el("section", { "aria-labelledby": "keys-listed" }, listHeading, listStatus, list),
  );
  showPanel(dialog, closeButton, opener);
  form.name.focus();

  let names = new Map();
  const refresh = async () => {
    try {
      drawList(list, (await api("GET", "/api/keys")).keys, names, revoke);
    } catch (error) {
      listStatus.textContent = `Your keys could not be read: ${error.message}`;
    }
  };
  const revoke = async (key) => {
    if (await confirmRevoke(key)) {
      listStatus.textContent = `“${key.name}” is revoked: programs using it are refused from now on.`;
      await refresh();
      listHeading.focus();
    }
  };
  try {
    const agents = await api("GET", "/api/agents");
    names = new Map(agents.map((a) => [a.id, a.name]));
    form.offer(agents);
  } catch (error) {
    form.offer([], `The agents could not be read (${error.message}); a key made now may use every agent.`);
  }
  await refresh();
}

// The form making a key: its name, its agents (none ticked: all) and its lifetime. `made` is
// given the server's answer; a refusal is shown in words under the form.
function newKeyForm(made) {
  const name = el("input", { id: "key-name", type: "text", name: "name", required: "", maxlength: "80", autocomplete: "off", placeholder: "nightly report" });
  const agents = el("div", { class: "keys-agents" }, "Loading…");
  const lifetime = el("select", { id: "key-lifetime", name: "lifetime" });
  for (const [days, label] of LIFETIMES) lifetime.append(el("option", { value: days, selected: days === "30" }, label));
  const problem = el("p", { class: "problem", role: "alert" });
  const make = el("button", { type: "submit", class: "primary" }, "Make key");
  const node = el(
    "form",
    { class: "keys-form", "aria-labelledby": "keys-new" },
    el("h3", { id: "keys-new" }, "New key"),
    el("label", { for: "key-name" }, "Name"),
    name,
    el(
      "fieldset",
      { "aria-describedby": "keys-agents-hint" },
      el("legend", {}, "Agents"),
      el("p", { id: "keys-agents-hint", class: "keys-note" }, "None ticked: every agent you may use, now and later."),
      agents,
    ),
    el("label", { for: "key-lifetime" }, "Expires"),
    lifetime,
    problem,
    el("div", { class: "keys-actions" }, make),
  );
  // Offers the agents to tick, or says why there are none.
  const offer = (offered, note) => {
    const boxes = offered.map((a) => el("label", {}, el("input", { type: "checkbox", value: a.id }), a.name));
    agents.replaceChildren(...boxes, ...(note ? [el("p", { class: "keys-note" }, note)] : []));
  };
  node.addEventListener("submit", async (event) => {
    event.preventDefault();
    make.disabled = true;
    problem.textContent = "";
    const chosen = [...agents.querySelectorAll("input:checked")].map((box) => box.value);
    try {
      const answer = await api("POST", "/api/keys", {
        name: name.value,
        agents: chosen,
        expires_in_days: lifetime.value ? Number(lifetime.value) : null,
      });
      node.reset();
      await made(answer);
    } catch (error) {
      problem.textContent = error.message;
    } finally {
      make.disabled = false;
    }
  });
  return { node, name, offer };
}

// The new key's secret, this once, with Copy; focus goes to Copy.
function showSecret(section, secret) {
  const code = el("code", { "data-testid": "keys-secret" }, secret);
  const copy = el("button", { type: "button", "aria-describedby": "keys-once" }, "Copy");
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(secret);
      copy.textContent = "Copied";
    } catch {
      getSelection().selectAllChildren(code);
      copy.textContent = "Selected: copy it with the keyboard";
    }
  });
  section.replaceChildren(
    el("p", { id: "keys-once" }, el("strong", {}, "Copy your new key now."), " It will not be shown again: the portal keeps only a digest of it."),
    el("div", { class: "keys-secret-line" }, code, copy),
  );
  section.hidden = false;
  copy.focus();
}

// The keys, newest first: name, hint, agents, when made, and whether live (Revoke), expired or
// revoked.
function drawList(list, keys, names, revoke) {
  if (keys.length === 0) {
    list.replaceChildren(el("li", { class: "keys-note" }, "No keys yet."));
    return;
  }
  const now = Date.now();
  list.replaceChildren(
    ...keys.map((key) => {
      const expired = key.expires_at_ms !== null && key.expires_at_ms <= now;
      const state = key.revoked_at_ms !== null ? "revoked" : expired ? "expired" : "live";
      const agents = key.agents.length === 0 ? "All agents" : key.agents.map((id) => names.get(id) ?? id).join(", ");
      const ends =
        state === "revoked"
          ? ["Revoked ", time(key.revoked_at_ms)]
          : key.expires_at_ms === null
            ? ["Never expires"]
            : [expired ? "Expired " : "Expires ", time(key.expires_at_ms)];
      const button = el("button", { type: "button", "aria-label": `Revoke “${key.name}”` }, "Revoke");
      button.addEventListener("click", () => revoke(key));
      return el(
        "li",
        { "data-key": key.id, "data-state": state },
        el(
          "div",
          { class: "keys-item" },
          el("span", { class: "keys-name" }, key.name),
          el("code", { class: "keys-hint", title: "The key's first characters" }, `${key.hint}…`),
          state === "live" ? null : el("span", { class: "keys-state" }, state === "revoked" ? "Revoked" : "Expired"),
        ),
        el("p", { class: "keys-note" }, `${agents} · made `, time(key.created_at_ms), " · ", ...ends),
        state === "live" ? button : null,
      );
    }),
  );
}

// Asks before `key` is revoked, in a dialog over the panel, and revokes it once the person
// confirms; a refusal is shown in words there. Resolves to whether the key was revoked, once the
// dialog has closed.
function confirmRevoke(key) {
  return confirmPanel({
    id: "revoke",
    title: `Revoke “${key.name}”?`,
    describedBy: "revoke-warning",
    body: [el("p", { id: "revoke-warning" }, "Programs using it are refused from now on. This cannot be undone.")],
    label: "Revoke",
    act: () => api("DELETE", `/api/keys/${encodeURIComponent(key.id)}`).then(() => true),
  }).then((revoked) => revoked === true);
}
