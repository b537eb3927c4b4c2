//! A `tools/call` result as the tool result the model reads: its content blocks as text, each
//! kind said plainly, held to the result limit. A result the server marks `isError` is a failed
//! call.

use portal_core::tools::ToolOutput;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

use super::McpLimits;
use super::listing::cut;

/// The model's text for `result`, at most `max_result_chars` characters, saying what was cut.
pub fn output(result: CallToolResult, limits: &McpLimits) -> ToolOutput {
    let mut parts: Vec<String> = result.content.iter().map(block).collect();
    if let Some(structured) = &result.structured_content {
        let text = structured.to_string();
        // Servers that send structured content usually send its text too; once is enough.
        if !parts.iter().any(|p| p == &text) {
            parts.push(format!("Structured content: {text}"));
        }
    }
    let text = if parts.is_empty() {
        "(the tool answered with no content)".to_string()
    } else {
        parts.join("\n\n")
    };
    let text = cut(&text, limits.max_result_chars);
    if result.is_error == Some(true) {
        ToolOutput::error(text)
    } else {
        ToolOutput::ok(text)
    }
}

fn block(content: &ContentBlock) -> String {
    match content {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => format!(
            "[picture: {}, {} bytes; the portal does not show a tool's pictures to the model]",
            image.mime_type,
            base64_len(&image.data)
        ),
        ContentBlock::Audio(audio) => format!(
            "[audio: {}, {} bytes; the portal does not pass a tool's audio on]",
            audio.mime_type,
            base64_len(&audio.data)
        ),
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                format!("[resource {uri}]\n{text}")
            }
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => format!(
                "[resource {uri}: {}, {} bytes of binary content, not shown]",
                mime_type.as_deref().unwrap_or("unknown type"),
                base64_len(blob)
            ),
            _ => "[a resource of a kind the portal does not read]".to_string(),
        },
        ContentBlock::ResourceLink(link) => {
            let mut text = format!("[resource link {}: {}", link.uri, link.name);
            if let Some(description) = &link.description {
                text.push_str(&format!(" ({description})"));
            }
            text.push(']');
            text
        }
        _ => "[content of a kind the portal does not read]".to_string(),
    }
}

/// The bytes base64 text of this length stands for.
fn base64_len(data: &str) -> usize {
    data.len() / 4 * 3
}
