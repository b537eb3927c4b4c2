//! A server's `tools/list` answer made into the tools the portal offers: each under a name no
//! other tool can have, its description and schema held to limits, and what it was not offered
//! for, said.

use rmcp::model::Tool as ServerTool;
use serde_json::Value;

use super::McpLimits;

pub use portal_core::tools::SERVER_SEPARATOR as SEPARATOR;

/// The longest tool name model providers take.
const MAX_NAME: usize = 64;

/// A server's tools as the portal offers them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Listing {
    pub tools: Vec<Listed>,
    /// The tools not offered, each with why.
    pub skipped: Vec<String>,
}

/// One tool of a server, as offered.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    /// Its name on the server.
    pub name: String,
    /// The name the model calls it by: `<server>__<name>`.
    pub offered_as: String,
    /// Its description, cut to the limit.
    pub description: String,
    pub parameters: Value,
    /// Whether its annotations say it changes nothing, or nothing destructively.
    pub safe: bool,
}

/// The name `tool` of `server` is offered under.
pub fn offered_name(server: &str, tool: &str) -> String {
    format!("{server}{SEPARATOR}{tool}")
}

/// The tools `server` listed, as offered; `more` says it had more than were read.
pub fn listing(server: &str, tools: Vec<ServerTool>, more: bool, limits: &McpLimits) -> Listing {
    let mut listing = Listing::default();
    for tool in tools {
        let name = tool.name.to_string();
        let offered_as = offered_name(server, &name);
        if listing.tools.len() >= limits.max_tools {
            listing.skipped.push(format!(
                "`{}`: the portal offers at most {} tools of a server",
                shown(&name),
                limits.max_tools
            ));
            continue;
        }
        if !usable_name(&offered_as) {
            listing.skipped.push(format!(
                "`{}`: a tool name must be letters, digits, `_` and `-`, at most {} characters \
                 with the server's id",
                shown(&name),
                MAX_NAME
            ));
            continue;
        }
        if listing.tools.iter().any(|t| t.name == name) {
            listing
                .skipped
                .push(format!("`{name}`: the server lists it twice"));
            continue;
        }
        let parameters = Value::Object(tool.input_schema.as_ref().clone());
        let schema_bytes = serde_json::to_vec(&parameters).map_or(usize::MAX, |b| b.len());
        if schema_bytes > limits.max_schema_bytes {
            listing.skipped.push(format!(
                "`{name}`: its argument schema is {schema_bytes} bytes, more than the {} the \
                 portal offers",
                limits.max_schema_bytes
            ));
            continue;
        }
        let description = tool.description.as_deref().unwrap_or_default();
        let annotations = tool.annotations.as_ref();
        let read_only = annotations.and_then(|a| a.read_only_hint) == Some(true);
        let not_destructive = annotations.and_then(|a| a.destructive_hint) == Some(false);
        listing.tools.push(Listed {
            name,
            offered_as,
            description: cut(description, limits.max_description_chars),
            parameters,
            safe: read_only || not_destructive,
        });
    }
    if more {
        listing.skipped.push(format!(
            "the server has more tools than the {} the portal reads",
            limits.max_tools
        ));
    }
    listing
}

fn usable_name(name: &str) -> bool {
    name.len() <= MAX_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// A name as an error shows it: at most 80 characters of it.
fn shown(name: &str) -> String {
    cut(name, 80)
}

/// `text` cut to `max` characters, saying it was cut.
pub fn cut(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_string();
    }
    let kept: String = text.chars().take(max).collect();
    format!("{kept}… (cut: {total} characters, the portal keeps {max})")
}
