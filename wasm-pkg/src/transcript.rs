//! `validateTranscript`: parse and check a transcript.

use wasm_bindgen::prelude::*;

use crate::convert;

#[wasm_bindgen(typescript_custom_section)]
const TRANSCRIPT_TYPES: &'static str = r#"
/** A conversation: turns of messages of blocks. See docs/transcript-format.md. */
export interface Transcript { version: 1; turns: Turn[]; }
export type TurnStatus = "running" | "paused" | "completed" | "cut_off" | "failed";
export type Effort = "low" | "medium" | "high";
export interface Turn {
  index: number;
  kind?: "chat" | "compact";
  status: TurnStatus;
  effort?: Effort;
  context_tokens?: number;
  trace?: TraceEntry[];
  messages: Message[];
}
export type TraceEntry =
  | { kind: "SKILL_SELECT"; skill_ids: string[] }
  | { kind: "COMPACTION_FAILED"; reason: string }
  | { kind: "TURN_FAILED"; reason: string }
  | { kind: "TURN_CUT_OFF"; reason: string }
  | { kind: "ANSWERS_AGAIN"; turn: number };
export interface Message { role: "user" | "assistant" | "tool"; blocks: Block[]; attachments?: Attachment[]; }
export type Block =
  | { type: "thinking"; text: string }
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | { type: "tool_result"; call_id: string; content: string; is_error?: boolean;
      pictures?: { attachment_id: string; media_type: string; width: number; height: number }[] }
  | { type: "clarification_request"; id: string; question: string }
  | { type: "approval_request"; call_id: string; summary: string }
  | { type: "compaction"; summary: string; trigger: "AUTO" | "MANUAL"; covers: { first: number; last: number }; kept_messages?: number };
export type Attachment =
  | { kind: "document"; id: string; filename: string; media_type: string; status: "reading" | "finished" | "failed";
      pages_read?: number; pages_total?: number; stopped_by?: "pages" | "time" | "memory"; unreadable_pages?: number[];
      headings?: string[]; text?: string }
  | { kind: "picture"; id: string; filename: string; media_type: string; width: number; height: number };
/**
 * Thrown by validateTranscript, and by rebuildMemory and buildPrompt for the transcript they are
 * given. `invariant` names the broken block invariant (terminal-text, calls-answered,
 * result-has-call, unique-call-ids, kind-in-role, no-empty-message); `location` says where
 * (1-based); `line` and `column` locate malformed JSON. A real subclass of `Error`:
 * `error instanceof TranscriptError` holds.
 */
export class TranscriptError extends Error {
  name: "TranscriptError";
  invariant?: string;
  location?: { turn: number; message?: number; block?: number };
  line?: number;
  column?: number;
}
"#;

/// Parses transcript JSON and checks the six block invariants.
///
/// Returns the transcript as a plain object, or throws a `TranscriptError` whose message says
/// where the transcript is wrong and what to do about it.
#[wasm_bindgen(js_name = validateTranscript, unchecked_return_type = "Transcript")]
pub fn validate_transcript(json: &str) -> Result<JsValue, JsValue> {
    let transcript =
        portal_core::parse_transcript(json).map_err(|e| convert::prompt::transcript_error(&e))?;
    convert::to_js(&transcript)
}
