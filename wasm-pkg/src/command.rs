//! `parseCommand`: what the composer's text asks for (rules S1, C6).

use wasm_bindgen::prelude::*;

use crate::convert;

#[wasm_bindgen(typescript_custom_section)]
const COMMAND_TYPES: &'static str = r#"
/**
 * The composer's text, parsed. A message selects skills with leading `/slug` tokens (a slug is
 * `[a-z0-9][a-z0-9-]*`; parsing stops at the first token that is not one, repeated slugs count
 * once, in the order first written). `/compact [instructions]` is the compaction command, never a
 * skill; its instructions are trimmed, `null` when there are none.
 */
export type ParsedCommand =
  | { kind: "message"; skills: string[]; text: string }
  | { kind: "compact"; instructions: string | null };
"#;

/// Parses the composer's text: `/compact [instructions]`, or a message with the skills its
/// leading `/slug` tokens select and the text after them. Never throws: text without slugs is a
/// message selecting no skills.
#[wasm_bindgen(js_name = parseCommand, unchecked_return_type = "ParsedCommand")]
pub fn parse_command(text: &str) -> Result<JsValue, JsValue> {
    convert::to_js(&portal_core::skills::parse_command(text))
}
