//! Conversions for `validateTranscript`, `buildPrompt`, `rebuildMemory` and `parseCommand`. Core's
//! own serde formats are the JavaScript shapes (camelCase, defaults, unknown fields refused), so
//! this file only ties errors to the fields they are in and puts the prompt's parts together. The transcript, its
//! attachments and provider request bodies keep their own snake_case formats.

use std::collections::HashMap;

use portal_core::attachment::AttachmentError;
use portal_core::effort::{Effort, EffortConfig};
use portal_core::memory::{CompactionHint, MemoryConfig, ReplayedSummary};
use portal_core::model::{ModelCapabilities, Provider};
use portal_core::new_turn::NewMessage;
use portal_core::prompt::{self, Assembled, Diagnostic, EncodedPicture, Entry, Layer};
use portal_core::skills::{CatalogueEntry, Skill};
use portal_core::tools::ToolDefinition;
use portal_core::{Transcript, TranscriptError, validate};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use wasm_bindgen::JsValue;

use super::{FieldError, from_object, input_error, object_fields, to_js};
use crate::errors;

/// A `buildPrompt` request (JavaScript's `PromptRequest`). Absent, `undefined` and `null`
/// optional fields are `None`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PromptRequest {
    /// An object or JSON text; see [`transcript_of_json`].
    pub transcript: Value,
    pub new_message: Option<NewMessage>,
    #[serde(deserialize_with = "model")]
    pub model: ModelCapabilities,
    pub format: Option<Format>,
    pub floor: Option<String>,
    pub instructions: Option<String>,
    pub project_instructions: Option<String>,
    pub selected_skills: Option<Vec<Skill>>,
    pub catalogue: Option<Vec<CatalogueEntry>>,
    pub agent_tools: Option<Vec<ToolDefinition>>,
    pub effort: Option<Effort>,
    pub compaction_hint: Option<CompactionHint>,
    pub memory: Option<MemoryConfig>,
    pub thinking_budgets: Option<EffortConfig>,
    pub pictures: Option<HashMap<String, EncodedPicture>>,
}

/// What `buildPrompt` returns the prompt as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Openai,
    Anthropic,
    Neutral,
}

impl From<Provider> for Format {
    /// The request body the provider takes.
    fn from(provider: Provider) -> Self {
        match provider {
            Provider::OpenAi => Format::Openai,
            Provider::Anthropic => Format::Anthropic,
        }
    }
}

/// The `PromptRequest` object, or an `InputError` naming the field that is wrong.
pub fn prompt_request(request: &JsValue) -> Result<PromptRequest, JsValue> {
    from_object(request, "request").map_err(|e| match e {
        FieldError::Missing("model") => input_error(
            "request.model",
            "missing; give the model's capabilities, such as { id, provider, contextWindow, \
             maxOutputTokens, canReason, canSee }",
        ),
        FieldError::Missing("transcript") => input_error(
            "request.transcript",
            "missing; give the conversation so far (an object or its JSON text), \
             { version: 1, turns: [] } for a new one",
        ),
        other => other.into_js("request"),
    })
}

/// `rebuildMemory`'s options, converted.
#[derive(Debug)]
pub struct RebuildOptions {
    pub model: ModelCapabilities,
    pub compaction_hint: CompactionHint,
    pub memory: MemoryConfig,
}

/// The `RebuildMemoryOptions` object: the memory bounds flat, and the model and compaction hint.
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
    let mut fields = object_fields(options, "options")?;
    if let Some(value) = fields.remove("model").filter(|v| !v.is_null()) {
        rebuild.model = model(value).map_err(|e| input_error("options.model", &e.to_string()))?;
    }
    if let Some(value) = fields.remove("compactionHint").filter(|v| !v.is_null()) {
        rebuild.compaction_hint = serde_json::from_value(value)
            .map_err(|e| input_error("options.compactionHint", &e.to_string()))?;
    }
    rebuild.memory = serde_json::from_value(Value::Object(fields))
        .map_err(|e| input_error("options", &e.to_string()))?;
    Ok(rebuild)
}

/// `ModelCapabilities` as JavaScript writes it. Core's format is the models file's snake_case
/// (docs/models.md); JavaScript writes the same fields in camelCase (`contextWindow`), so the keys
/// are converted by that rule rather than listed again, and errors name fields as JavaScript does.
fn model<'de, D: Deserializer<'de>>(value: D) -> Result<ModelCapabilities, D::Error> {
    let value = snake_case_keys(Value::deserialize(value)?);
    serde_json::from_value(value).map_err(|e| D::Error::custom(camel_case_fields(&e.to_string())))
}

/// `value` with every object key from camelCase to snake_case (`longEdge` to `long_edge`).
fn snake_case_keys(value: Value) -> Value {
    match value {
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(key, value)| {
                    let mut snake = String::with_capacity(key.len() + 4);
                    for c in key.chars() {
                        if c.is_ascii_uppercase() {
                            snake.push('_');
                        }
                        snake.push(c.to_ascii_lowercase());
                    }
                    (snake, snake_case_keys(value))
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(snake_case_keys).collect()),
        other => other,
    }
}

/// A serde message about fields (missing, unknown, duplicate) with the `quoted` field names back
/// in camelCase; other messages unchanged, since they quote values.
fn camel_case_fields(message: &str) -> String {
    if !["missing field", "unknown field", "duplicate field"]
        .iter()
        .any(|start| message.starts_with(start))
    {
        return message.to_string();
    }
    message
        .split('`')
        .enumerate()
        .map(|(i, piece)| {
            if i % 2 == 0 {
                return piece.to_string();
            }
            let mut parts = piece.split('_');
            let mut camel = parts.next().unwrap_or_default().to_string();
            for part in parts {
                let mut chars = part.chars();
                camel.extend(chars.next().map(|c| c.to_ascii_uppercase()));
                camel.push_str(chars.as_str());
            }
            camel
        })
        .collect::<Vec<_>>()
        .join("`")
}

/// A transcript given as an object (such as `validateTranscript` returns) or as JSON text,
/// checked against the six block invariants; a `TranscriptError` otherwise. An object is read
/// through its JSON text, as text is: one reader of the transcript format in the package instead
/// of two (the second cost some 3 KB gzipped).
pub fn transcript(value: &JsValue) -> Result<Transcript, JsValue> {
    if let Some(text) = value.as_string() {
        return portal_core::parse_transcript(&text).map_err(|e| transcript_error(&e));
    }
    let text = js_sys::JSON::stringify(value)
        .ok()
        .and_then(|text| text.as_string())
        .ok_or_else(|| not_a_transcript(&"it cannot be written as JSON"))?;
    transcript_of_text(&text)
}

/// [`transcript`], for a transcript already in JSON's data model.
pub fn transcript_of_json(json: Value) -> Result<Transcript, JsValue> {
    match json {
        Value::String(text) => {
            portal_core::parse_transcript(&text).map_err(|e| transcript_error(&e))
        }
        json => transcript_of_text(&json.to_string()),
    }
}

/// The JSON text of a transcript given as an object: its structure errors say what is wrong
/// without a line and column, which would count in text the caller never wrote.
fn transcript_of_text(text: &str) -> Result<Transcript, JsValue> {
    let transcript: Transcript = serde_json::from_str(text).map_err(|e| {
        let message = e.to_string();
        let without_place = message
            .rsplit_once(" at line ")
            .map_or(&*message, |(m, _)| m);
        not_a_transcript(&without_place)
    })?;
    validate(&transcript).map_err(|e| transcript_error(&e))?;
    Ok(transcript)
}

/// A `TranscriptError` as JavaScript's `TranscriptError`, carrying the invariant's
/// name and the `location` (1-based turn, message and block) where the transcript broke it.
pub fn transcript_error(error: &TranscriptError) -> JsValue {
    let js = errors::transcript(&error.to_string());
    let set = |key: &str, value: JsValue| {
        let _ = js_sys::Reflect::set(&js, &JsValue::from_str(key), &value);
    };
    match error {
        TranscriptError::Invariant {
            location,
            invariant,
            ..
        } => {
            set("invariant", JsValue::from_str(invariant.name()));
            set("location", location_object(location));
        }
        TranscriptError::Structure { location, .. } => set("location", location_object(location)),
        TranscriptError::Json { line, column, .. } => {
            set("line", JsValue::from(*line as u32));
            set("column", JsValue::from(*column as u32));
        }
        TranscriptError::Version { .. } => {}
    }
    js.into()
}

/// A location as `{ turn, message?, block? }`, all 1-based.
fn location_object(location: &portal_core::Location) -> JsValue {
    let object = js_sys::Object::new();
    let set = |key: &str, value: JsValue| {
        let _ = js_sys::Reflect::set(&object, &JsValue::from_str(key), &value);
    };
    set("turn", JsValue::from(location.turn));
    if let Some(message) = location.message {
        set("message", JsValue::from(message as u32));
    }
    if let Some(block) = location.block {
        set("block", JsValue::from(block as u32));
    }
    object.into()
}

fn not_a_transcript(why: &dyn std::fmt::Display) -> JsValue {
    errors::transcript(&format!(
        "the transcript is not in the transcript format ({why}); see \
         docs/transcript-format.md, or check it with validateTranscript"
    ))
    .into()
}

/// A message refused for its attachments (rule A5), as an `AttachmentError` naming the model and
/// the picture.
pub fn attachment_error(error: &AttachmentError) -> JsValue {
    let js = errors::attachment(&error.to_string());
    let AttachmentError::PictureNeedsVision { model, filename } = error;
    let _ = js_sys::Reflect::set(&js, &"model".into(), &model.into());
    let _ = js_sys::Reflect::set(&js, &"filename".into(), &filename.into());
    js.into()
}

/// The assembled prompt as a `BuiltPrompt`: the body in `format`, the plain-text view, and what
/// memory replayed and worked around.
pub fn built_prompt(
    format: Format,
    assembled: &Assembled,
    body: Option<&Value>,
) -> Result<JsValue, JsValue> {
    #[derive(Serialize)]
    #[serde(untagged)]
    enum Body<'a> {
        Provider(&'a Value),
        Neutral(NeutralPrompt<'a>),
    }
    #[derive(Serialize)]
    struct NeutralPrompt<'a> {
        system: String,
        layers: Vec<SystemLayer<'a>>,
        entries: &'a [Entry],
        tools: &'a [ToolDefinition],
        effort: Option<Effort>,
    }
    #[derive(Serialize)]
    struct SystemLayer<'a> {
        layer: Layer,
        number: u8,
        label: &'static str,
        text: &'a str,
    }
    #[derive(Serialize)]
    struct BuiltPrompt<'a> {
        format: Format,
        body: Body<'a>,
        text: String,
        turns: &'a [u32],
        summary: Option<ReplayedSummary>,
        diagnostics: &'a [Diagnostic],
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
                    layer: l.layer,
                    number: l.layer.number(),
                    label: l.layer.label(),
                    text: &l.text,
                })
                .collect(),
            entries: &prompt.entries,
            tools: &prompt.tools,
            effort: prompt.effort,
        }),
    };
    to_js(&BuiltPrompt {
        format,
        body,
        text: prompt::render(prompt),
        turns: &assembled.turns,
        summary: assembled.summary,
        diagnostics: &assembled.diagnostics,
    })
}
