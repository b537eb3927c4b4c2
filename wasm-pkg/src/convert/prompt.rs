//! Conversions for `buildPrompt`, `rebuildMemory` and `parseCommand`: the request and options
//! objects in, the prompt, memory and command objects out. Names are camelCase on the JavaScript
//! side except inside the transcript, its attachments and provider request bodies, which keep
//! their own formats.

use std::collections::HashMap;

use portal_core::attachment::{AttachmentConfig, AttachmentError, PictureRef};
use portal_core::effort::{Effort, EffortConfig};
use portal_core::memory::{self, CompactionHint, Memory, MemoryConfig, ReplayedSummary};
use portal_core::model::{ModelCapabilities, PictureLimit, Provider};
use portal_core::new_turn::NewMessage;
use portal_core::prompt::{self, Assembled, EncodedPicture, Entry, Layer, Part, PictureSource};
use portal_core::skills::{CatalogueEntry, Composed, Skill};
use portal_core::tools::ToolDefinition;
use portal_core::{Transcript, validate};
use serde::{Deserialize, Serialize};
use wasm_bindgen::{JsCast, JsValue};

use super::{from_js, input_error, js_error, to_js, transcript_error};

/// A `buildPrompt` request, converted.
#[derive(Debug)]
pub struct PromptRequest {
    pub transcript: Transcript,
    pub new_message: Option<NewMessage>,
    pub model: ModelCapabilities,
    pub format: Format,
    pub floor: Option<String>,
    pub instructions: String,
    pub selected_skills: Vec<Skill>,
    pub catalogue: Vec<CatalogueEntry>,
    pub agent_tools: Vec<ToolDefinition>,
    pub effort: Option<Effort>,
    pub compaction_hint: CompactionHint,
    pub memory: MemoryConfig,
    pub thinking_budgets: EffortConfig,
    pub pictures: Pictures,
}

/// What `buildPrompt` returns the prompt as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Openai,
    Anthropic,
    Neutral,
}

/// The request's fields, for the check that it has no others.
const REQUEST_FIELDS: [&str; 14] = [
    "transcript",
    "newMessage",
    "model",
    "format",
    "floor",
    "instructions",
    "selectedSkills",
    "catalogue",
    "agentTools",
    "effort",
    "compactionHint",
    "memory",
    "thinkingBudgets",
    "pictures",
];

/// The `PromptRequest` object, or an `InputError` naming the field that is wrong (a
/// `TranscriptError` for the transcript).
pub fn prompt_request(request: &JsValue) -> Result<PromptRequest, JsValue> {
    check_fields(request, "request", &REQUEST_FIELDS)?;
    let get = |key: &str| js_sys::Reflect::get(request, &key.into()).unwrap_or(JsValue::UNDEFINED);
    fn optional<T: serde::de::DeserializeOwned>(
        value: JsValue,
        field: &str,
    ) -> Result<Option<T>, JsValue> {
        if value.is_undefined() {
            return Ok(None);
        }
        from_js(&value, field)
    }
    let model_value = get("model");
    if model_value.is_undefined() {
        return Err(input_error(
            "request.model",
            "missing; give the model's capabilities, such as { id, provider, contextWindow, \
             maxOutputTokens, canReason, canSee }",
        ));
    }
    let model = model(&model_value, "request.model")?;
    let format = optional(get("format"), "request.format")?.unwrap_or(match model.provider {
        Provider::OpenAi => Format::Openai,
        Provider::Anthropic => Format::Anthropic,
    });
    let memory = optional::<MemoryOptions>(get("memory"), "request.memory")?.unwrap_or_default();
    let budgets = optional::<ThinkingBudgets>(get("thinkingBudgets"), "request.thinkingBudgets")?
        .unwrap_or_default();
    let pictures: HashMap<String, PictureBytes> =
        optional(get("pictures"), "request.pictures")?.unwrap_or_default();
    let transcript_value = get("transcript");
    if transcript_value.is_undefined() {
        return Err(input_error(
            "request.transcript",
            "missing; give the conversation so far (an object or its JSON text), \
             { version: 1, turns: [] } for a new one",
        ));
    }
    Ok(PromptRequest {
        transcript: transcript(&transcript_value)?,
        new_message: optional(get("newMessage"), "request.newMessage")?,
        model,
        format,
        floor: optional(get("floor"), "request.floor")?,
        instructions: optional(get("instructions"), "request.instructions")?.unwrap_or_default(),
        selected_skills: optional(get("selectedSkills"), "request.selectedSkills")?
            .unwrap_or_default(),
        catalogue: optional(get("catalogue"), "request.catalogue")?.unwrap_or_default(),
        agent_tools: optional(get("agentTools"), "request.agentTools")?.unwrap_or_default(),
        effort: optional(get("effort"), "request.effort")?,
        compaction_hint: optional::<Hint>(get("compactionHint"), "request.compactionHint")?
            .map_or(CompactionHint::Search, Hint::into_core),
        memory: memory.into_core(),
        thinking_budgets: budgets.into_core(),
        pictures: Pictures(
            pictures
                .into_iter()
                .map(|(id, p)| {
                    let encoded = EncodedPicture {
                        media_type: p.media_type,
                        base64: p.base64,
                    };
                    (id, encoded)
                })
                .collect(),
        ),
    })
}

/// `rebuildMemory`'s options, converted.
#[derive(Debug)]
pub struct RebuildOptions {
    pub model: ModelCapabilities,
    pub compaction_hint: CompactionHint,
    pub memory: MemoryConfig,
}

/// The `RebuildMemoryOptions` object: memory overrides, and the model and compaction hint.
/// Without a model, pictures replay at their stored size, as for a model that sees any size.
pub fn rebuild_options(options: Option<&JsValue>) -> Result<RebuildOptions, JsValue> {
    let mut rebuild = RebuildOptions {
        model: ModelCapabilities {
            id: String::new(),
            provider: Provider::OpenAi,
            context_window: 0,
            max_output_tokens: 0,
            can_reason: false,
            can_see: true,
            largest_picture: None,
        },
        compaction_hint: CompactionHint::Search,
        memory: MemoryConfig::default(),
    };
    let Some(options) = options.filter(|o| !o.is_undefined() && !o.is_null()) else {
        return Ok(rebuild);
    };
    let mut fields: serde_json::Map<String, serde_json::Value> = from_js(options, "options")?;
    if let Some(model_value) = fields.remove("model").filter(|v| !v.is_null()) {
        let model: ModelJs = serde_json::from_value(model_value)
            .map_err(|e| input_error("options.model", &e.to_string()))?;
        rebuild.model = model.into_core();
    }
    if let Some(hint) = fields.remove("compactionHint").filter(|v| !v.is_null()) {
        let hint: Hint = serde_json::from_value(hint)
            .map_err(|e| input_error("options.compactionHint", &e.to_string()))?;
        rebuild.compaction_hint = hint.into_core();
    }
    let memory: MemoryOptions = serde_json::from_value(serde_json::Value::Object(fields))
        .map_err(|e| input_error("options", &e.to_string()))?;
    rebuild.memory = memory.into_core();
    Ok(rebuild)
}

/// A transcript given as an object (such as `validateTranscript` returns) or as JSON text,
/// checked against the six block invariants; a `TranscriptError` otherwise.
pub fn transcript(value: &JsValue) -> Result<Transcript, JsValue> {
    if let Some(json) = value.as_string() {
        return portal_core::parse_transcript(&json).map_err(|e| transcript_error(&e));
    }
    let transcript: Transcript = serde_wasm_bindgen::from_value(value.clone()).map_err(|e| {
        js_error(
            "TranscriptError",
            &format!(
                "the transcript is not in the transcript format ({e}); see \
                 docs/transcript-format.md, or check it with validateTranscript"
            ),
        )
    })?;
    validate(&transcript).map_err(|e| transcript_error(&e))?;
    Ok(transcript)
}

/// A message refused for its attachments (rule A5), as an `AttachmentError` naming the model and
/// the picture.
pub fn attachment_error(error: &AttachmentError) -> JsValue {
    let js = js_error("AttachmentError", &error.to_string());
    let AttachmentError::PictureNeedsVision { model, filename } = error;
    let _ = js_sys::Reflect::set(&js, &"model".into(), &model.into());
    let _ = js_sys::Reflect::set(&js, &"filename".into(), &filename.into());
    js
}

/// The assembled prompt as a `BuiltPrompt`: the body in `format`, the plain-text view, and what
/// memory replayed and worked around.
pub fn built_prompt(
    format: Format,
    assembled: &Assembled,
    body: Option<&serde_json::Value>,
) -> Result<JsValue, JsValue> {
    #[derive(Serialize)]
    #[serde(untagged)]
    enum Body<'a> {
        Provider(&'a serde_json::Value),
        Neutral(NeutralPrompt<'a>),
    }
    #[derive(Serialize)]
    struct NeutralPrompt<'a> {
        system: String,
        layers: Vec<SystemLayer<'a>>,
        entries: Vec<EntryOut<'a>>,
        tools: &'a [ToolDefinition],
        effort: Option<Effort>,
    }
    #[derive(Serialize)]
    struct SystemLayer<'a> {
        layer: &'static str,
        number: u8,
        label: &'static str,
        text: &'a str,
    }
    #[derive(Serialize)]
    struct BuiltPrompt<'a> {
        format: &'static str,
        body: Body<'a>,
        text: String,
        turns: &'a [u32],
        summary: Option<SummaryOut>,
        diagnostics: Vec<DiagnosticOut<'a>>,
    }
    let prompt = &assembled.prompt;
    let body = match body {
        Some(body) => Body::Provider(body),
        None => Body::Neutral(NeutralPrompt {
            system: prompt.system_text(),
            layers: prompt
                .layers
                .iter()
                .map(|l| SystemLayer {
                    layer: layer_name(l.layer),
                    number: l.layer.number(),
                    label: l.layer.label(),
                    text: &l.text,
                })
                .collect(),
            entries: entries(&prompt.entries),
            tools: &prompt.tools,
            effort: prompt.effort,
        }),
    };
    to_js(&BuiltPrompt {
        format: match format {
            Format::Openai => "openai",
            Format::Anthropic => "anthropic",
            Format::Neutral => "neutral",
        },
        body,
        text: prompt::render(prompt),
        turns: &assembled.turns,
        summary: assembled.summary.as_ref().map(SummaryOut::from),
        diagnostics: assembled
            .diagnostics
            .iter()
            .map(|d| match d {
                prompt::Diagnostic::Memory(d) => DiagnosticOut::from(d),
                prompt::Diagnostic::ToolNameTaken { name } => DiagnosticOut::ToolNameTaken { name },
            })
            .collect(),
    })
}

/// Rebuilt memory as a `ShortTermMemory` object.
pub fn memory(memory: &Memory) -> Result<JsValue, JsValue> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct ShortTermMemory<'a> {
        entries: Vec<EntryOut<'a>>,
        summary: Option<SummaryOut>,
        turns: &'a [u32],
        has_documents: bool,
        diagnostics: Vec<DiagnosticOut<'a>>,
    }
    to_js(&ShortTermMemory {
        entries: entries(&memory.entries),
        summary: memory.summary.as_ref().map(SummaryOut::from),
        turns: &memory.turns,
        has_documents: memory.has_documents,
        diagnostics: memory.diagnostics.iter().map(DiagnosticOut::from).collect(),
    })
}

/// The composer's parsed text as a `ParsedCommand`.
pub fn composed(composed: &Composed) -> Result<JsValue, JsValue> {
    #[derive(Serialize)]
    #[serde(tag = "kind", rename_all = "camelCase")]
    enum ParsedCommand<'a> {
        Message { skills: &'a [String], text: &'a str },
        Compact { instructions: Option<&'a str> },
    }
    to_js(&match composed {
        Composed::Message(selection) => ParsedCommand::Message {
            skills: &selection.slugs,
            text: &selection.text,
        },
        Composed::Compact(command) => ParsedCommand::Compact {
            instructions: command.instructions.as_deref(),
        },
    })
}

/// The pictures the host supplies for conversion, by attachment id.
#[derive(Debug, Default)]
pub struct Pictures(HashMap<String, EncodedPicture>);

impl PictureSource for Pictures {
    fn picture(&self, picture: &PictureRef) -> Option<EncodedPicture> {
        self.0.get(&picture.attachment_id).cloned()
    }
}

/// Refuses fields of `value` other than `allowed`, so a misspelt field is not silently ignored.
fn check_fields(value: &JsValue, owner: &str, allowed: &[&str]) -> Result<(), JsValue> {
    if !value.is_object() || js_sys::Array::is_array(value) {
        return Err(input_error(
            owner,
            &format!("must be an object, not {}", super::describe(value)),
        ));
    }
    let object: &js_sys::Object = value.unchecked_ref();
    for key in js_sys::Object::keys(object).iter() {
        let key = key.as_string().unwrap_or_default();
        if !allowed.contains(&key.as_str()) {
            return Err(input_error(
                &format!("{owner}.{key}"),
                &format!("unknown field; the fields are {}", allowed.join(", ")),
            ));
        }
    }
    Ok(())
}

fn model(value: &JsValue, field: &str) -> Result<ModelCapabilities, JsValue> {
    from_js::<ModelJs>(value, field).map(ModelJs::into_core)
}

/// `ModelCapabilities` in camelCase.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ModelJs {
    id: String,
    provider: ProviderJs,
    context_window: u64,
    max_output_tokens: u32,
    can_reason: bool,
    can_see: bool,
    #[serde(default)]
    largest_picture: Option<PictureLimitJs>,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum ProviderJs {
    Openai,
    Anthropic,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PictureLimitJs {
    long_edge: u32,
    #[serde(default)]
    pixels: Option<u64>,
}

impl ModelJs {
    fn into_core(self) -> ModelCapabilities {
        ModelCapabilities {
            id: self.id,
            provider: match self.provider {
                ProviderJs::Openai => Provider::OpenAi,
                ProviderJs::Anthropic => Provider::Anthropic,
            },
            context_window: self.context_window,
            max_output_tokens: self.max_output_tokens,
            can_reason: self.can_reason,
            can_see: self.can_see,
            largest_picture: self.largest_picture.map(|l| PictureLimit {
                long_edge: l.long_edge,
                pixels: l.pixels,
            }),
        }
    }
}

/// `CompactionHint`: `"search"`, `"none"` or `{ newestInTurn: n }`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
enum Hint {
    Search,
    None,
    NewestInTurn(u32),
}

impl Hint {
    fn into_core(self) -> CompactionHint {
        match self {
            Hint::Search => CompactionHint::Search,
            Hint::None => CompactionHint::NoCompaction,
            Hint::NewestInTurn(turn) => CompactionHint::NewestInTurn(turn),
        }
    }
}

/// `MemoryOptions`: overrides of the memory bounds; a missing one keeps the default.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct MemoryOptions {
    max_turns: Option<usize>,
    max_calls_per_turn: Option<usize>,
    output_turns: Option<usize>,
    result_chars: Option<usize>,
    argument_chars: Option<usize>,
    attachments: Option<AttachmentOptions>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AttachmentOptions {
    inline_document_chars: Option<usize>,
    manifest_headings: Option<usize>,
    heading_chars: Option<usize>,
    inline_replay_budget: Option<usize>,
    picture_resend_messages: Option<usize>,
}

impl MemoryOptions {
    fn into_core(self) -> MemoryConfig {
        let d = MemoryConfig::default();
        let a = self.attachments.unwrap_or_default();
        let da = AttachmentConfig::default();
        MemoryConfig {
            max_turns: self.max_turns.unwrap_or(d.max_turns),
            max_calls_per_turn: self.max_calls_per_turn.unwrap_or(d.max_calls_per_turn),
            output_turns: self.output_turns.unwrap_or(d.output_turns),
            result_chars: self.result_chars.unwrap_or(d.result_chars),
            argument_chars: self.argument_chars.unwrap_or(d.argument_chars),
            attachments: AttachmentConfig {
                inline_document_chars: a.inline_document_chars.unwrap_or(da.inline_document_chars),
                manifest_headings: a.manifest_headings.unwrap_or(da.manifest_headings),
                heading_chars: a.heading_chars.unwrap_or(da.heading_chars),
                inline_replay_budget: a.inline_replay_budget.unwrap_or(da.inline_replay_budget),
                picture_resend_messages: a
                    .picture_resend_messages
                    .unwrap_or(da.picture_resend_messages),
            },
        }
    }
}

/// Anthropic thinking budgets per effort level; a missing one keeps the default.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThinkingBudgets {
    low: Option<u32>,
    medium: Option<u32>,
    high: Option<u32>,
}

impl ThinkingBudgets {
    fn into_core(self) -> EffortConfig {
        let d = EffortConfig::default();
        EffortConfig {
            low_budget: self.low.unwrap_or(d.low_budget),
            medium_budget: self.medium.unwrap_or(d.medium_budget),
            high_budget: self.high.unwrap_or(d.high_budget),
        }
    }
}

/// A picture's encoded bytes, as the host supplies them.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PictureBytes {
    media_type: String,
    base64: String,
}

/// A prompt entry in camelCase.
#[derive(Serialize)]
struct EntryOut<'a> {
    role: &'static str,
    layer: &'static str,
    parts: Vec<PartOut<'a>>,
}

#[derive(Serialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
enum PartOut<'a> {
    Text {
        text: &'a str,
    },
    Picture {
        attachment_id: &'a str,
        media_type: &'a str,
        width: u32,
        height: u32,
        reduced: bool,
    },
    Call {
        id: &'a str,
        name: &'a str,
        arguments: &'a serde_json::Value,
    },
    Answer {
        call_id: &'a str,
        content: &'a str,
        is_error: bool,
    },
}

fn entries(entries: &[Entry]) -> Vec<EntryOut<'_>> {
    entries
        .iter()
        .map(|entry| EntryOut {
            role: entry.role.as_str(),
            layer: layer_name(entry.layer),
            parts: entry
                .parts
                .iter()
                .map(|part| match part {
                    Part::Text { text } => PartOut::Text { text },
                    Part::Picture { picture } => PartOut::Picture {
                        attachment_id: &picture.attachment_id,
                        media_type: &picture.media_type,
                        width: picture.width,
                        height: picture.height,
                        reduced: picture.reduced,
                    },
                    Part::Call(call) => PartOut::Call {
                        id: &call.id,
                        name: &call.name,
                        arguments: &call.arguments,
                    },
                    Part::Answer(answer) => PartOut::Answer {
                        call_id: &answer.call_id,
                        content: &answer.content,
                        is_error: answer.is_error,
                    },
                })
                .collect(),
        })
        .collect()
}

/// A layer's name in JavaScript.
fn layer_name(layer: Layer) -> &'static str {
    match layer {
        Layer::Floor => "floor",
        Layer::Instructions => "instructions",
        Layer::Skills => "skills",
        Layer::Catalogue => "catalogue",
        Layer::Memory => "memory",
        Layer::NewMessage => "newMessage",
    }
}

#[derive(Serialize)]
struct SummaryOut {
    turn: u32,
    covers: Covers,
}

#[derive(Serialize)]
struct Covers {
    first: u32,
    last: u32,
}

impl From<&ReplayedSummary> for SummaryOut {
    fn from(summary: &ReplayedSummary) -> Self {
        SummaryOut {
            turn: summary.turn,
            covers: Covers {
                first: summary.covers.first,
                last: summary.covers.last,
            },
        }
    }
}

#[derive(Serialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
enum DiagnosticOut<'a> {
    SearchedBeyondWindow,
    HintMissed { turn: u32 },
    KeptTailShort { kept_messages: u32, missing: usize },
    OrphanResults { turn: u32, message: usize },
    PictureForBlindModel { attachment_id: &'a str },
    ToolNameTaken { name: &'a str },
}

impl<'a> From<&'a memory::Diagnostic> for DiagnosticOut<'a> {
    fn from(diagnostic: &'a memory::Diagnostic) -> Self {
        match diagnostic {
            memory::Diagnostic::SearchedBeyondWindow => DiagnosticOut::SearchedBeyondWindow,
            memory::Diagnostic::HintMissed { turn } => DiagnosticOut::HintMissed { turn: *turn },
            memory::Diagnostic::KeptTailShort {
                kept_messages,
                missing,
            } => DiagnosticOut::KeptTailShort {
                kept_messages: *kept_messages,
                missing: *missing,
            },
            memory::Diagnostic::OrphanResults { turn, message } => DiagnosticOut::OrphanResults {
                turn: *turn,
                message: *message,
            },
            memory::Diagnostic::PictureForBlindModel { attachment_id } => {
                DiagnosticOut::PictureForBlindModel { attachment_id }
            }
        }
    }
}
