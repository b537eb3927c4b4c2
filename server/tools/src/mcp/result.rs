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
    // MCP asks a server that sends structured content to send it as text too: it is read only
    // when no text came with it.
    let has_text = result
        .content
        .iter()
        .any(|c| matches!(c, ContentBlock::Text(_)));
    if let Some(structured) = result.structured_content.as_ref().filter(|_| !has_text) {
        parts.push(format!("Structured content: {structured}"));
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

/// The bytes base64 text stands for.
fn base64_len(data: &str) -> usize {
    let data = data.trim_end();
    let padding = data.bytes().rev().take_while(|&b| b == b'=').count();
    (data.len() / 4 * 3).saturating_sub(padding)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_kind_of_content_reads_as_text() {
        let png = "iVBORw0KGgo=";
        for (result, expected, is_error) in [
            (
                json!({"content": [{"type": "text", "text": "3"}]}),
                "3",
                false,
            ),
            (
                json!({"content": [{"type": "text", "text": "{\"t\":1}"}], "structuredContent": {"t": 1}}),
                "{\"t\":1}",
                false,
            ),
            (
                json!({"content": [], "structuredContent": {"t": 1}}),
                "Structured content: {\"t\":1}",
                false,
            ),
            (
                json!({"content": [{"type": "image", "data": png, "mimeType": "image/png"}]}),
                "[picture: image/png, 8 bytes; the portal does not show a tool's pictures to the model]",
                false,
            ),
            (
                json!({"content": [{"type": "resource", "resource": {"uri": "file:///a.txt", "text": "A"}}]}),
                "[resource file:///a.txt]\nA",
                false,
            ),
            (
                json!({"content": [{"type": "resource", "resource": {"uri": "file:///a.bin", "blob": png, "mimeType": "application/zip"}}]}),
                "[resource file:///a.bin: application/zip, 8 bytes of binary content, not shown]",
                false,
            ),
            (
                json!({"content": [{"type": "resource_link", "uri": "file:///b", "name": "b", "description": "Bee"}]}),
                "[resource link file:///b: b (Bee)]",
                false,
            ),
            (
                json!({"content": [{"type": "text", "text": "no"}], "isError": true}),
                "no",
                true,
            ),
            (
                json!({"content": []}),
                "(the tool answered with no content)",
                false,
            ),
        ] {
            let parsed: CallToolResult = serde_json::from_value(result.clone()).expect("a result");
            let output = output(parsed, &McpLimits::default());
            assert_eq!(output.content, expected, "{result}");
            assert_eq!(output.is_error, is_error, "{result}");
        }
    }
}
