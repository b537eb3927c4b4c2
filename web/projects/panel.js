// Projects (docs/projects.md): a modal dialog where the person makes a project (a name,
// instructions every turn in it reads, the agent a new chat in it talks to), changes or deletes
// one (saying what becomes of its conversations), and picks the project the sidebar lists. Opened
// for a conversation, it moves the conversation into a project or out of every one, and pins or
// unpins it. Everything is drawn with text nodes only.

import { api, el, showPanel, confirmPanel, onSubmit } from "/panels/dom.js";

// `shown` is the project the sidebar lists (null: every conversation); `conversation`, when
// given, is the one to move or pin, titled `title`, in project `inProject` and pinned or not.
// `changed(id, name, agent)` tells the sidebar which project to list after a change (an id of
// null lists every conversation).
export async function open(opener, shown, conversation, title, inProject, pinned, changed) {
  const closeButton = el("button", { type: "button", "data-testid": "projects-close" }, "Close");
  const heading = conversation ? `Move or pin “${title}”` : "Projects";
  const status = el("p", { class: "keys-note", role: "status" });
  const body = el("div", {}, el("p", { class: "keys-note" }, "Loading…"));
  const dialog = el(
    "dialog",
    { class: "panel projects", "aria-labelledby": "projects-title", "data-testid": "projects" },
    el("header", {}, el("h2", { id: "projects-title" }, heading), closeButton),
    status,
    body,
  );
  showPanel(dialog, closeButton, opener);

  let agents = [];
  let projects = [];
  // Lists project `id` in the sidebar (every conversation for null).
  const show = (id) => {
    const project = projects.find((p) => p.id === id);
    if (project) changed(project.id, project.name, project.agent);
    else changed(null, null, null);
  };
  const draw = async () => {
    try {
      projects = (await api("GET", "/api/projects")).projects;
    } catch (error) {
      body.replaceChildren(el("p", { class: "problem", role: "alert" }, `Your projects could not be read: ${error.message}`));
      return;
    }
    if (conversation) {
      body.replaceChildren(placeForm(conversation, projects, inProject, pinned, async (change) => {
        await api("PATCH", `/api/conversations/${encodeURIComponent(conversation)}`, change);
        show(shown);
        dialog.close();
      }));
      return;
    }
    const actions = {
      show: (project) => {
        changed(project.id, project.name, project.agent);
        dialog.close();
      },
      save: async (project, change) => {
        const saved = project
          ? await api("PATCH", `/api/projects/${encodeURIComponent(project.id)}`, change)
          : await api("POST", "/api/projects", change);
        status.textContent = project ? `“${saved.name}” is saved.` : `“${saved.name}” is made: move conversations into it from the list.`;
        await draw();
        if (project && project.id === shown) show(shown);
      },
      remove: async (project) => {
        const choice = await confirmDelete(project);
        if (choice === null) return;
        status.textContent = `“${project.name}” is deleted${choice === "delete" ? ", with its conversations" : "; its conversations are in no project now"}.`;
        if (project.id === shown) shown = null;
        await draw();
        show(shown);
      },
    };
    body.replaceChildren(
      projectForm(null, agents, actions.save),
      el("section", { "aria-labelledby": "projects-listed" }, el("h3", { id: "projects-listed" }, "Your projects"), projectList(projects, agents, actions)),
    );
  };
  if (!conversation) {
    try {
      agents = await api("GET", "/api/agents");
    } catch {
      agents = [];
    }
  }
  await draw();
  dialog.querySelector("input, textarea, select")?.focus();
}

// The form making a project (`project` null) or changing one: its name, its instructions and its
// default agent. `save(project, change)` is given the fields; a refusal is shown in words.
function projectForm(project, agents, save) {
  const id = project ? `project-${project.id}` : "project-new";
  const name = el("input", { id: `${id}-name`, type: "text", required: "", maxlength: "80", autocomplete: "off", placeholder: "Heron survey" });
  const instructions = el("textarea", { id: `${id}-instructions`, rows: "4", placeholder: "What every conversation in the project should know or do" });
  const agent = el("select", { id: `${id}-agent` }, el("option", { value: "" }, "The organisation's first"));
  for (const a of agents) agent.append(el("option", { value: a.id }, a.name));
  if (project) {
    name.value = project.name;
    instructions.value = project.instructions;
    agent.value = project.agent ?? "";
  }
  const problem = el("p", { class: "problem", role: "alert" });
  const submit = el("button", { type: "submit", class: "primary" }, project ? "Save" : "Make project");
  const form = el(
    "form",
    { class: "keys-form", "aria-label": project ? `Change “${project.name}”` : "New project" },
    project ? null : el("h3", {}, "New project"),
    el("label", { for: name.id }, "Name"),
    name,
    el("label", { for: instructions.id }, "Instructions"),
    instructions,
    el("label", { for: agent.id }, "Agent for new chats"),
    agent,
    problem,
    el("div", { class: "keys-actions" }, submit),
  );
  onSubmit(form, submit, problem, () =>
    save(project, { name: name.value, instructions: instructions.value, agent: agent.value || null }),
  );
  return form;
}

// The projects, newest first: each with its instructions' opening words and what its agent is,
// Show (the sidebar lists its conversations), Change and Delete.
function projectList(projects, agents, actions) {
  if (projects.length === 0) return el("p", { class: "keys-note" }, "No projects yet.");
  const agentName = (id) => agents.find((a) => a.id === id)?.name ?? "the organisation's first agent";
  return el(
    "ul",
    { class: "projects-list", "data-testid": "projects-list" },
    ...projects.map((project) => {
      const item = el("li", { "data-project": project.id });
      const button = (label, act) => {
        const node = el("button", { type: "button", "aria-label": `${label} “${project.name}”` }, label);
        node.addEventListener("click", act);
        return node;
      };
      const change = button("Change", () => {
        item.replaceChildren(projectForm(project, agents, actions.save));
        item.querySelector("input").focus();
      });
      item.append(
        el(
          "div",
          { class: "projects-item" },
          el("span", { class: "projects-name" }, project.name),
          el("span", { class: "keys-note" }, project.instructions ? project.instructions.slice(0, 120) : "No instructions"),
          el("span", { class: "keys-note" }, `New chats talk to ${agentName(project.agent)}.`),
        ),
        el("div", { class: "projects-actions" }, button("Show", () => actions.show(project)), change, button("Delete", () => actions.remove(project))),
      );
      return item;
    }),
  );
}

// Where a conversation is (a project or none) and whether it is pinned. `save(change)` is given
// the change; a refusal is shown in words.
function placeForm(conversation, projects, inProject, pinned, save) {
  const choices = [{ id: "", name: "No project" }, ...projects].map((p) =>
    el("label", {}, el("input", { type: "radio", name: "project", value: p.id, checked: (inProject ?? "") === p.id }), p.name),
  );
  const pin = el("input", { type: "checkbox", id: "project-pinned", checked: pinned });
  const problem = el("p", { class: "problem", role: "alert" });
  const submit = el("button", { type: "submit", class: "primary" }, "Save");
  const form = el(
    "form",
    { class: "keys-form", "aria-label": "Project and pin" },
    el("fieldset", {}, el("legend", {}, "Project"), el("div", { class: "keys-agents projects-choices" }, ...choices)),
    el("label", { class: "projects-pin" }, pin, "Pinned: listed before the others"),
    problem,
    el("div", { class: "keys-actions" }, submit),
  );
  onSubmit(form, submit, problem, () =>
    save({ project: form.querySelector("input[name=project]:checked")?.value || null, pinned: pin.checked }),
  );
  return form;
}

// Asks what becomes of `project`'s conversations, in a dialog over the panel, and deletes it
// once the person confirms; a refusal (a conversation still answering) is shown in words there.
// Resolves to "keep" or "delete" once deleted, or null.
function confirmDelete(project) {
  const choice = (value, label) =>
    el("label", {}, el("input", { type: "radio", name: "fate", value, checked: value === "keep" }), label);
  return confirmPanel({
    id: "project-delete",
    title: `Delete “${project.name}”?`,
    body: [
      el(
        "fieldset",
        { class: "projects-fate" },
        el("legend", {}, "Its conversations"),
        choice("keep", "Keep them, in no project"),
        choice("delete", "Delete them too: this cannot be undone"),
      ),
    ],
    label: "Delete project",
    act: (dialog) => {
      const fate = dialog.querySelector("input[name=fate]:checked").value;
      return api("DELETE", `/api/projects/${encodeURIComponent(project.id)}?conversations=${fate}`).then(() => fate);
    },
  });
}
