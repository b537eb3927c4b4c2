//! `buildPrompt`: the seven layers for one model call, as a provider request body (rules L1–L3).

use portal_core::effort::Effort;
use portal_core::new_turn::{NewTurnError, open_turn};
use portal_core::prompt::{self, DEFAULT_FLOOR, PromptConfig, PromptInput, anthropic, openai};
use wasm_bindgen::prelude::*;

use crate::convert::prompt::Format;
use crate::convert::{self, input_error};

#[wasm_bindgen(typescript_custom_section)]
const PROMPT_TYPES: &'static str = r#"
/** What `buildPrompt` returns the prompt as. */
export type PromptFormat = "openai" | "anthropic" | "neutral";
/** A skill the message selected, resolved and checked by the host (rules S2, S3). */
export interface Skill {
  id: string;
  organisation: string;
  /** The skill's name, which is its slug. */
  name: string;
  /** One sentence on when the skill applies. */
  description: string;
  /** The markdown body of its SKILL.md, folded whole into layer 4. */
  instructions: string;
  visible: boolean;
  active: boolean;
}
/** A catalogue line: a skill the model may load by name, and when it applies (rule S5). */
export interface CatalogueEntry { name: string; description: string; }
/** A tool the model may call: its name, what it does and the JSON schema of its arguments. */
export interface ToolDefinition { name: string; description: string; parameters: unknown; }
/** The message being sent, when the transcript does not hold it yet. */
export interface NewMessage {
  /** The message as typed, `/slug` tokens included, as the transcript records it. */
  text: string;
  /** Its attachments, in the transcript format. */
  attachments?: Attachment[];
  /**
   * The turn whose message this one answers again (Regenerate, or the latest message edited):
   * the latest turn, a chat turn. A front end shows the two as versions of one turn.
   */
  again?: number;
}
/** Everything one model call's prompt is built from. Only `transcript` and `model` are required. */
export interface PromptRequest {
  /**
   * The conversation (an object, or its JSON text). Its last turn, when running or paused, is
   * the turn in progress and its first message the message being answered.
   */
  transcript: Transcript | string;
  /**
   * The message being sent, appended as a new running turn (recording `effort`). Leave it out
   * when the transcript's last turn already holds it; giving both throws an `InputError`. A
   * picture for a model that cannot see throws an `AttachmentError` (rule A5).
   */
  newMessage?: NewMessage;
  model: ModelCapabilities;
  /** Defaults to the model's provider. */
  format?: PromptFormat;
  /** Layer 1, the portal floor; defaults to the portal's own text. */
  floor?: string;
  /** Layer 2, the agent author's instructions. */
  instructions?: string;
  /** Layer 3, the instructions of the project the conversation is in. */
  projectInstructions?: string;
  /** Layer 4, folded in whole. */
  selectedSkills?: Skill[];
  /** Layer 5, selected skills already left out (rule S6). */
  catalogue?: CatalogueEntry[];
  /** The agent's own tools; the portal adds its own that the prompt refers to. */
  agentTools?: ToolDefinition[];
  /**
   * The effort for this call: defaults to the one recorded on the turn in progress, else
   * `"medium"`. Not sent to a model that cannot reason (rule E3).
   */
  effort?: Effort;
  /** Defaults to `"search"`. */
  compactionHint?: CompactionHint;
  memory?: MemoryOptions;
  thinkingBudgets?: ThinkingBudgets;
  /**
   * Picture bytes by attachment id, already reduced to the size the prompt names (build with
   * `format: "neutral"` first to read the sizes from its picture parts). A picture without
   * bytes becomes a line saying it could not be loaded, so the request stays valid.
   */
  pictures?: Record<string, EncodedPicture>;
}
/** Anthropic thinking budget tokens per effort level; a missing one keeps the default. */
export interface ThinkingBudgets {
  /** 2,048 by default; Anthropic's minimum is 1,024. */
  low?: number;
  /** 8,192 by default. */
  medium?: number;
  /** 24,576 by default. */
  high?: number;
}
/** A picture's bytes, encoded for a request body. */
export interface EncodedPicture {
  /** The media type of the encoded bytes (the host may re-encode when it reduces). */
  mediaType: string;
  /** The bytes in standard base64. */
  base64: string;
}
/** A layer of the system text. */
export interface SystemLayer {
  layer: "floor" | "instructions" | "project" | "skills" | "catalogue";
  /** Its place in the reading order, 1–5. */
  number: number;
  /** Its label, as the system text names it. */
  label: string;
  text: string;
}
/** The provider-neutral prompt. */
export interface NeutralPrompt {
  /** Layers 1–5, delimited and labelled under the precedence sentence (rule L2). */
  system: string;
  /** Layers 1–5 that have content, in order. */
  layers: SystemLayer[];
  /** Layers 6 and 7. */
  entries: PromptEntry[];
  /** The agent's tools, then the portal's own that the prompt refers to. */
  tools: ToolDefinition[];
  /** `null` for a model that cannot reason. */
  effort: Effort | null;
}
/** An OpenAI Chat Completions request body. A failed call's answer opens with "Error: ". */
export interface OpenAiRequest {
  model: string;
  messages: OpenAiMessage[];
  tools?: { type: "function"; function: { name: string; description: string; parameters: unknown } }[];
  reasoning_effort?: Effort;
}
export type OpenAiMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | ({ type: "text"; text: string } | { type: "image_url"; image_url: { url: string } })[] }
  | { role: "assistant"; content: string | null;
      tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[] }
  | { role: "tool"; tool_call_id: string; content: string };
/** An Anthropic Messages request body: roles alternate, opening on the user. */
export interface AnthropicRequest {
  model: string;
  max_tokens: number;
  system: string;
  messages: { role: "user" | "assistant"; content: AnthropicBlock[] }[];
  tools?: { name: string; description: string; input_schema: unknown }[];
  thinking?: { type: "enabled"; budget_tokens: number };
}
export type AnthropicBlock =
  | { type: "text"; text: string }
  | { type: "image"; source: { type: "base64"; media_type: string; data: string } }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | { type: "tool_result"; tool_use_id: string; content: string; is_error?: true };
/** Something odd assembling worked around. */
export type PromptDiagnostic =
  | MemoryDiagnostic
  /** An agent tool has the name of one of the portal's own tools; the portal's is kept. */
  | { kind: "toolNameTaken"; name: string };
interface BuiltPromptBase {
  /** The prompt as plain text for people: a "show prompt" view or a log. */
  text: string;
  /** The past turns memory replayed, oldest first (1-based). */
  turns: number[];
  summary: ReplayedSummary | null;
  diagnostics: PromptDiagnostic[];
}
/** A built prompt; `format` tells which body it carries. */
export type BuiltPrompt =
  | (BuiltPromptBase & { format: "openai"; body: OpenAiRequest })
  | (BuiltPromptBase & { format: "anthropic"; body: AnthropicRequest })
  | (BuiltPromptBase & { format: "neutral"; body: NeutralPrompt });
/**
 * Thrown by `buildPrompt` for a picture sent to a model that cannot see (rule A5). A real
 * subclass of `Error`: `error instanceof AttachmentError` holds.
 */
export class AttachmentError extends Error { name: "AttachmentError"; model: string; filename: string; }
"#;

/// Builds the prompt for one model call: the portal floor, author instructions, selected skills
/// and skill catalogue as the system text, then short-term memory rebuilt from the transcript,
/// then the new message with its attachments and the turn's work so far (rule L1), as an OpenAI
/// or Anthropic request body or provider-neutral.
///
/// Throws an `InputError` naming the field for a malformed request, a `TranscriptError` for a
/// transcript that breaks an invariant, and an `AttachmentError` for a new message whose picture
/// the model cannot see. Messy but valid histories never throw: what memory worked around is in
/// `diagnostics`.
#[wasm_bindgen(js_name = buildPrompt, unchecked_return_type = "BuiltPrompt")]
pub fn build_prompt(
    #[wasm_bindgen(unchecked_param_type = "PromptRequest")] request: JsValue,
) -> Result<JsValue, JsValue> {
    let request = convert::prompt::prompt_request(&request)?;
    let mut transcript = convert::prompt::transcript_of_json(request.transcript)?;
    let model = request.model;
    let format = request.format.unwrap_or(model.provider.into());
    let open = transcript.turns.last().filter(|t| t.status.is_open());
    let effort = request
        .effort
        .or_else(|| open.and_then(|t| t.effort))
        .unwrap_or(Effort::Medium);
    if let Some(message) = request.new_message {
        open_turn(&mut transcript, message, effort, &model).map_err(|e| match e {
            NewTurnError::TurnInProgress { .. } => input_error(
                "request.newMessage",
                &format!("{e}; leave newMessage out to build the prompt for that turn"),
            ),
            NewTurnError::Attachment(e) => convert::prompt::attachment_error(&e),
            NewTurnError::Compact(e) => input_error("request.newMessage", &e.to_string()),
            NewTurnError::NotLatest { .. } => {
                input_error("request.newMessage.again", &e.to_string())
            }
            NewTurnError::Invalid(e) => convert::prompt::transcript_error(&e),
        })?;
    }
    let config = PromptConfig {
        floor: request.floor.unwrap_or_else(|| DEFAULT_FLOOR.to_string()),
        memory: request.memory.unwrap_or_default(),
        effort: request.thinking_budgets.unwrap_or_default(),
    };
    let pictures = request.pictures.unwrap_or_default();
    let assembled = prompt::assemble(
        &PromptInput {
            transcript: &transcript,
            compaction_hint: request.compaction_hint.unwrap_or_default(),
            model: &model,
            instructions: request.instructions.as_deref().unwrap_or_default(),
            project_instructions: request.project_instructions.as_deref().unwrap_or_default(),
            selected_skills: request.selected_skills.as_deref().unwrap_or_default(),
            catalogue: request.catalogue.as_deref().unwrap_or_default(),
            agent_tools: request.agent_tools.as_deref().unwrap_or_default(),
            effort,
        },
        &config,
    );
    let body = match format {
        Format::Openai => Some(openai::request(&assembled.prompt, &model, &pictures)),
        Format::Anthropic => Some(anthropic::request(
            &assembled.prompt,
            &model,
            &config.effort,
            &pictures,
        )),
        Format::Neutral => None,
    };
    convert::prompt::built_prompt(format, &assembled, body.as_ref())
}
