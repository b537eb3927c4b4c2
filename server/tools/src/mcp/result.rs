//! A `tools/call` result as the tool result the model reads: its content blocks as text, each
//! kind said plainly, held to the result limit, and its pictures kept as the conversation's
//! attachments, each named in the text where it came. A result the server marks `isError` is a
//! failed call.

use base64::Engine;
use portal_core::block::ToolPicture;
use portal_core::tools::ToolOutput;
use rmcp::model::{CallToolResult, ContentBlock, ImageContent, ResourceContents};

use super::McpLimits;
use super::listing::cut;
use crate::PictureKeeper;

/// The model's text for `result`, at most `max_result_chars` characters, saying what was cut,
/// and the pictures `keeper` kept of it, each named `<tool> picture <n>`.
pub async fn output(
    result: CallToolResult,
    limits: &McpLimits,
    keeper: &dyn PictureKeeper,
    tool: &str,
) -> ToolOutput {
    let mut parts = Vec::with_capacity(result.content.len());
    let mut pictures = Vec::new();
    for content in &result.content {
        parts.push(match content {
            ContentBlock::Image(image) => {
                let filename = format!("{tool} picture {}", pictures.len() + 1);
                picture(image, keeper, filename, &mut pictures).await
            }
            other => block(other),
        });
    }
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
    let output = if result.is_error == Some(true) {
        ToolOutput::error(text)
    } else {
        ToolOutput::ok(text)
    };
    ToolOutput { pictures, ..output }
}

/// Keeps a picture of the result and says where it came: its line once kept, else its type,
/// size and why it was not kept.
async fn picture(
    image: &ImageContent,
    keeper: &dyn PictureKeeper,
    filename: String,
    kept: &mut Vec<ToolPicture>,
) -> String {
    let not_kept = |why: &str| {
        format!(
            "[picture: {}, {} bytes; not kept: {why}]",
            image.mime_type,
            base64_len(&image.data)
        )
    };
    let bytes = match base64::engine::general_purpose::STANDARD.decode(image.data.trim()) {
        Ok(bytes) => bytes,
        Err(_) => return not_kept("its data is not base64"),
    };
    match keeper.keep(filename, bytes).await {
        Ok(picture) => {
            let line = picture.line();
            kept.push(picture);
            line
        }
        Err(why) => not_kept(&why),
    }
}

fn block(content: &ContentBlock) -> String {
    match content {
        ContentBlock::Text(text) => text.text.clone(),
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

    /// Keeps what opens with PNG's signature as a 1×1 picture, and refuses anything else.
    #[derive(Debug)]
    struct KeepsPng;

    impl PictureKeeper for KeepsPng {
        fn keep(&self, filename: String, bytes: Vec<u8>) -> crate::KeepFuture<'_> {
            Box::pin(async move {
                assert_eq!(filename, "srv__tool picture 1");
                if bytes.starts_with(b"\x89PNG") {
                    Ok(ToolPicture {
                        attachment_id: "att_1".into(),
                        media_type: "image/png".into(),
                        width: 1,
                        height: 1,
                    })
                } else {
                    Err("not a PNG, JPEG, GIF or WebP picture".into())
                }
            })
        }
    }

    #[tokio::test]
    async fn each_kind_of_content_reads_as_text_and_pictures_are_kept() {
        let png = "iVBORw0KGgo=";
        for (result, expected, is_error, kept) in [
            (
                json!({"content": [{"type": "text", "text": "3"}]}),
                "3",
                false,
                0,
            ),
            (
                json!({"content": [{"type": "text", "text": "{\"t\":1}"}], "structuredContent": {"t": 1}}),
                "{\"t\":1}",
                false,
                0,
            ),
            (
                json!({"content": [], "structuredContent": {"t": 1}}),
                "Structured content: {\"t\":1}",
                false,
                0,
            ),
            (
                json!({"content": [{"type": "image", "data": png, "mimeType": "image/png"}]}),
                "[picture att_1: image/png, 1×1]",
                false,
                1,
            ),
            (
                json!({"content": [{"type": "image", "data": "PHN2Zz4=", "mimeType": "image/svg+xml"}]}),
                "[picture: image/svg+xml, 5 bytes; not kept: not a PNG, JPEG, GIF or WebP picture]",
                false,
                0,
            ),
            (
                json!({"content": [{"type": "image", "data": "*", "mimeType": "image/png"}]}),
                "[picture: image/png, 0 bytes; not kept: its data is not base64]",
                false,
                0,
            ),
            (
                json!({"content": [{"type": "resource", "resource": {"uri": "file:///a.txt", "text": "A"}}]}),
                "[resource file:///a.txt]\nA",
                false,
                0,
            ),
            (
                json!({"content": [{"type": "resource", "resource": {"uri": "file:///a.bin", "blob": png, "mimeType": "application/zip"}}]}),
                "[resource file:///a.bin: application/zip, 8 bytes of binary content, not shown]",
                false,
                0,
            ),
            (
                json!({"content": [{"type": "resource_link", "uri": "file:///b", "name": "b", "description": "Bee"}]}),
                "[resource link file:///b: b (Bee)]",
                false,
                0,
            ),
            (
                json!({"content": [{"type": "text", "text": "no"}], "isError": true}),
                "no",
                true,
                0,
            ),
            (
                json!({"content": []}),
                "(the tool answered with no content)",
                false,
                0,
            ),
        ] {
            let parsed: CallToolResult = serde_json::from_value(result.clone()).expect("a result");
            let output = output(parsed, &McpLimits::default(), &KeepsPng, "srv__tool").await;
            assert_eq!(output.content, expected, "{result}");
            assert_eq!(output.is_error, is_error, "{result}");
            assert_eq!(output.pictures.len(), kept, "{result}");
        }
    }
}
