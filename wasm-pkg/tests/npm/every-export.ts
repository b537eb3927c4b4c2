// Every export of the package, used as a TypeScript app would use it; `tsc --noEmit --strict`
// checks it (types.test.mjs), and that test fails if an export of any entry is missing here.
import {
  AttachmentError,
  InputError,
  Playout,
  PlayoutOptionsError,
  ReplyView,
  StreamingMarkdown,
  TranscriptError,
  buildPrompt,
  parseCommand,
  rebuildMemory,
  renderMarkdown,
  validateTranscript,
} from "portal-wasm";
import type {
  AnthropicBlock,
  AnthropicRequest,
  Attachment,
  AttachmentOptions,
  Block,
  BuiltPrompt,
  CatalogueEntry,
  CompactionHint,
  DiagramOptions,
  Effort,
  EncodedPicture,
  MarkdownAlignment,
  MarkdownBlock,
  MarkdownInline,
  MarkdownListItem,
  MarkdownText,
  MarkdownUpdate,
  MemoryDiagnostic,
  MemoryOptions,
  Message,
  ModelCapabilities,
  NeutralPrompt,
  NewMessage,
  OpenAiMessage,
  OpenAiRequest,
  ParsedCommand,
  PictureLimit,
  PlayoutFrame,
  PlayoutOptions,
  PromptDiagnostic,
  PromptEntry,
  PromptFormat,
  PromptPart,
  PromptRequest,
  RebuildMemoryOptions,
  ReplayedSummary,
  ReplyViewOptions,
  SentPicture,
  ShortTermMemory,
  Skill,
  SourceRange,
  SystemLayer,
  ThinkingBudgets,
  ToolDefinition,
  TraceEntry,
  Transcript,
  Turn,
  TurnStatus,
} from "portal-wasm";
import init, { initSync, type InitInput, type InitOutput, type SyncInitInput } from "portal-wasm/web";
import * as playoutOnly from "portal-wasm/playout";
import initPlayout, * as playoutWeb from "portal-wasm/playout/web";
import wasmUrl from "portal-wasm/portal_wasm_bg.wasm";
import { definePortalReply, type PortalReplyElement, type ReplyViewClass } from "portal-wasm/element";
import * as web from "portal-wasm/web";
import {
  createPortalReply,
  type PortalReplyHandle,
  type PortalReplyProps,
  type ReplyViewClass as ReactReplyViewClass,
} from "portal-wasm/react";
import { highlightCode } from "portal-wasm/highlight";
import { createElement, createRef } from "react";
import "portal-wasm/reply.css";
import playoutWasmUrl from "portal-wasm/playout/portal_wasm_bg.wasm";

// Loading: explicit init for the browser without a bundler, or bytes already at hand.
const input: InitInput = new URL(wasmUrl, import.meta.url);
const loaded: Promise<InitOutput> = init({ module_or_path: input });
export function fromBytes(bytes: SyncInitInput): InitOutput {
  return initSync({ module: bytes });
}
export const playoutLoaded: Promise<playoutWeb.InitOutput> = initPlayout({ module_or_path: playoutWasmUrl });
export const playoutSync = (bytes: playoutWeb.SyncInitInput) => playoutWeb.initSync({ module: bytes });

// Playout, from either build.
const options: PlayoutOptions = { lagMs: 600, minCps: 40, easeMs: 300 };
for (const PlayoutClass of [Playout, playoutOnly.Playout, playoutWeb.Playout]) {
  const playout = new PlayoutClass(options);
  playout.push("Hello 👋", 0);
  playout.pushBytes(new TextEncoder().encode(" world"), 10);
  playout.finish(20);
  const frame: PlayoutFrame = playout.tick(700);
  const words: string[] = frame.words;
  const wake: number | null = playout.nextWakeMs();
  const text: string = playout.visibleText() + words.join("") + String(wake ?? frame.visibleLength);
  playout.free();
  void text;
}
try {
  new playoutOnly.Playout({ lagMs: -1 });
} catch (error) {
  if (error instanceof playoutOnly.PlayoutOptionsError) console.log(error.option);
  if (error instanceof playoutWeb.PlayoutOptionsError) console.log(error.option);
}

// Transcripts.
const turnStatus: TurnStatus = "completed";
const block: Block = { type: "text", text: "Hi!" };
const attachment: Attachment = {
  kind: "picture", id: "p1", filename: "chart.png", media_type: "image/png", width: 800, height: 600,
};
const trace: TraceEntry = { kind: "SKILL_SELECT", skill_ids: ["fact-check"] };
const message: Message = { role: "assistant", blocks: [block] };
const turn: Turn = {
  index: 1, status: turnStatus, trace: [trace],
  messages: [{ role: "user", blocks: [{ type: "text", text: "Hello" }], attachments: [attachment] }, message],
};
let transcript: Transcript = { version: 1, turns: [turn] };
try {
  transcript = validateTranscript(JSON.stringify(transcript));
} catch (error) {
  if (error instanceof TranscriptError) console.log(error.invariant, error.location?.turn, error.line);
}

// Commands and memory.
const command: ParsedCommand = parseCommand("/fact-check Is churn 4 %?");
const skills: string[] = command.kind === "message" ? command.skills : [];
const picture: PictureLimit = { longEdge: 1568, pixels: 1_150_000 };
const model: ModelCapabilities = {
  id: "gpt-4.1", provider: "openai", contextWindow: 1_000_000, maxOutputTokens: 32_768,
  canReason: false, canSee: true, largestPicture: picture,
};
const attachmentOptions: AttachmentOptions = { inlineDocumentChars: 6000 };
const memoryOptions: MemoryOptions = { maxTurns: 20, attachments: attachmentOptions };
const hint: CompactionHint = { newestInTurn: 1 };
const rebuildOptions: RebuildMemoryOptions = { ...memoryOptions, model, compactionHint: hint };
const memory: ShortTermMemory = rebuildMemory(transcript, rebuildOptions);
const summary: ReplayedSummary | null = memory.summary;
const memoryDiagnostics: MemoryDiagnostic[] = memory.diagnostics;
for (const entry of memory.entries satisfies PromptEntry[]) {
  for (const part of entry.parts satisfies PromptPart[]) {
    if (part.type === "picture") console.log(part.attachmentId, part.width, part.reduced);
    if (part.type === "answer") {
      const shown: SentPicture[] = part.pictures ?? [];
      for (const picture of shown) console.log(picture.attachmentId, picture.mediaType, picture.height);
    }
  }
}

// Prompts.
const effort: Effort = "high";
const skill: Skill = {
  id: "sk-1", organisation: "acme", name: "fact-check", description: "Use when a claim needs checking.",
  instructions: "Find two sources.", visible: true, active: true,
};
const catalogueEntry: CatalogueEntry = { name: "summarise", description: "Use for long documents." };
const tool: ToolDefinition = { name: "lookup", description: "Looks up.", parameters: { type: "object" } };
const newMessage: NewMessage = { text: "/fact-check Look at this." };
const thinkingBudgets: ThinkingBudgets = { low: 1024 };
const encoded: EncodedPicture = { mediaType: "image/jpeg", base64: "QUJD" };
const format: PromptFormat = "neutral";
const request: PromptRequest = {
  transcript, newMessage, model, format, instructions: "You are Acme's analyst.",
  selectedSkills: [skill], catalogue: [catalogueEntry], agentTools: [tool], effort,
  memory: memoryOptions, thinkingBudgets, pictures: { p1: encoded },
};
try {
  const built: BuiltPrompt = buildPrompt(request);
  const diagnostics: PromptDiagnostic[] = built.diagnostics;
  if (built.format === "neutral") {
    const neutral: NeutralPrompt = built.body;
    const layers: SystemLayer[] = neutral.layers;
    console.log(layers.length, diagnostics.length);
  } else if (built.format === "openai") {
    const body: OpenAiRequest = built.body;
    const first: OpenAiMessage | undefined = body.messages[0];
    console.log(first?.role);
  } else {
    const body: AnthropicRequest = built.body;
    const blocks: AnthropicBlock[] = body.messages.flatMap((m) => m.content);
    console.log(blocks.length);
  }
} catch (error) {
  if (error instanceof InputError) console.log(error.field);
  else if (error instanceof AttachmentError) console.log(error.model, error.filename);
  else if (error instanceof TranscriptError) console.log(error.invariant);
  else if (error instanceof Error) throw error;
}

// Markdown: a reply drawn as it plays out, then settled; every kind narrowed on `kind`.
function inlineText(inlines: MarkdownInline[]): string {
  return inlines.map((inline): string => {
    switch (inline.kind) {
      case "text":
      case "code":
        return inline.text;
      case "math":
        return inline.display ? `$$${inline.text}$$` : inline.text;
      case "emphasis":
      case "strong":
      case "strikethrough":
        return inlineText(inline.content);
      case "link":
        return inline.href !== null && !inline.pending && !inline.image
          ? `${inlineText(inline.content)} <${inline.href}>`
          : inlineText(inline.content);
      case "softBreak":
        return " ";
      case "hardBreak":
        return "\n";
    }
  }).join("");
}
function blockText(block: MarkdownBlock): string {
  switch (block.kind) {
    case "paragraph":
      return inlineText(block.content);
    case "heading":
      return "#".repeat(block.level) + " " + inlineText(block.content);
    case "quote":
      return block.blocks.map(blockText).join("\n");
    case "list":
      return block.items.map((item: MarkdownListItem, i) =>
        `${block.start === null ? "-" : block.start + i}${item.task === null ? "" : item.task ? " [x]" : " [ ]"} `
        + item.blocks.map(blockText).join(block.tight ? "\n" : "\n\n")).join("\n");
    case "code":
    case "html": {
      const texts: MarkdownText[] = block.content;
      return (block.kind === "code" ? block.language ?? "" : "") + texts.map((t) => t.text).join("");
    }
    case "table": {
      const alignments: MarkdownAlignment[] = block.alignments;
      return [block.head, ...block.rows].map((row) => row.map(inlineText).join(" | ")).join("\n")
        + alignments.join(",");
    }
    case "rule":
      return "---";
  }
}
const reply = "# Plan\n\n**Bold** 👋🏽 [docs](https://example.com)";
const streaming = new StreamingMarkdown();
const drawn: string[] = [];
for (const piece of ["# Plan\n\n**Bo", "ld** 👋🏽 [docs](https://exa", "mple.com)"]) {
  const update: MarkdownUpdate = streaming.push(piece);
  for (const index of update.redrawn) {
    const again: MarkdownBlock | undefined = streaming.block(index);
    if (again) drawn[index] = blockText(again);
  }
  drawn.length = update.unchanged;
  drawn.push(...streaming.blocks(update.unchanged).map(blockText));
}
const settled: MarkdownUpdate = streaming.finish();
const first = streaming.blocks()[0];
const title: SourceRange | null =
  first?.kind === "heading" && first.content[0]?.kind === "text" ? first.content[0].source : null;
console.log(settled.settled, drawn, title && reply.slice(title.start, title.end));
streaming.free();
console.log(renderMarkdown(reply).map(blockText).join("\n\n"));

// A reply drawn into an element as it streams, and a reloaded one; the element around it. Its
// code coloured once settled, and its mermaid and dot blocks drawn by the page.
const diagramOptions: DiagramOptions = {
  languages: ["mermaid", "dot"],
  async draw(element: HTMLElement, source: string, language: string) {
    element.textContent = `${language}: ${source}`;
  },
};
const viewOptions: ReplyViewOptions = { reducedMotion: true, highlightCode, diagrams: diagramOptions };
highlightCode(document.body);
const view = new ReplyView(document.createElement("div"), viewOptions);
view.push("**Bold** 👋");
view.push("🏽 and more");
view.finish();
const whole: Promise<string> = view.settled;
const drawnLength: number = view.drawnLength;
whole.then((text) => console.log(text.length, drawnLength));
ReplyView.drawReply(document.createElement("div"), reply, { highlightCode: null, diagrams: null });
const viewClass: ReplyViewClass = ReplyView;
const PortalReply = definePortalReply(web.ReplyView, "portal-reply");
definePortalReply(viewClass, "other-reply");
const element: PortalReplyElement = new PortalReply();
const tagged: PortalReplyElement = document.createElement("portal-reply");
tagged.highlightCode = highlightCode;
tagged.diagrams = { draw: (container, source) => container.append(source) };
element.push("Hello");
element.finish();
tagged.drawReply("# Reloaded");
tagged.reset();
tagged.cancel();
element.settled.then((text: string) => console.log(text, element.drawnLength, element.view instanceof web.ReplyView));

// The React component, fed the whole text so far, or pushed through its ref.
const reactClass: ReactReplyViewClass = ReplyView;
const ReactReply = createPortalReply(reactClass);
createPortalReply(web.ReplyView);
const props: PortalReplyProps = {
  text: "# Hello 👋🏽", streaming: false, reducedMotion: true, className: "chat", highlightCode,
  diagrams: diagramOptions,
  onSettled: (text: string) => console.log(text.length),
};
const handle = createRef<PortalReplyHandle>();
const replyElement = createElement(ReactReply, { ...props, ref: handle });
handle.current?.push("more");
handle.current?.finish();
handle.current?.cancel();
console.log(replyElement, handle.current?.drawnLength);

export { loaded, skills, summary, memoryDiagnostics };
