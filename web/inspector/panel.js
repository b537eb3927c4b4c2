// "What the model saw" (docs/inspector.md): a modal dialog over the answers of
// GET /api/conversations/{id}/turns/{turn}/calls[/{n}]. Everything it shows was decided by core
// on the server (layers, counts, what memory kept and why); this draws it with text nodes only.

import { api, el } from "/panels/dom.js";

const count = (n) => n.toLocaleString("en");

export async function open(conversation, turn, opener) {
  const base = `/api/conversations/${encodeURIComponent(conversation)}/turns/${turn}/calls`;
  const title = el("h2", { id: "inspector-title" }, `What the model saw · turn ${turn}`);
  const body = el("div", { class: "inspector-body", "aria-live": "polite" }, "Loading…");
  const close = el("button", { type: "button", "data-testid": "inspector-close" }, "Close");
  const dialog = el(
    "dialog",
    { class: "inspector", "aria-labelledby": "inspector-title", "data-testid": "inspector" },
    el("header", {}, title, close),
    body,
  );
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => {
    dialog.remove();
    opener?.focus();
  });
  document.body.append(dialog);
  dialog.showModal();
  close.focus();
  try {
    const calls = await api("GET", base);
    if (calls.length === 0) {
      body.replaceChildren("No model call of this turn was kept.");
      return;
    }
    const picker = el("select", { "aria-label": "Model call", "data-testid": "inspector-call" });
    for (const call of calls) {
      picker.append(el("option", { value: call.call }, `Call ${call.call} · ${call.purpose} · ${call.model}`));
    }
    const shown = el("div", { class: "inspector-call" });
    const show = async () => {
      shown.replaceChildren("Loading…");
      try {
        shown.replaceChildren(...drawCall(await api("GET", `${base}/${picker.value}`)));
      } catch (error) {
        shown.replaceChildren(`This call could not be read: ${error.message}`);
      }
    };
    picker.addEventListener("change", show);
    picker.value = calls.find((c) => c.purpose === "turn")?.call ?? calls[0].call;
    body.replaceChildren(el("label", {}, "Call ", picker), shown);
    await show();
  } catch (error) {
    body.replaceChildren(`The calls could not be read: ${error.message}`);
  }
}

function drawCall(call) {
  const parts = [];
  const inspection = call.inspection;
  if (inspection) {
    const sign = inspection.exact ? "" : "≈ ";
    const total = inspection.totalTokens;
    const window = call.contextWindow;
    parts.push(
      el(
        "p",
        { "data-testid": "inspector-total" },
        `${sign}${count(total)} input tokens`,
        window ? `, of a ${count(window)}-token context window` : "",
        inspection.exact ? " (counted with the model's tokenizer)" : " (estimated: core's estimate runs −17 % to +25 %)",
        inspection.effort ? ` · effort ${inspection.effort}` : "",
      ),
    );
    const bar = el("div", { class: "inspector-bar", role: "img", "aria-label": "The context window the layers fill" });
    const of = window || total || 1;
    for (const layer of inspection.layers) {
      bar.append(el("span", { class: `layer-${layer.number}`, style: `width:${(100 * layer.tokens) / of}%`, title: layer.label }));
    }
    parts.push(bar);
    const list = el("ol", { class: "inspector-layers", "data-testid": "inspector-layers" });
    // The layers shown are numbered one after the other; an empty layer is not listed.
    for (const [at, layer] of inspection.layers.entries()) {
      const summary = el("summary", {}, `${at + 1}. ${layer.label} · ${sign}${count(layer.tokens)} tokens`);
      const text =
        layer.text === null
          ? el("p", {}, "Its text is for the organisation's administrators only.")
          : el("pre", {}, layer.text);
      list.append(el("li", { "data-layer": layer.layer }, el("details", {}, summary, text)));
    }
    parts.push(list);
    const tools = inspection.tools.map((t) => `${t.name} (${sign}${count(t.tokens)})`).join(", ");
    parts.push(el("p", {}, `Framing ${sign}${count(inspection.framingTokens)} tokens; tools: ${tools || "none"}.`));
    if (inspection.summary) {
      const { first, last } = inspection.summary;
      parts.push(el("p", { "data-testid": "inspector-summary" }, `A summary stands for turns ${first}–${last}.`));
    }
    if (inspection.memoryCalls.length > 0) {
      const kept = el("ul", { "data-testid": "inspector-memory" });
      for (const c of inspection.memoryCalls) {
        kept.append(el("li", {}, `${c.name} (${c.callId}): ${c.kept}, ${c.why} (rule ${c.rules.join(", ")}).`));
      }
      parts.push(el("h3", {}, "What memory kept of earlier calls"), kept);
    }
    for (const p of inspection.pictures) {
      parts.push(el("p", {}, `Picture ${p.attachmentId}: sent at ${p.width}×${p.height}${p.reduced ? ", reduced" : ""}.`));
    }
  }
  if (call.diagnostics.length > 0) {
    const list = el("ul", { "data-testid": "inspector-diagnostics" });
    for (const d of call.diagnostics) list.append(el("li", {}, d.rule ? `${d.message} (rule ${d.rule})` : d.message));
    parts.push(el("h3", {}, "What the prompt builder worked around"), list);
  }
  if (call.note) parts.push(el("p", { class: "inspector-note" }, call.note));
  // A call with no body kept (the demo model sends none) has nothing to copy; the note says why.
  if (call.body !== null) {
    const copy = el("button", { type: "button", "data-testid": "inspector-copy" }, "Copy request body");
    copy.addEventListener("click", async () => {
      await navigator.clipboard.writeText(call.body);
      copy.textContent = "Copied";
    });
    parts.push(el("p", {}, copy));
  }
  return parts;
}
