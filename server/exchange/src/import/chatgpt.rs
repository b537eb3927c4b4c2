//! ChatGPT's `conversations.json`: a list of conversations, each a `mapping` of message nodes
//! linked by `parent` into a tree whose branches are a message's edits and an answer's
//! regenerations. The branch the conversation was showing is imported, ending at `current_node`.

use std::collections::{BTreeMap, HashMap, HashSet};

use portal_core::block::Block;
use serde::Deserialize;

use super::foreign::{Missing, Turns};
use super::{ImportError, Imported, Source, each_conversation};

pub(super) fn read(value: serde_json::Value) -> Result<Vec<Imported>, ImportError> {
    each_conversation(value, Source::ChatGpt, conversation)
}

#[derive(Debug, Deserialize)]
struct Conversation {
    title: Option<String>,
    // A BTreeMap, so that a choice among equal branches does not change from run to run.
    mapping: BTreeMap<String, Node>,
    current_node: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Node {
    message: Option<ChatMessage>,
    parent: Option<String>,
    children: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
struct ChatMessage {
    author: Author,
    create_time: Option<f64>,
    content: Content,
    recipient: Option<String>,
    metadata: Option<Metadata>,
}

#[derive(Debug, Deserialize)]
struct Author {
    role: String,
    name: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Content {
    content_type: String,
    parts: Option<Vec<serde_json::Value>>,
    thoughts: Option<Vec<Thought>>,
}

#[derive(Debug, Deserialize)]
struct Thought {
    content: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Metadata {
    is_visually_hidden_from_conversation: Option<bool>,
    attachments: Option<Vec<FileRef>>,
}

#[derive(Debug, Deserialize)]
struct FileRef {
    id: Option<String>,
    name: Option<String>,
}

fn conversation(item: serde_json::Value) -> Result<Imported, String> {
    let Some(object) = item.as_object() else {
        return Err("it is not a JSON object".into());
    };
    if !object.contains_key("mapping") {
        return Err("it has no `mapping`, where ChatGPT keeps a conversation's messages".into());
    }
    let conversation: Conversation = serde_json::from_value(item)
        .map_err(|e| format!("its messages are not laid out as ChatGPT writes them ({e})"))?;
    let mapping = &conversation.mapping;

    let mut turns = Turns::default();
    let shown = match conversation
        .current_node
        .as_deref()
        .filter(|id| mapping.contains_key(*id))
    {
        Some(current) => current,
        None => {
            let Some(latest) = latest_leaf(mapping) else {
                if !mapping.is_empty() {
                    turns.note(
                        "The export's messages link back to each other in a loop with no last \
                         message, so none of them could be put in order."
                            .into(),
                    );
                }
                return Ok(turns.finish(conversation.title.as_deref().unwrap_or_default()));
            };
            turns.note(
                "The export does not say which branch the conversation was showing; the one \
                 ending with the latest message was imported."
                    .into(),
            );
            latest
        }
    };
    let (branch, looped) = branch(mapping, shown);
    if looped {
        turns.note(
            "The export's messages link back to each other in a loop; the conversation was \
             imported from where the loop closes."
                .into(),
        );
    }
    let on_branch: HashSet<&str> = branch.iter().copied().collect();
    let elsewhere = mapping
        .iter()
        .filter(|(id, node)| {
            !on_branch.contains(id.as_str()) && node.message.as_ref().is_some_and(is_shown)
        })
        .count();
    if elsewhere > 0 {
        turns.note(format!(
            "{elsewhere} {} on other branches (earlier versions of edited messages and regenerated answers) {} left out: Portal imports the branch the conversation was showing.",
            if elsewhere == 1 { "message" } else { "messages" },
            if elsewhere == 1 { "was" } else { "were" }
        ));
    }

    let mut custom_instructions = false;
    for message in branch
        .iter()
        .filter_map(|id| mapping.get(*id)?.message.as_ref())
    {
        if message.content.content_type == "user_editable_context" {
            custom_instructions = true;
        } else if is_shown(message) {
            read_message(message, &mut turns);
        }
    }
    if custom_instructions {
        turns.note(
            "The custom instructions ChatGPT was given were left out: they were settings, not \
             part of what was said."
                .into(),
        );
    }
    Ok(turns.finish(conversation.title.as_deref().unwrap_or_default()))
}

/// Whether `message` was shown in the conversation: not the system's, not hidden, not custom
/// instructions.
fn is_shown(message: &ChatMessage) -> bool {
    let hidden = message
        .metadata
        .as_ref()
        .and_then(|m| m.is_visually_hidden_from_conversation)
        .unwrap_or(false);
    !hidden
        && message.author.role != "system"
        && message.content.content_type != "user_editable_context"
}

/// The node ids from the root down to `end`, following `parent` links up from `end`; and whether
/// the links looped, which only a broken or made-up file does.
fn branch<'a>(mapping: &'a BTreeMap<String, Node>, end: &'a str) -> (Vec<&'a str>, bool) {
    let mut ids = Vec::new();
    let mut seen = HashSet::new();
    let mut at = Some(end);
    let mut looped = false;
    while let Some(id) = at {
        let Some(node) = mapping.get(id) else {
            break;
        };
        if !seen.insert(id) {
            looped = true;
            break;
        }
        ids.push(id);
        at = node.parent.as_deref();
    }
    ids.reverse();
    (ids, looped)
}

/// The leaf whose message was written last, or, when no leaf's message has a time, the leaf
/// deepest in the tree; `None` when the mapping has no leaf.
fn latest_leaf(mapping: &BTreeMap<String, Node>) -> Option<&str> {
    let depths = depths(mapping);
    mapping
        .iter()
        .filter(|(_, node)| {
            !node
                .children
                .iter()
                .flatten()
                .any(|child| mapping.contains_key(child))
        })
        .map(|(id, node)| {
            let time = node.message.as_ref().and_then(|m| m.create_time);
            let depth = depths.get(id.as_str()).copied().unwrap_or(0);
            (id.as_str(), time, depth)
        })
        .max_by(|(_, time_a, depth_a), (_, time_b, depth_b)| {
            let time = match (time_a, time_b) {
                (Some(a), Some(b)) => a.total_cmp(b),
                (a, b) => a.is_some().cmp(&b.is_some()),
            };
            time.then(depth_a.cmp(depth_b))
        })
        .map(|(id, _, _)| id)
}

/// Each node's number of nodes from its root down to it, counted once per node: a walk up stops
/// at a node counted already, so the whole mapping takes linear time however it branches.
fn depths(mapping: &BTreeMap<String, Node>) -> HashMap<&str, usize> {
    let mut depths: HashMap<&str, usize> = HashMap::new();
    for start in mapping.keys() {
        let mut path = Vec::new();
        let mut on_path = HashSet::new();
        let mut at = Some(start.as_str());
        let mut base = 0;
        while let Some(id) = at {
            if let Some(depth) = depths.get(id) {
                base = *depth;
                break;
            }
            let Some(node) = mapping.get(id) else {
                break;
            };
            if !on_path.insert(id) {
                break;
            }
            path.push(id);
            at = node.parent.as_deref();
        }
        for id in path.into_iter().rev() {
            base += 1;
            depths.insert(id, base);
        }
    }
    depths
}

/// Reads one shown message on the branch into `turns`.
fn read_message(message: &ChatMessage, turns: &mut Turns) {
    let content_type = message.content.content_type.as_str();
    let to_tool = message
        .recipient
        .as_deref()
        .filter(|recipient| *recipient != "all");
    match message.author.role.as_str() {
        "user" => user(message, turns),
        "tool" => turns.tool_result(message.author.name.as_deref()),
        "assistant" if to_tool.is_some() => turns.tool_call(to_tool),
        "assistant" => match content_type {
            "text" | "multimodal_text" => {
                let mut texts = Vec::new();
                for part in message.content.parts.iter().flatten() {
                    match part {
                        serde_json::Value::String(text) => texts.push(text.as_str()),
                        serde_json::Value::Null => {}
                        other => turns.unknown(&part_kind(other)),
                    }
                }
                turns.reply([Block::text(texts.join("\n\n"))]);
            }
            "thoughts" => {
                let thoughts: Vec<&str> = message
                    .content
                    .thoughts
                    .iter()
                    .flatten()
                    .filter_map(|t| t.content.as_deref())
                    .filter(|t| !t.trim().is_empty())
                    .collect();
                turns.reply([Block::Thinking {
                    text: thoughts.join("\n\n"),
                }]);
            }
            // A recap only says how long the model thought ("Thought for 12 seconds").
            "reasoning_recap" => {}
            other => turns.unknown(other),
        },
        other => turns.unknown(&format!("{other} message")),
    }
}

/// Opens a turn with the user's message: its text parts, and what else it held named.
fn user(message: &ChatMessage, turns: &mut Turns) {
    let mut texts = Vec::new();
    let mut missing = Vec::new();
    let mut pictures = HashSet::new();
    match message.content.content_type.as_str() {
        "text" | "multimodal_text" => {
            for part in message.content.parts.iter().flatten() {
                match part {
                    serde_json::Value::String(text) => texts.push(text.as_str()),
                    serde_json::Value::Null => {}
                    other => match part_kind(other).as_str() {
                        "image_asset_pointer" => {
                            missing.push(Missing::Picture);
                            if let Some(pointer) =
                                other.get("asset_pointer").and_then(|p| p.as_str())
                            {
                                pictures.insert(file_id(pointer));
                            }
                        }
                        "audio_transcription" => {
                            texts.extend(other.get("text").and_then(|t| t.as_str()));
                        }
                        "audio_asset_pointer" | "real_time_user_audio_video_asset_pointer" => {
                            missing.push(Missing::Recording);
                        }
                        kind => missing.push(Missing::Part(kind.to_string())),
                    },
                }
            }
        }
        other => missing.push(Missing::Part(other.to_string())),
    }
    // The uploaded files; a picture is listed here as well as among the parts, named by its id.
    let files = message
        .metadata
        .as_ref()
        .and_then(|m| m.attachments.as_ref());
    for file in files.into_iter().flatten() {
        if file.id.as_deref().is_some_and(|id| pictures.contains(id)) {
            continue;
        }
        let name = super::clean_title(file.name.as_deref().unwrap_or_default());
        missing.push(Missing::File(if name.is_empty() {
            "without a name".to_string()
        } else {
            name
        }));
    }
    turns.user(&texts.join("\n\n"), &missing);
}

/// The kind an object part names in its `content_type`.
fn part_kind(part: &serde_json::Value) -> String {
    part.get("content_type")
        .and_then(|kind| kind.as_str())
        .unwrap_or("unnamed")
        .to_string()
}

/// The file id an asset pointer ends with: `file-abc` of `file-service://file-abc`.
fn file_id(pointer: &str) -> &str {
    pointer.rsplit('/').next().unwrap_or(pointer)
}
