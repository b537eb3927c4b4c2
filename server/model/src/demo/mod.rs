//! The built-in demo model: deterministic, offline, and realistic enough to show everything a
//! turn can do.
//!
//! It reads the prompt core assembled. On a turn's first call it thinks, narrates and calls one
//! of the demo tools when the prompt offers it: `ask_user` when the message asks it to clarify,
//! `publish_note` (which needs the user's approval) when the message asks it to publish,
//! `search_knowledge` when it is offered (the agent lists knowledge collections), and
//! `count_characters` otherwise; its answer to a search quotes the passage that matched best,
//! with its document and reference (`knowledge`). A message that asks it to publish "two notes" ("Please publish
//! two notes on the herons") has it publish them one at a time: once the first note's call is
//! answered (approved or declined), it calls `publish_note` again for the second, so the turn
//! asks for a second approval before it answers. A message that carries documents and asks for
//! nothing else (no named tool, question or note) has it read each document with
//! `read_document`, one call at a time, and its answer quotes what it read; a picture handed to
//! it is answered without a tool, saying what the picture path gave it (its type, size and
//! bytes). It quotes the person's words and a tool's in whole words and whole JSON objects, or not
//! at all (`quote`). Once the tool has answered, it thinks again and
//! answers in mixed scripts (ZWJ emoji, flags, combining marks, CJK, Thai), in uneven chunks that
//! may end inside a grapheme cluster, with pauses, and once releases a whole sentence at once
//! after a pause, as a guardrail check would. A prompt larger than its window is refused as a
//! context overflow, as a real model would refuse it. A message that mentions "overflow" is
//! refused as a context overflow when the prompt replays earlier turns and no compaction summary
//! yet, so the overflow path can be shown; in a new conversation there is nothing to compact, and
//! it is answered like any message. A summary call is answered with core's extractive summary
//! ([`summary()`]).
//!
//! This module is the demo's one home: the model, its name ([`MODEL`]), its capabilities, its
//! summaries and the names of the tools it calls ([`tools`]), which `portal-tools` implements.

use std::time::Duration;

use futures_util::stream;
use portal_core::Role;
use portal_core::compaction::{SUMMARY_NOTE, SummaryRequest};
use portal_core::model::{ModelCapabilities, PictureLimit, Provider};
use portal_core::prompt::{Answer, Entry, Layer, Part, PictureSource, Prompt, render};
use portal_core::tokens::{EstimateCounter, TokenCounter};
use portal_core::tools::{READ_DOCUMENT, SEARCH_KNOWLEDGE};
use portal_core::usage::Tokens;
use serde_json::json;

use crate::{FinishReason, Model, ModelError, ModelEvent, ModelStream};
use attached::{Attached, Picture, reading_notes};
use quote::opening;
use tools::{ASK_USER, COUNT_CHARACTERS, PUBLISH_NOTE};

mod attached;
mod knowledge;
mod quote;
mod summary;
pub mod tools;

pub use summary::summary;

/// The demo model's name, and the model an agent uses when its file names none.
pub const MODEL: &str = "demo";

/// The capabilities the demo model has unless the models file says otherwise: a large window,
/// reasoning, and sight up to 2,048 pixels on the long edge.
pub fn capabilities() -> ModelCapabilities {
    ModelCapabilities {
        id: MODEL.into(),
        provider: Provider::OpenAi,
        context_window: 128_000,
        max_output_tokens: 8_192,
        can_reason: true,
        can_see: true,
        largest_picture: Some(PictureLimit {
            long_edge: 2_048,
            pixels: None,
        }),
    }
}

/// The demo model. Its pace multiplies every pause (0 streams as fast as possible).
#[derive(Debug, Clone)]
pub struct DemoModel {
    pace: f64,
    label: String,
    capabilities: ModelCapabilities,
}

/// One step of the demo's answer: the pause before it, then the event.
pub type Step = (Duration, ModelEvent);

impl DemoModel {
    pub fn new(pace: f64, capabilities: ModelCapabilities) -> Self {
        DemoModel {
            pace: pace.max(0.0),
            label: "Demo model".into(),
            capabilities,
        }
    }

    /// The model with the name shown to people set to `label`.
    pub fn with_label(mut self, label: String) -> Self {
        self.label = label;
        self
    }

    /// The events of the answer to `prompt` with the pause before each, in order, or the
    /// overflow the demo reports.
    pub fn script(
        &self,
        prompt: &Prompt,
        pictures: &dyn PictureSource,
    ) -> Result<Vec<Step>, ModelError> {
        let message = latest_user_text(prompt);
        let lower = message.to_lowercase();
        let size = EstimateCounter.count(&render(prompt)) as u64;
        let window = self.capabilities.context_window;
        if size > window {
            return Err(ModelError::ContextOverflow {
                message: format!(
                    "the prompt is about {size} tokens, more than the demo model's window of \
                     {window} tokens"
                ),
            });
        }
        if lower.contains("overflow") && replays_earlier_turns(prompt) && !replays_summary(prompt) {
            return Err(ModelError::ContextOverflow {
                message: "the demo model pretends this message does not fit its window; \
                          compact the conversation"
                    .into(),
            });
        }
        let mut random = Lcg::new(seed(&message));
        let topic = topic(&message);
        let offered = |name: &str| prompt.tools.iter().any(|t| t.name == name);
        let two_notes = lower.contains("publish") && lower.contains("two notes");
        let named = named_call(&message, &prompt.tools);
        let attached = Attached::of(prompt);
        // A message that carries documents and asks for nothing else is answered from them:
        // each is read with read_document, one call at a time, before the answer.
        let reads_documents = offered(READ_DOCUMENT)
            && named.is_none()
            && !lower.contains("clarify")
            && !lower.contains("publish");
        let to_read = attached.next_to_read(prompt).filter(|_| reads_documents);
        let mut script = Vec::new();
        let finish = if two_notes
            && offered(PUBLISH_NOTE)
            && calls_in_turn(prompt, PUBLISH_NOTE) == 1
            && latest_reply(prompt).is_some()
        {
            thinking(
                &mut script,
                &mut random,
                "The first note is answered. Now the second one, which needs its own approval.",
            );
            text(
                &mut script,
                &mut random,
                "Now the second note; that needs your approval too.",
                false,
            );
            tool_call(&mut script, PUBLISH_NOTE, &note(&topic, Some(2)));
            FinishReason::ToolCalls
        } else if let Some((document, arguments)) = to_read {
            let first = calls_in_turn(prompt, READ_DOCUMENT) == 0;
            thinking(
                &mut script,
                &mut random,
                &format!(
                    "The message carries {}. I read {} before I answer.",
                    count(attached.documents.len(), "a document", "documents"),
                    if first { "it" } else { "the next one" }
                ),
            );
            text(
                &mut script,
                &mut random,
                &format!("I will read “{}” with read_document.", document.name),
                false,
            );
            tool_call(&mut script, READ_DOCUMENT, &arguments);
            FinishReason::ToolCalls
        } else if let Some(answer) = latest_reply(prompt) {
            thinking(
                &mut script,
                &mut random,
                &format!(
                    "The tool answered{}. Now the answer itself, in a few scripts.",
                    if answer.is_error {
                        " with an error"
                    } else {
                        ""
                    }
                ),
            );
            let mut opening = reading_notes(prompt);
            if opening.is_empty() {
                opening.push(knowledge::note(&answer).unwrap_or_else(|| tool_said(&answer)));
            }
            opening.extend(
                Picture::of_answer(prompt, &answer)
                    .iter()
                    .map(|p| p.note(pictures)),
            );
            opening.extend(attached.picture_notes(pictures));
            let answer = answer_text(&topic, opening, &mut random);
            text(&mut script, &mut random, &answer, true);
            FinishReason::Stop
        } else {
            let call = if let Some((name, arguments)) = named {
                Some((format!("I will use {name} as you asked."), name, arguments))
            } else if lower.contains("clarify") && offered(ASK_USER) {
                Some((
                    "I need one detail before I answer.".to_string(),
                    ASK_USER.to_string(),
                    json!({ "question": format!(
                        "Which part of {topic} should I focus on: the scripts, the emoji or the pacing?"
                    ) }),
                ))
            } else if two_notes && offered(PUBLISH_NOTE) {
                Some((
                    format!(
                        "I will publish two short notes on {topic}, one at a time; each needs \
                         your approval."
                    ),
                    PUBLISH_NOTE.to_string(),
                    note(&topic, Some(1)),
                ))
            } else if lower.contains("publish") && offered(PUBLISH_NOTE) {
                Some((
                    format!("I will publish a short note on {topic}; that needs your approval."),
                    PUBLISH_NOTE.to_string(),
                    note(&topic, None),
                ))
            } else if offered(SEARCH_KNOWLEDGE) && attached.pictures.is_empty() {
                Some((
                    "Let me look in the organisation's documents first.".to_string(),
                    SEARCH_KNOWLEDGE.to_string(),
                    knowledge::search(&message),
                ))
            } else if attached.pictures.is_empty() && offered(COUNT_CHARACTERS) {
                // A picture is answered from what the model was handed, with no tool.
                Some((
                    format!("Let me count the characters of {topic} first."),
                    COUNT_CHARACTERS.to_string(),
                    json!({ "text": topic }),
                ))
            } else {
                None
            };
            thinking(
                &mut script,
                &mut random,
                &format!(
                    "The person asks about {topic}. A short, friendly overview in a few scripts will do."
                ),
            );
            match call {
                Some((narration, name, arguments)) => {
                    text(&mut script, &mut random, &narration, false);
                    tool_call(&mut script, &name, &arguments);
                    FinishReason::ToolCalls
                }
                None => {
                    let answer = answer_text(&topic, attached.picture_notes(pictures), &mut random);
                    text(&mut script, &mut random, &answer, true);
                    FinishReason::Stop
                }
            }
        };
        let output: usize = script
            .iter()
            .map(|(_, event)| match event {
                ModelEvent::TextDelta(t) | ModelEvent::ThinkingDelta(t) => t.len(),
                _ => 0,
            })
            .sum();
        script.push((
            0,
            // The demo is not a provider: its tokens are the portal's estimate, and say so.
            ModelEvent::Usage(Tokens::estimated(
                EstimateCounter.count(&render(prompt)) as u64,
                (output / 4).max(1) as u64,
            )),
        ));
        script.push((0, ModelEvent::Finished { reason: finish }));
        Ok(script
            .into_iter()
            .map(|(ms, event)| {
                (
                    Duration::from_secs_f64(ms as f64 * self.pace / 1000.0),
                    event,
                )
            })
            .collect())
    }
}

impl Model for DemoModel {
    fn label(&self) -> &str {
        &self.label
    }

    fn capabilities(&self) -> &ModelCapabilities {
        &self.capabilities
    }

    fn is_demo(&self) -> bool {
        true
    }

    fn stream(&self, prompt: &Prompt, pictures: &dyn PictureSource) -> ModelStream {
        if let Some(request) = SummaryRequest::from_prompt(prompt) {
            return summary(&request, self.pace);
        }
        let script = match self.script(prompt, pictures) {
            Ok(script) => script,
            Err(error) => return Box::pin(stream::iter([Err(error)])),
        };
        Box::pin(stream::unfold(script.into_iter(), |mut steps| async move {
            let (pause, event) = steps.next()?;
            if pause.is_zero() {
                // Like a stream read from the network, let the server's other tasks run between
                // events; a stream that is always ready would hold its worker for the whole turn.
                tokio::task::yield_now().await;
            } else {
                tokio::time::sleep(pause).await;
            }
            Some((Ok(event), steps))
        }))
    }
}

/// The arguments of a `publish_note` call on `topic`: the whole note, or part `part` of two.
fn note(topic: &str, part: Option<u8>) -> serde_json::Value {
    let title = match part {
        Some(part) => format!("{topic} ({part} of 2)"),
        None => topic.to_string(),
    };
    json!({ "title": title, "text": format!("A note on {topic} from the demo model 📝.") })
}

/// The offered tool a message names as `use <tool>` (its offered name, or an MCP tool's name on
/// its server), with the JSON object that follows `with`, if any: `use get-sum with {"a": 1}`.
fn named_call(
    message: &str,
    tools: &[portal_core::tools::ToolDefinition],
) -> Option<(String, serde_json::Value)> {
    message.match_indices("use ").find_map(|(at, _)| {
        // "use" as a word of its own, not the end of "because".
        if message[..at]
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric)
        {
            return None;
        }
        let rest = &message[at + 4..];
        let word: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .collect();
        let tool = tools.iter().find(|t| {
            !word.is_empty()
                && (t.name == word
                    || t.name.strip_suffix(word.as_str()).is_some_and(|server| {
                        server.ends_with(portal_core::tools::SERVER_SEPARATOR)
                    }))
        })?;
        let after = &rest[word.len()..];
        let arguments = after
            .trim_start()
            .strip_prefix("with")
            .and_then(|with| with.find('{').map(|brace| &with[brace..]))
            .and_then(|json| {
                serde_json::Deserializer::from_str(json)
                    .into_iter::<serde_json::Value>()
                    .next()?
                    .ok()
            })
            .filter(serde_json::Value::is_object)
            .unwrap_or_else(|| json!({}));
        Some((tool.name.clone(), arguments))
    })
}

/// How many calls to the tool `name` the turn in progress has made.
fn calls_in_turn(prompt: &Prompt, name: &str) -> usize {
    prompt
        .entries
        .iter()
        .filter(|e| e.layer == Layer::NewMessage)
        .flat_map(|e| e.calls())
        .filter(|c| c.name == name)
        .count()
}

/// What answered the demo last in the turn in progress: a tool's answer, or the user's answer to
/// its question (a user entry after the first), as an answer.
fn latest_reply(prompt: &Prompt) -> Option<Answer> {
    let live = prompt
        .entries
        .iter()
        .filter(|e| e.layer == Layer::NewMessage);
    let mut users = 0;
    let mut reply = None;
    for entry in live {
        match entry.role {
            Role::User => {
                users += 1;
                if users > 1 {
                    reply = Some(Answer {
                        call_id: "the user".into(),
                        content: format!("you said “{}”", entry_text(entry)),
                        is_error: false,
                        pictures: Vec::new(),
                    });
                }
            }
            _ => {
                if let Some(answer) = entry.answers().last() {
                    reply = Some(answer.clone());
                }
            }
        }
    }
    reply
}

fn entry_text(entry: &Entry) -> String {
    entry
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text of the turn's user message: the first user entry of the new-message layer, or the
/// last user entry when there is none, without a summary merged into it.
fn latest_user_text(prompt: &Prompt) -> String {
    let user = prompt
        .entries
        .iter()
        .find(|e| e.layer == Layer::NewMessage && e.role == Role::User)
        .or_else(|| prompt.entries.iter().rfind(|e| e.role == Role::User));
    // A replayed summary is merged into the new message's entry (rule M11), and an attached
    // document's manifest and text, or a picture's caption, follow the message; none is what the
    // person just wrote.
    user.map(|entry| {
        entry
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Text { text }
                    if !text.contains(SUMMARY_NOTE)
                        && !text.starts_with("<document ")
                        && !text.starts_with("<picture ") =>
                {
                    Some(text.as_str())
                }
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    })
    .unwrap_or_default()
}

fn replays_earlier_turns(prompt: &Prompt) -> bool {
    prompt.entries.iter().any(|e| e.layer == Layer::Memory)
}

fn replays_summary(prompt: &Prompt) -> bool {
    prompt.entries.iter().any(|e| {
        e.parts
            .iter()
            .any(|p| matches!(p, Part::Text { text } if text.contains(SUMMARY_NOTE)))
    })
}

const PARAGRAPHS: &[&str] = &[
    "Here is a short tour of {topic}, written by the demo model 👩🏽‍💻. It runs on this machine, needs no network and always answers the same way.",
    "Families of emoji stay whole as they stream in: 👨‍👩‍👧‍👦 and 👩🏾‍🔬 never show half a person. Flags too: 🇯🇵 🇧🇷 🇪🇺, and keycaps like 1️⃣ 2️⃣ 3️⃣.",
    "Accents may arrive as a letter and a separate mark, as in cafe\u{301} or re\u{301}sume\u{301}; the mark is never drawn apart from its letter.",
    "日本語の文章もそのまま流れます。東京の天気は晴れ、気温は二十度です。",
    "ภาษาไทยก็แสดงผลได้ถูกต้อง วรรณยุกต์ไม่แยกจากพยัญชนะ เช่น น้ำ ไม้ และ ก๊ก",
    "Hindi works as well: नमस्ते, क्षत्रिय, and Korean: 한국어 문장도 자연스럽게 보입니다.",
    "In short, {topic} reads the same in every script, one character at a time, about six tenths of a second behind the model.",
];

/// The markdown the tour shows after its first paragraph: a heading, a list with bold and inline
/// code, a link, a fenced code block and a small table.
const MARKDOWN_TOUR: &str = "## What plays out here\n\n\
- **Whole clusters**: a frame never ends inside an emoji or an accent.\n\
- **Markdown** as it arrives: `**bold**`, lists, code and tables, with no raw syntax on the way.\n\
- Links such as [CommonMark](https://commonmark.org) open in a new tab.\n\n\
```rust\n\
let frame = playout.tick(now_ms);\n\
draw(&frame);\n\
```\n\n\
| Script | Sample |\n\
|---|---|\n\
| Japanese | 日本語 |\n\
| Thai | ภาษาไทย |";

/// The sentence the demo releases in one piece after a pause, as a guardrail check would.
pub const RELEASED_SENTENCE: &str = " This whole sentence was held back by a check and released at once, so the text speeds up smoothly instead of jumping.";

/// What the demo says a tool answered: what the person did in their words, or the opening of the
/// result, quoted in whole words.
fn tool_said(tool: &Answer) -> String {
    // What the person did is said in their words; the result's own words are for the model.
    if tool.content == portal_core::tools::DECLINED_RESULT {
        return "You declined the call, so it did not run.".to_string();
    }
    let quote = opening(&tool.content, TOOL_QUOTE_CHARS);
    let content = if quote.whole {
        quote.text.to_string()
    } else {
        format!("{}…", quote.text)
    };
    if tool.is_error {
        format!("The tool did not run: {content}")
    } else {
        format!("The tool answered: {content}")
    }
}

/// The answer: what the demo opens with (what a tool answered, what it read or looked at),
/// then the tour of scripts and markdown.
fn answer_text(topic: &str, opening: Vec<String>, random: &mut Lcg) -> String {
    let tour = opening.len() + 1;
    // The sentence is held back in one of the paragraphs after the first of the opening.
    let first_held = opening.len().max(1);
    let mut paragraphs = opening;
    paragraphs.extend(PARAGRAPHS.iter().map(|p| p.replace("{topic}", topic)));
    let held = first_held + (random.next() as usize % (paragraphs.len() - 1 - first_held));
    paragraphs[held].push_str(RELEASED_SENTENCE);
    paragraphs.insert(tour, MARKDOWN_TOUR.to_string());
    paragraphs.join("\n\n")
}

fn thinking(script: &mut Vec<(u64, ModelEvent)>, random: &mut Lcg, text: &str) {
    chunks(script, random, text, false, ModelEvent::ThinkingDelta);
}

fn text(script: &mut Vec<(u64, ModelEvent)>, random: &mut Lcg, text: &str, with_release: bool) {
    chunks(script, random, text, with_release, ModelEvent::TextDelta);
}

fn chunks(
    script: &mut Vec<(u64, ModelEvent)>,
    random: &mut Lcg,
    text: &str,
    with_release: bool,
    event: fn(String) -> ModelEvent,
) {
    let release_at = with_release.then(|| text.find(RELEASED_SENTENCE)).flatten();
    let mut at = 0;
    let mut first = true;
    while at < text.len() {
        if Some(at) == release_at {
            script.push((1200, event(RELEASED_SENTENCE.to_string())));
            at += RELEASED_SENTENCE.len();
            continue;
        }
        let rest = &text[at..];
        let want = 1 + (random.next() % 14) as usize;
        let mut end = rest.char_indices().nth(want).map_or(rest.len(), |(i, _)| i);
        if let Some(release) = release_at.filter(|r| *r > at && *r < at + end) {
            end = release - at;
        }
        let pause = if first {
            250
        } else {
            match random.next() % 20 {
                0 => 350,
                1..=3 => 90,
                _ => 12 + random.next() % 40,
            }
        };
        first = false;
        script.push((pause, event(rest[..end].to_string())));
        at += end;
    }
}

/// A call streamed as a provider sends it: its start, its arguments in two pieces, then whole.
/// The demo sends no call id, so the turn loop gives the call one of its own.
fn tool_call(script: &mut Vec<(u64, ModelEvent)>, name: &str, arguments: &serde_json::Value) {
    let raw = arguments.to_string();
    let middle = raw
        .char_indices()
        .nth(raw.chars().count() / 2)
        .map_or(0, |(i, _)| i);
    script.push((
        120,
        ModelEvent::ToolCallStart {
            index: 0,
            id: None,
            name: name.into(),
        },
    ));
    for piece in [&raw[..middle], &raw[middle..]] {
        script.push((
            40,
            ModelEvent::ToolCallArgumentsDelta {
                index: 0,
                delta: piece.into(),
            },
        ));
    }
    script.push((
        0,
        ModelEvent::ToolCallEnd {
            index: 0,
            id: None,
            name: name.into(),
            arguments: Ok(arguments.clone()),
        },
    ));
}

/// The person's message as the demo quotes it: its opening in whole words and whole JSON, after
/// any leading `/slug` skill commands.
fn topic(message: &str) -> String {
    let mut rest = message.trim_start();
    while rest.starts_with('/') {
        rest = rest
            .split_once(char::is_whitespace)
            .map_or("", |(_, after)| after.trim_start());
    }
    let words = rest.split_whitespace().collect::<Vec<_>>().join(" ");
    opening(&words, TOPIC_CHARS)
        .quoted()
        .unwrap_or_else(|| "your question".to_string())
}

/// How many characters of the person's message the demo quotes as its topic.
const TOPIC_CHARS: usize = 60;
/// How many characters of a tool's result the demo quotes.
const TOOL_QUOTE_CHARS: usize = 200;

/// "a document" or "3 documents".
fn count(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        one.to_string()
    } else {
        format!("{n} {many}")
    }
}

fn seed(message: &str) -> u64 {
    message.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// A small deterministic generator, so the demo answers the same message the same way.
struct Lcg(u64);

impl Lcg {
    fn new(seed: u64) -> Self {
        Lcg(seed | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

#[cfg(test)]
mod tests {
    use portal_core::prompt::{EncodedPicture, NoPictures};
    use portal_core::tools::ToolDefinition;

    use super::*;

    fn prompt(message: &str, tools: &[&str], answer: Option<&str>) -> Prompt {
        let mut user = Entry::new(Role::User, Layer::NewMessage);
        user.parts.push(Part::Text {
            text: message.into(),
        });
        let mut entries = vec![user];
        if let Some(content) = answer {
            let mut tool = Entry::new(Role::Tool, Layer::NewMessage);
            tool.parts.push(Part::Answer(Answer {
                call_id: "call_1".into(),
                content: content.into(),
                is_error: false,
                pictures: Vec::new(),
            }));
            entries.push(tool);
        }
        Prompt {
            layers: Vec::new(),
            entries,
            tools: tools
                .iter()
                .map(|name| ToolDefinition {
                    name: (*name).into(),
                    description: String::new(),
                    parameters: json!({}),
                })
                .collect(),
            effort: None,
        }
    }

    fn demo(pace: f64) -> DemoModel {
        DemoModel::new(pace, capabilities())
    }

    fn text_of(script: &[Step]) -> String {
        script
            .iter()
            .filter_map(|(_, event)| match event {
                ModelEvent::TextDelta(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn demo_is_deterministic() {
        let p = prompt("hello there", &[COUNT_CHARACTERS], None);
        assert_eq!(
            demo(1.0).script(&p, &NoPictures),
            demo(1.0).script(&p, &NoPictures)
        );
    }

    #[test]
    fn demo_thinks_narrates_and_calls_an_offered_tool() {
        let script = demo(1.0)
            .script(
                &prompt("hello there", &[COUNT_CHARACTERS], None),
                &NoPictures,
            )
            .expect("script");
        assert!(matches!(script[0].1, ModelEvent::ThinkingDelta(_)));
        assert!(text_of(&script).starts_with("Let me count"));
        assert!(script.iter().any(|(_, e)| matches!(e,
            ModelEvent::ToolCallEnd { name, arguments: Ok(_), .. } if name == COUNT_CHARACTERS)));
        assert_eq!(
            script.last().map(|(_, e)| e.clone()),
            Some(ModelEvent::Finished {
                reason: FinishReason::ToolCalls
            })
        );
    }

    #[test]
    fn demo_searches_knowledge_when_offered_and_quotes_the_best_passage() {
        let tools = [COUNT_CHARACTERS, SEARCH_KNOWLEDGE];
        let script = demo(0.0)
            .script(
                &prompt("How many holidays do we get?", &tools, None),
                &NoPictures,
            )
            .expect("script");
        assert!(script.iter().any(|(_, e)| matches!(e,
            ModelEvent::ToolCallEnd { name, arguments: Ok(arguments), .. }
                if name == SEARCH_KNOWLEDGE
                    && arguments["query"] == "How many holidays do we get?")));
        let found = portal_core::sources::write(
            "holidays",
            &[portal_core::sources::Source {
                reference: "knowledge:12".into(),
                document: "holidays & leave.md".into(),
                collection: "handbook".into(),
                page: Some(3),
                section: Some("Holidays".into()),
                text: "Everyone takes twenty-five days\nof leave a year.".into(),
            }],
        );
        let answered = demo(0.0)
            .script(
                &prompt("How many holidays do we get?", &tools, Some(&found)),
                &NoPictures,
            )
            .expect("script");
        assert!(
            text_of(&answered).starts_with(
                "I searched the organisation's documents. “holidays & leave.md”, page 3 says: \
                 “Everyone takes twenty-five days of leave a year.” [knowledge:12]"
            ),
            "{}",
            text_of(&answered)
        );
    }

    #[test]
    fn demo_asks_or_publishes_when_told_to() {
        let tools = [COUNT_CHARACTERS, ASK_USER, PUBLISH_NOTE];
        for (message, tool) in [
            ("please clarify this", ASK_USER),
            ("publish a note", PUBLISH_NOTE),
        ] {
            let script = demo(0.0)
                .script(&prompt(message, &tools, None), &NoPictures)
                .expect("script");
            assert!(script.iter().any(|(_, e)| matches!(e,
                ModelEvent::ToolCallEnd { name, .. } if name == tool)));
        }
    }

    #[test]
    fn demo_calls_the_offered_tool_a_message_names() {
        let tools = [
            COUNT_CHARACTERS,
            "everything__get-sum",
            "files__read_text_file",
        ];
        for (message, name, arguments) in [
            (
                r#"use get-sum with {"a":1,"b":2}"#,
                "everything__get-sum",
                json!({"a": 1, "b": 2}),
            ),
            (
                r#"Please use files__read_text_file with {"path": "/tmp/a b.txt"} now"#,
                "files__read_text_file",
                json!({"path": "/tmp/a b.txt"}),
            ),
            ("use get-sum", "everything__get-sum", json!({})),
            ("use get-sum with [1, 2]", "everything__get-sum", json!({})),
            (
                "because get-sum",
                COUNT_CHARACTERS,
                json!({ "text": "“because get-sum”" }),
            ),
            (
                "use sum with {}",
                COUNT_CHARACTERS,
                json!({ "text": "“use sum with {}”" }),
            ),
        ] {
            let script = demo(0.0)
                .script(&prompt(message, &tools, None), &NoPictures)
                .expect("script");
            let called = script.iter().find_map(|(_, e)| match e {
                ModelEvent::ToolCallEnd {
                    name, arguments, ..
                } => Some((name.clone(), arguments.clone().expect("arguments"))),
                _ => None,
            });
            assert_eq!(called, Some((name.to_string(), arguments)), "{message}");
        }
    }

    #[test]
    fn demo_publishes_two_notes_one_approval_at_a_time() {
        let message = "Please publish two notes on the herons";
        let mut p = prompt(message, &[COUNT_CHARACTERS, PUBLISH_NOTE], None);
        let called = |script: &[Step]| {
            script.iter().find_map(|(_, e)| match e {
                ModelEvent::ToolCallEnd {
                    name,
                    arguments: Ok(arguments),
                    ..
                } => Some((
                    name.clone(),
                    arguments["title"].as_str().map(str::to_string),
                )),
                _ => None,
            })
        };
        let answered = |p: &mut Prompt, id: &str| {
            let mut call = Entry::new(Role::Assistant, Layer::NewMessage);
            call.parts.push(Part::Call(portal_core::prompt::Call {
                id: id.into(),
                name: PUBLISH_NOTE.into(),
                arguments: json!({}),
            }));
            let mut tool = Entry::new(Role::Tool, Layer::NewMessage);
            tool.parts.push(Part::Answer(Answer {
                call_id: id.into(),
                content: "Published the note (demo: nowhere).".into(),
                is_error: false,
                pictures: Vec::new(),
            }));
            p.entries.extend([call, tool]);
        };
        let first = demo(0.0).script(&p, &NoPictures).expect("script");
        assert_eq!(
            called(&first),
            Some((
                PUBLISH_NOTE.to_string(),
                Some("“Please publish two notes on the herons” (1 of 2)".to_string())
            ))
        );
        answered(&mut p, "call_1");
        let second = demo(0.0).script(&p, &NoPictures).expect("script");
        assert_eq!(
            called(&second),
            Some((
                PUBLISH_NOTE.to_string(),
                Some("“Please publish two notes on the herons” (2 of 2)".to_string())
            ))
        );
        answered(&mut p, "call_2");
        let last = demo(0.0).script(&p, &NoPictures).expect("script");
        assert_eq!(called(&last), None, "two notes, then the answer");
        assert!(text_of(&last).starts_with("The tool answered: Published"));
    }

    /// A picture attached to a prompt: its id, name, size sent and size stored.
    type AttachedPicture<'a> = (&'a str, &'a str, (u32, u32), (u32, u32));

    /// A prompt whose new message carries `documents` (id, name) as manifests and `pictures`
    /// (id, name, sent size, stored size) as captions and picture parts, with the calls the turn
    /// made so far, each answered.
    fn attached_prompt(
        message: &str,
        documents: &[(&str, &str)],
        pictures: &[AttachedPicture],
        calls: &[(&str, serde_json::Value, &str)],
    ) -> Prompt {
        let tools = [
            COUNT_CHARACTERS,
            PUBLISH_NOTE,
            READ_DOCUMENT,
            "everything__get-sum",
        ];
        let mut p = prompt(message, &tools, None);
        for (id, name) in documents {
            p.entries[0].parts.push(Part::Text {
                text: format!(
                    "<document id=\"{id}\" name=\"{name}\" type=\"application/pdf\">\n\
                     Reading: finished, 1 page\nText:\nHerons.\n</document>"
                ),
            });
        }
        for (id, name, (width, height), (stored_width, stored_height)) in pictures {
            let reduced = (width, height) != (stored_width, stored_height);
            let from = if reduced {
                format!(" reduced-from=\"{stored_width}×{stored_height}\"")
            } else {
                String::new()
            };
            p.entries[0].parts.push(Part::Text {
                text: format!(
                    "<picture id=\"{id}\" name=\"{name}\" size=\"{width}×{height}\"{from}/>"
                ),
            });
            p.entries[0].parts.push(Part::Picture {
                picture: portal_core::attachment::PictureRef {
                    attachment_id: (*id).into(),
                    media_type: "image/png".into(),
                    width: *width,
                    height: *height,
                    reduced,
                },
            });
        }
        for (i, (name, arguments, content)) in calls.iter().enumerate() {
            let id = format!("call_{i}");
            let mut call = Entry::new(Role::Assistant, Layer::NewMessage);
            call.parts.push(Part::Call(portal_core::prompt::Call {
                id: id.clone(),
                name: (*name).into(),
                arguments: arguments.clone(),
            }));
            let mut tool = Entry::new(Role::Tool, Layer::NewMessage);
            tool.parts.push(Part::Answer(Answer {
                call_id: id,
                content: (*content).into(),
                is_error: false,
                pictures: Vec::new(),
            }));
            p.entries.extend([call, tool]);
        }
        p
    }

    /// What the demo does next: the call it makes, or the opening paragraphs of its answer.
    #[derive(Debug, PartialEq)]
    enum Next {
        Call(String, serde_json::Value),
        Answer(Vec<String>),
    }

    fn next(prompt: &Prompt, pictures: &dyn PictureSource) -> Next {
        let script = demo(0.0).script(prompt, pictures).expect("script");
        let call = script.iter().find_map(|(_, e)| match e {
            ModelEvent::ToolCallEnd {
                name, arguments, ..
            } => Some(Next::Call(
                name.clone(),
                arguments.clone().expect("arguments"),
            )),
            _ => None,
        });
        call.unwrap_or_else(|| {
            let text = text_of(&script);
            let opening = text
                .split("\n\n")
                .take_while(|p| !p.starts_with("Here is a short tour"))
                .map(str::to_string)
                .collect();
            Next::Answer(opening)
        })
    }

    fn read(id: &str) -> serde_json::Value {
        json!({ "document_id": id })
    }

    /// Issue 48: with an attached PDF and a picture and a message asking what they say, the demo
    /// counted characters. Rules A3 and A4: it reads each document with read_document, then
    /// quotes what it read and says what the picture path handed it.
    #[test]
    fn a3_a4_the_demo_reads_attached_documents_and_looks_at_pictures() {
        let report = r#"<document id="att_1" name="report.pdf" characters="0–88 of 88">
Herons nest in colonies near water. The grey heron is the largest of them, at a metre tall.
</document>
This is the end of the document."#;
        let notes = "<document id=\"att_2\" name=\"notes &quot;b&quot;.md\" characters=\"0–0 of 0\">\n\n</document>\nThe document has no text.";
        let read_report = "I read “report.pdf” with read_document. It says: “Herons nest in colonies \
                           near water. The grey heron is the largest of them, at a metre tall.”";
        let looked = "I looked at the picture “heron.png”: it reached me as image/png of 64×48 \
                      pixels, reduced from 640×480, 6 bytes. As a demo I cannot tell what it \
                      shows; a model that can see would describe it here.";
        let pictures: std::collections::HashMap<String, EncodedPicture> = [(
            "att_3".to_string(),
            EncodedPicture {
                media_type: "image/png".into(),
                base64: "AAECAwQF".into(),
            },
        )]
        .into();
        let report_pdf = [("att_1", "report.pdf")];
        let both = [("att_1", "report.pdf"), ("att_2", "notes \"b\".md")];
        let heron = [("att_3", "heron.png", (64, 48), (640, 480))];
        for (message, documents, attached, calls, expected) in [
            (
                "What do these say?",
                &report_pdf[..],
                &heron[..],
                vec![],
                Next::Call(READ_DOCUMENT.into(), read("att_1")),
            ),
            (
                "What do these say?",
                &report_pdf[..],
                &heron[..],
                vec![(READ_DOCUMENT, read("att_1"), report)],
                Next::Answer(vec![read_report.into(), looked.into()]),
            ),
            (
                "Summarise them",
                &both[..],
                &[][..],
                vec![(READ_DOCUMENT, read("att_1"), report)],
                Next::Call(READ_DOCUMENT.into(), read("att_2")),
            ),
            (
                "Summarise them",
                &both[..],
                &[][..],
                vec![
                    (READ_DOCUMENT, read("att_1"), report),
                    (READ_DOCUMENT, read("att_2"), notes),
                ],
                Next::Answer(vec![
                    read_report.into(),
                    "I read “notes \"b\".md” with read_document; it has no text I can quote."
                        .into(),
                ]),
            ),
            (
                "What is in it?",
                &[][..],
                &heron[..],
                vec![],
                Next::Answer(vec![looked.into()]),
            ),
            // A message that names a tool is done as it asks.
            (
                r#"use get-sum with {"a": 2}"#,
                &report_pdf[..],
                &[][..],
                vec![],
                Next::Call("everything__get-sum".into(), json!({"a": 2})),
            ),
            (
                "publish this",
                &report_pdf[..],
                &[][..],
                vec![],
                Next::Call(
                    PUBLISH_NOTE.into(),
                    json!({"title": "“publish this”", "text": "A note on “publish this” from the demo model 📝."}),
                ),
            ),
        ] {
            let p = attached_prompt(message, documents, attached, &calls);
            assert_eq!(next(&p, &pictures), expected, "{message} after {calls:?}");
        }
    }

    /// Rule A4: a picture the host could not load is said to be unseen, not described.
    #[test]
    fn a4_a_picture_without_bytes_is_said_to_be_unseen() {
        let p = attached_prompt(
            "What is in it?",
            &[],
            &[("att_3", "heron.png", (64, 48), (64, 48))],
            &[],
        );
        assert_eq!(
            next(&p, &NoPictures),
            Next::Answer(vec![
                "The picture “heron.png” (64×48) could not be loaded, so I did not see it.".into()
            ])
        );
    }

    #[test]
    fn demo_answers_after_the_tool_in_hard_clusters_and_uneven_chunks() {
        let script = demo(1.0)
            .script(
                &prompt(
                    "tell me about scripts",
                    &[COUNT_CHARACTERS],
                    Some("21 characters"),
                ),
                &NoPictures,
            )
            .expect("script");
        let text = text_of(&script);
        assert!(text.starts_with("The tool answered: 21 characters"));
        for hard in ["👩🏽‍💻", "👨‍👩‍👧‍👦", "🇯🇵", "e\u{301}", "日本語", "ภาษาไทย"]
        {
            assert!(text.contains(hard), "demo text holds {hard}");
        }
        let sizes: std::collections::BTreeSet<usize> = script
            .iter()
            .filter_map(|(_, e)| match e {
                ModelEvent::TextDelta(t) => Some(t.chars().count()),
                _ => None,
            })
            .collect();
        assert!(sizes.len() > 5, "chunks are uneven: {sizes:?}");
        assert!(
            script
                .iter()
                .any(|(pause, e)| *pause >= Duration::from_secs(1)
                    && matches!(e, ModelEvent::TextDelta(t) if t == RELEASED_SENTENCE)),
            "a whole sentence is released after a pause"
        );
        assert!(
            script
                .iter()
                .any(|(_, e)| matches!(e, ModelEvent::Usage { .. }))
        );
    }

    #[test]
    fn demo_without_tools_answers_at_once() {
        let script = demo(0.0)
            .script(&prompt("hi", &[], None), &NoPictures)
            .expect("script");
        assert!(text_of(&script).contains("👨‍👩‍👧‍👦"));
        assert!(
            !script
                .iter()
                .any(|(_, e)| matches!(e, ModelEvent::ToolCallStart { .. }))
        );
    }

    /// Issue 32: the demo's reply named the document's manifest (`“<document id=…”`).
    #[test]
    fn an_attached_documents_manifest_is_not_taken_for_the_message() {
        let mut with_file = prompt("Summarise this", &[], None);
        with_file.entries[0].parts.push(Part::Text {
            text: "<document id=\"att_1\" name=\"notes.md\" type=\"text/markdown\">\nReady\n</document>"
                .into(),
        });
        assert_eq!(latest_user_text(&with_file), "Summarise this");
        let script = demo(0.0)
            .script(&with_file, &NoPictures)
            .expect("an answer");
        assert!(
            !text_of(&script).contains("<document"),
            "{}",
            text_of(&script)
        );
    }

    #[test]
    fn a_summary_merged_into_the_new_message_is_not_taken_for_it() {
        let mut merged = prompt("Now the Porto budget", &[PUBLISH_NOTE], None);
        merged.entries[0].parts.insert(
            0,
            Part::Text {
                text: format!("[{SUMMARY_NOTE} (turns 1–3).]\n\nPlease publish a note."),
            },
        );
        assert_eq!(latest_user_text(&merged), "Now the Porto budget");
        let script = demo(0.0).script(&merged, &NoPictures).expect("an answer");
        assert!(
            !script
                .iter()
                .any(|(_, event)| matches!(event, ModelEvent::ToolCallStart { .. })),
            "the summary's old request to publish is not acted on again"
        );
    }

    #[test]
    fn c2_a_prompt_larger_than_the_window_is_an_overflow() {
        let small = DemoModel::new(
            0.0,
            ModelCapabilities {
                context_window: 50,
                ..capabilities()
            },
        );
        let refused = small.script(&prompt(&"budget ".repeat(200), &[], None), &NoPictures);
        assert!(
            matches!(refused, Err(ModelError::ContextOverflow { message }) if message.contains("window of 50 tokens"))
        );
    }

    #[test]
    fn c2_demo_overflow_is_the_one_overflow_kind() {
        let mut replaying = prompt("overflow please", &[], None);
        let mut earlier = Entry::new(Role::User, Layer::Memory);
        earlier.parts.push(Part::Text {
            text: "An earlier message".into(),
        });
        replaying.entries.insert(0, earlier);
        let refused = demo(0.0).script(&replaying, &NoPictures);
        assert!(matches!(refused, Err(ModelError::ContextOverflow { .. })));
    }

    #[test]
    fn demo_overflow_in_a_new_conversation_is_answered() {
        // Nothing is there to compact, so an overflow could only fail the turn.
        let answered = demo(0.0).script(&prompt("overflow please", &[], None), &NoPictures);
        assert!(answered.is_ok());
    }

    #[test]
    fn demo_pace_zero_has_no_pauses() {
        let script = demo(0.0)
            .script(&prompt("x", &[COUNT_CHARACTERS], Some("1")), &NoPictures)
            .expect("script");
        assert!(script.iter().all(|(pause, _)| pause.is_zero()));
    }
}
