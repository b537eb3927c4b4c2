//! `rebuildMemory`: short-term memory rebuilt from the transcript (rules M1–M13).

use wasm_bindgen::prelude::*;

use crate::convert;

#[wasm_bindgen(typescript_custom_section)]
const MEMORY_TYPES: &'static str = r#"
/** Overrides of the short-term memory bounds; a missing one keeps the product's default. */
export interface MemoryOptions {
  /** Past turns replayed after the newest summary (20, rule M2). */
  maxTurns?: number;
  /** Calls replayed per past turn, the most recent holding their place (8, rule M3). */
  maxCallsPerTurn?: number;
  /** The closest past turns whose tool output is replayed (3, rule M4). */
  outputTurns?: number;
  /** Each replayed result is cut to this many characters (300, rule M5). */
  resultChars?: number;
  /** Each string inside replayed call arguments is cut to this many characters (200, rule M6). */
  argumentChars?: number;
  attachments?: AttachmentOptions;
}
/** Overrides of the attachment numbers (rules A2, A3, A7, A8). */
export interface AttachmentOptions {
  /** A finished document of at most this many characters is placed in the message whole (6,000). */
  inlineDocumentChars?: number;
  /** The manifest lists this many section headings at most (20). */
  manifestHeadings?: number;
  /** Each listed heading is cut to this many characters (200). */
  headingChars?: number;
  /** Inline document text replayed from earlier turns shares this budget, newest first (24,000). */
  inlineReplayBudget?: number;
  /** Only this many of the most recent picture-bearing earlier messages resend pictures (3). */
  pictureResendMessages?: number;
}
/**
 * What the host knows about the newest compaction: `"search"` looks back through the whole
 * transcript (for small transcripts and tests); `"none"` says there is none before the replay
 * window; `{ newestInTurn }` names its turn (1-based) and keeps the cost bounded by the window.
 */
export type CompactionHint = "search" | "none" | { newestInTurn: number };
/** A model's capabilities, from the host's model registry. */
export interface ModelCapabilities {
  /** The provider's model id, sent as `model`. */
  id: string;
  /** The request shape the model is called with. */
  provider: "openai" | "anthropic";
  /** Input tokens the model reads at most. */
  contextWindow: number;
  /** Output tokens the model writes at most (Anthropic's `max_tokens`). */
  maxOutputTokens: number;
  /** Whether the model reasons at depth, so an effort level is sent (rule E3). */
  canReason: boolean;
  /** Whether the model looks at pictures (rule A5). */
  canSee: boolean;
  /** The largest picture it looks at; a larger one is reduced, aspect kept (rule A4). */
  largestPicture?: PictureLimit | null;
}
/** The largest picture a model looks at. */
export interface PictureLimit {
  /** The longer side, in pixels. */
  longEdge: number;
  /** Width times height, in pixels, when the provider also bounds the area. */
  pixels?: number | null;
}
/** `rebuildMemory`'s options: memory overrides, the model, and the compaction hint. */
export interface RebuildMemoryOptions extends MemoryOptions {
  /** The model memory is rebuilt for; without one, pictures replay at their stored size. */
  model?: ModelCapabilities;
  /** Defaults to `"search"`. */
  compactionHint?: CompactionHint;
}
/** A tool's picture at the size it is sent at; the host supplies its bytes (see `buildPrompt`). */
export interface SentPicture { attachmentId: string; mediaType: string; width: number; height: number; reduced: boolean }
/** One piece of a prompt entry. */
export type PromptPart =
  | { type: "text"; text: string }
  /** A picture at the size it is sent at; the host supplies its bytes (see `buildPrompt`). */
  | { type: "picture"; attachmentId: string; mediaType: string; width: number; height: number; reduced: boolean }
  | { type: "call"; id: string; name: string; arguments: unknown }
  /** An answer, with the pictures the tool answered with that the model is shown, if any. */
  | { type: "answer"; callId: string; content: string; isError: boolean; pictures?: SentPicture[] };
/**
 * One entry of the message list. A `tool` entry carries only answers (with their pictures) and
 * follows the assistant entry whose calls it answers, each exactly once, in call order (rules
 * M8, M9).
 */
export interface PromptEntry {
  role: "user" | "assistant" | "tool";
  /** Layer 6 (earlier turns) or layer 7 (the new message and the turn in progress). */
  layer: "memory" | "newMessage";
  parts: PromptPart[];
}
/** The compaction whose summary memory replays first (rule C3). */
export interface ReplayedSummary { turn: number; covers: { first: number; last: number } }
/** Something odd memory worked around; none of these stop the rebuild. */
export type MemoryDiagnostic =
  /** No hint was given and the newest compaction lay beyond the window. */
  | { kind: "searchedBeyondWindow" }
  /** The hint named a turn that holds no compaction. */
  | { kind: "hintMissed"; turn: number }
  /** A compaction keeps more messages than come before it. */
  | { kind: "keptTailShort"; keptMessages: number; missing: number }
  /** Tool results without their calls before them (1-based turn and message); left out. */
  | { kind: "orphanResults"; turn: number; message: number }
  /** A picture in the turn in progress for a model that cannot see; replaced by words. */
  | { kind: "pictureForBlindModel"; attachmentId: string };
/** Short-term memory: layers 6 and 7 as entries, and what the rebuild replayed. */
export interface ShortTermMemory {
  entries: PromptEntry[];
  summary: ReplayedSummary | null;
  /** The past turns replayed, oldest first (1-based). */
  turns: number[];
  /** Whether a replayed message carries a document (so the document tools are offered). */
  hasDocuments: boolean;
  diagnostics: MemoryDiagnostic[];
}
/**
 * Thrown for an argument that is not what the function takes; `field` names it
 * (`"options.maxTurns"`, `"request.model"`, …) and the message says what was expected. A real
 * subclass of `Error`: `error instanceof InputError` holds.
 */
export class InputError extends Error { name: "InputError"; field: string; }
"#;

/// Rebuilds short-term memory from the transcript, as on every model call: the newest summary,
/// then at most `maxTurns` past turns with their calls bounded and cut, then the turn in progress
/// (a last turn that is running or paused) whole. Every replayed call is answered; one that never
/// returned gets an answer saying so.
///
/// `transcript` is an object (as `validateTranscript` returns) or its JSON text; one that breaks
/// an invariant throws a `TranscriptError`. Unknown options or values of the wrong type throw an
/// `InputError` naming the option.
#[wasm_bindgen(js_name = rebuildMemory, unchecked_return_type = "ShortTermMemory")]
pub fn rebuild_memory(
    #[wasm_bindgen(unchecked_param_type = "Transcript | string")] transcript: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "RebuildMemoryOptions")] options: Option<
        JsValue,
    >,
) -> Result<JsValue, JsValue> {
    let transcript = convert::prompt::transcript(&transcript)?;
    let options = convert::prompt::rebuild_options(options.as_ref())?;
    let memory = portal_core::memory::rebuild(
        &transcript,
        options.compaction_hint,
        &options.model,
        &options.memory,
    );
    convert::to_js(&memory)
}
