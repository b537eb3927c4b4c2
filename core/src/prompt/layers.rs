//! Layers 1–5 as the system text: each delimited and labelled, under one sentence stating their
//! precedence (rules L1, L2); and the floor's default text.

use serde::{Deserialize, Serialize};

use super::entry::Layer;

/// The sentence that states the layers' precedence (rule L2).
pub const PRECEDENCE: &str = "Where two layers disagree, the later one wins: portal floor, then \
    author instructions, then project instructions, then selected skills, then the skill \
    catalogue.";

/// The portal floor's default text: who the assistant is, how it talks, and the runtime's
/// contract for memory and attachments.
pub const DEFAULT_FLOOR: &str = "You are the assistant of this portal, working for the person \
who writes to you. Answer in the language they write in, plainly and to the point; say what you \
did and what you found, and say so when you are unsure.

Earlier turns come back as short-term memory: your past tool calls with their results cut to a \
few hundred characters, and in older turns only each call's outcome. A cut result or an outcome \
ends in a reference like [ref:call_123]; read the whole result with read_tool_result when you \
need it. A summary note stands for turns that were compacted. Documents attached to messages \
appear as manifests, with the text inline when it is short; read a document's text with \
read_document and search documents with search_attachments.";

/// One layer of the system text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SystemLayer {
    pub layer: Layer,
    pub text: String,
}

/// The system text: the precedence sentence, each layer between labelled tags, then a line on
/// the two layers that follow as messages.
pub(crate) fn system_text(layers: &[SystemLayer]) -> String {
    system_pieces(layers).concat()
}

/// The system text in pieces that join to [`system_text`]: the opening sentence, one piece per
/// layer (between its tags), and the closing line.
pub(crate) fn system_pieces(layers: &[SystemLayer]) -> Vec<String> {
    let mut pieces = vec![format!(
        "These instructions come in numbered layers, each between <layer> tags. {PRECEDENCE}\n"
    )];
    for layer in layers {
        pieces.push(format!(
            "\n<layer number=\"{}\" name=\"{}\">\n{}\n</layer>\n",
            layer.layer.number(),
            layer.layer.label(),
            neutralise_tags(&layer.text)
        ));
    }
    pieces.push(format!(
        "\nThe messages follow as layer {} ({}: earlier turns rebuilt from the transcript) and \
         layer {} ({}: the user's message with its attachments, and your work on it so far).",
        Layer::Memory.number(),
        Layer::Memory.label().to_lowercase(),
        Layer::NewMessage.number(),
        Layer::NewMessage.label().to_lowercase(),
    ));
    pieces
}

/// Layer text with any `<layer` or `</layer` written as text, so no layer's content can open or
/// close a layer.
fn neutralise_tags(text: &str) -> String {
    text.replace("</layer", "&lt;/layer")
        .replace("<layer", "&lt;layer")
}
