//! Claude's `conversations.json`: a list of conversations, each its `chat_messages` in order,
//! from the human and the assistant.

use portal_core::block::Block;
use serde::Deserialize;

use super::foreign::{Missing, Turns};
use super::{ImportError, Imported, Source, clean_title, each_conversation};

pub(super) fn read(value: serde_json::Value) -> Result<Vec<Imported>, ImportError> {
    each_conversation(value, Source::Claude, conversation)
}

#[derive(Debug, Deserialize)]
struct Conversation {
    name: Option<String>,
    chat_messages: Vec<ChatMessage>,
}

#[derive(Debug, Deserialize)]
struct ChatMessage {
    sender: String,
    text: Option<String>,
    content: Option<Vec<Item>>,
    attachments: Option<Vec<Attachment>>,
    files: Option<Vec<FileRef>>,
}

#[derive(Debug, Deserialize)]
struct Item {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
    thinking: Option<String>,
    name: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Attachment {
    file_name: Option<String>,
    extracted_content: Option<String>,
}

#[derive(Debug, Deserialize)]
struct FileRef {
    file_name: Option<String>,
}

fn conversation(item: serde_json::Value) -> Result<Imported, String> {
    let Some(object) = item.as_object() else {
        return Err("it is not a JSON object".into());
    };
    if !object.contains_key("chat_messages") {
        return Err(
            "it has no `chat_messages`, where Claude keeps a conversation's messages".into(),
        );
    }
    let conversation: Conversation = serde_json::from_value(item)
        .map_err(|e| format!("its messages are not laid out as Claude writes them ({e})"))?;
    let mut turns = Turns::default();
    for message in &conversation.chat_messages {
        match message.sender.as_str() {
            "human" => human(message, &mut turns),
            "assistant" => assistant(message, &mut turns),
            other => turns.unknown(&format!("{other} message")),
        }
    }
    Ok(turns.finish(conversation.name.as_deref().unwrap_or_default()))
}

/// The message's content items, or none when it has only its `text`.
fn items(message: &ChatMessage) -> Option<&[Item]> {
    message.content.as_deref().filter(|items| !items.is_empty())
}

/// Opens a turn with the human's message, its attached texts fenced after what they wrote.
fn human(message: &ChatMessage, turns: &mut Turns) {
    let mut texts = Vec::new();
    let mut missing = Vec::new();
    match items(message) {
        Some(items) => {
            for item in items {
                match item.kind.as_str() {
                    "text" => texts.extend(item.text.clone()),
                    "tool_use" => turns.tool_call(item.name.as_deref()),
                    "tool_result" => turns.tool_result(item.name.as_deref()),
                    kind => missing.push(Missing::Part(kind.to_string())),
                }
            }
        }
        None => texts.extend(message.text.clone()),
    }
    texts.retain(|text| !text.trim().is_empty());
    for attachment in message.attachments.iter().flatten() {
        let name = file_name(attachment.file_name.as_deref());
        match &attachment.extracted_content {
            Some(content) => texts.push(attached(&name, content)),
            None => missing.push(Missing::File(name)),
        }
    }
    for file in message.files.iter().flatten() {
        missing.push(Missing::File(file_name(file.file_name.as_deref())));
    }
    turns.user(&texts.join("\n\n"), &missing);
}

/// Adds the assistant's message to the open turn's reply.
fn assistant(message: &ChatMessage, turns: &mut Turns) {
    let Some(items) = items(message) else {
        turns.reply([Block::text(message.text.clone().unwrap_or_default())]);
        return;
    };
    let mut blocks = Vec::new();
    for item in items {
        match item.kind.as_str() {
            "text" => blocks.push(Block::text(item.text.clone().unwrap_or_default())),
            "thinking" => blocks.push(Block::Thinking {
                text: item.thinking.clone().unwrap_or_default(),
            }),
            "tool_use" => turns.tool_call(item.name.as_deref()),
            "tool_result" => turns.tool_result(item.name.as_deref()),
            kind => turns.unknown(kind),
        }
    }
    turns.reply(blocks);
}

/// A file's name as notes and headings show it.
fn file_name(name: Option<&str>) -> String {
    let name = clean_title(name.unwrap_or_default());
    if name.is_empty() {
        "without a name".to_string()
    } else {
        name
    }
}

/// An attached file's text under a heading naming it, fenced by more backticks than any run
/// inside it, so the file cannot close the fence.
fn attached(name: &str, content: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in content.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    format!(
        "[Attached file {name}]\n{fence}\n{}\n{fence}",
        content.trim_end_matches(['\n', '\r'])
    )
}
