//! The models a server offers, read from a TOML file (`portal serve --models FILE`):
//!
//! ```toml
//! default = "demo"
//!
//! [[models]]
//! name = "demo"
//! kind = "demo"
//!
//! [[models]]
//! name = "gpt"
//! kind = "openai"
//! label = "GPT-4.1"
//! tokenizer = "o200k_base"   # optional, any kind: compaction counts tokens exactly (rule C1)
//! base_url = "https://api.openai.com/v1"
//! api_key = { env = "OPENAI_API_KEY" }
//! model = "gpt-4.1"
//! # optional, any kind: every usage row of the model's turns is priced at it
//! price = { currency = "USD", input = 2.00, cached_input = 0.50, output = 8.00 }
//! [models.capabilities]
//! context_window = 1047576
//! max_output_tokens = 32768
//! can_reason = false
//! can_see = true
//! largest_picture = { long_edge = 2048 }
//!
//! [[models]]
//! name = "claude"
//! kind = "anthropic"
//! api_key = { env = "ANTHROPIC_API_KEY" }
//! model = "claude-sonnet-4-5"
//! [models.capabilities]
//! context_window = 200000
//! max_output_tokens = 64000
//! can_reason = true
//! can_see = true
//! largest_picture = { long_edge = 1568, pixels = 1150000 }
//! ```
//!
//! Without a file the server offers the demo model alone. Every model's capabilities (context
//! window, reasoning, vision, largest picture) come from here; the demo model has defaults. A
//! price is in units of its currency per million tokens; a cached input rate left out is the
//! input rate, and a model without a price leaves unpriced usage rows.

use std::path::Path;
use std::sync::Arc;

use portal_core::model::ModelCapabilities;
use portal_core::usage::Price;

use crate::anthropic::{AnthropicConfig, AnthropicModel};
use crate::demo::{self, DemoModel};
use crate::openai::{OpenAiConfig, OpenAiModel};
use crate::tokens::{BpeCounter, Encoding};

use super::{Counted, Model};

/// Why the models file was refused. Each names the model and what to change.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("cannot read the models file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("the models file is not valid TOML: {0}")]
    Toml(String),
    #[error("the models file lists no model; add a [[models]] table with a name and a kind")]
    Empty,
    #[error("model {position} of the models file has no `{field}`; give it one")]
    Missing {
        position: usize,
        field: &'static str,
    },
    #[error("model `{name}` has kind `{kind}`; the kinds are `demo`, `openai` and `anthropic`")]
    Kind { name: String, kind: String },
    #[error("model `{name}` is listed twice; give each model its own name")]
    Duplicate { name: String },
    #[error("model `{name}` is misconfigured: {reason}")]
    Model { name: String, reason: String },
    #[error("the default model `{0}` is not listed; name one of the [[models]] as `default`")]
    Default(String),
}

/// The models a server offers, by name, and the one a conversation gets unless its agent names
/// another.
#[derive(Debug, Clone)]
pub struct ModelRegistry {
    models: Vec<(String, Arc<dyn Model>)>,
    /// Each model's price, in the order of `models`.
    prices: Vec<Option<Price>>,
    default: usize,
}

impl ModelRegistry {
    /// The demo model alone, named `demo`.
    pub fn demo_only(pace: f64) -> Self {
        ModelRegistry {
            models: vec![(
                demo::MODEL.into(),
                Arc::new(DemoModel::new(pace, demo::capabilities())),
            )],
            prices: vec![None],
            default: 0,
        }
    }

    /// The demo model alone with a context window of `window` tokens: a small one lets a few
    /// long messages reach the 85 % at which the agent compacts (rule C1).
    pub fn demo_with_window(pace: f64, window: u64) -> Self {
        ModelRegistry {
            models: vec![(
                demo::MODEL.into(),
                Arc::new(DemoModel::new(
                    pace,
                    ModelCapabilities {
                        context_window: window,
                        ..demo::capabilities()
                    },
                )),
            )],
            prices: vec![None],
            default: 0,
        }
    }

    /// Reads the models file at `path`.
    pub fn load(path: &Path, demo_pace: f64) -> Result<Self, RegistryError> {
        let text = std::fs::read_to_string(path).map_err(|source| RegistryError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_toml(&text, demo_pace, |var| std::env::var(var).ok())
    }

    /// Reads a models file's text, looking API keys named by environment variables up with
    /// `lookup`.
    pub fn from_toml(
        text: &str,
        demo_pace: f64,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, RegistryError> {
        let mut file: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| RegistryError::Toml(e.to_string()))?;
        let entries = match file.remove("models") {
            Some(toml::Value::Array(entries)) => entries,
            Some(_) => {
                return Err(RegistryError::Toml(
                    "`models` must be an array of tables, written [[models]]".into(),
                ));
            }
            None => Vec::new(),
        };
        let mut models: Vec<(String, Arc<dyn Model>)> = Vec::new();
        let mut prices = Vec::new();
        for (position, entry) in entries.into_iter().enumerate() {
            let position = position + 1;
            let toml::Value::Table(mut entry) = entry else {
                return Err(RegistryError::Toml(format!(
                    "model {position} must be a table, written [[models]]"
                )));
            };
            let mut text_field = |field: &'static str| match entry.remove(field) {
                Some(toml::Value::String(value)) => Ok(Some(value)),
                Some(_) => Err(RegistryError::Toml(format!(
                    "model {position}: `{field}` must be a string"
                ))),
                None => Ok(None),
            };
            let name = text_field("name")?.ok_or(RegistryError::Missing {
                position,
                field: "name",
            })?;
            let kind = text_field("kind")?.ok_or(RegistryError::Missing {
                position,
                field: "kind",
            })?;
            let label = text_field("label")?;
            let tokenizer = text_field("tokenizer")?
                .map(|named| {
                    Encoding::named(&named).ok_or_else(|| RegistryError::Model {
                        name: name.clone(),
                        reason: format!(
                            "`tokenizer` is `{named}`; name `o200k_base` or `cl100k_base`, or leave it out to estimate"
                        ),
                    })
                })
                .transpose()?;
            if models.iter().any(|(n, _)| *n == name) {
                return Err(RegistryError::Duplicate { name });
            }
            let misconfigured = |reason: String| RegistryError::Model {
                name: name.clone(),
                reason,
            };
            let price = entry
                .remove("price")
                .map(price_entry)
                .transpose()
                .map_err(misconfigured)?;
            let model: Arc<dyn Model> = match kind.as_str() {
                "demo" => {
                    let capabilities = demo_entry(&name, entry).map_err(misconfigured)?;
                    let mut demo = DemoModel::new(demo_pace, capabilities);
                    if let Some(label) = label {
                        demo = demo.with_label(label);
                    }
                    Arc::new(demo)
                }
                "openai" => {
                    let config: OpenAiConfig = toml::Value::Table(entry)
                        .try_into()
                        .map_err(|e: toml::de::Error| misconfigured(e.message().to_string()))?;
                    let model = OpenAiModel::with_env(config, &lookup)
                        .map_err(|e| misconfigured(e.to_string()))?;
                    Arc::new(match label {
                        Some(label) => model.with_label(label),
                        None => model,
                    })
                }
                "anthropic" => {
                    let config: AnthropicConfig = toml::Value::Table(entry)
                        .try_into()
                        .map_err(|e: toml::de::Error| misconfigured(e.message().to_string()))?;
                    let model = AnthropicModel::with_env(config, &lookup)
                        .map_err(|e| misconfigured(e.to_string()))?;
                    Arc::new(match label {
                        Some(label) => model.with_label(label),
                        None => model,
                    })
                }
                _ => return Err(RegistryError::Kind { name, kind }),
            };
            let model: Arc<dyn Model> = match tokenizer {
                Some(encoding) => Arc::new(Counted::new(model, BpeCounter::new(encoding))),
                None => model,
            };
            models.push((name, model));
            prices.push(price);
        }
        if models.is_empty() {
            return Err(RegistryError::Empty);
        }
        let default = match file.remove("default") {
            Some(toml::Value::String(name)) => models
                .iter()
                .position(|(n, _)| *n == name)
                .ok_or(RegistryError::Default(name))?,
            Some(_) => return Err(RegistryError::Toml("`default` must be a string".into())),
            None => 0,
        };
        if let Some(key) = file.keys().next() {
            return Err(RegistryError::Toml(format!(
                "unknown key `{key}`; the file holds `default` and [[models]]"
            )));
        }
        Ok(ModelRegistry {
            models,
            prices,
            default,
        })
    }

    /// The model named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Model>> {
        self.models.iter().find(|(n, _)| n == name).map(|(_, m)| m)
    }

    /// The price of the model named `name`, `None` when the models file gives it none.
    pub fn price(&self, name: &str) -> Option<&Price> {
        let at = self.models.iter().position(|(n, _)| n == name)?;
        self.prices[at].as_ref()
    }

    /// The default model's name.
    pub fn default_name(&self) -> &str {
        &self.models[self.default].0
    }

    /// The default model.
    pub fn default_model(&self) -> &Arc<dyn Model> {
        &self.models[self.default].1
    }

    /// Every model with its name, in the file's order.
    pub fn models(&self) -> impl Iterator<Item = (&str, &Arc<dyn Model>)> {
        self.models.iter().map(|(n, m)| (n.as_str(), m))
    }
}

/// A model's `price` table: `currency`, and `input`, `cached_input` (optional) and `output` in
/// units of it per million tokens.
fn price_entry(value: toml::Value) -> Result<Price, String> {
    let toml::Value::Table(mut table) = value else {
        return Err(
            "`price` must be a table, e.g. { currency = \"USD\", input = 2.5, output = 10 }".into(),
        );
    };
    let currency = match table.remove("currency") {
        Some(toml::Value::String(currency)) => currency,
        _ => return Err("`price` needs a `currency`, a code such as \"USD\"".into()),
    };
    let mut rate = |field: &str| match table.remove(field) {
        Some(toml::Value::Float(rate)) => Ok(Some(rate)),
        Some(toml::Value::Integer(rate)) => Ok(Some(rate as f64)),
        Some(other) => Err(format!(
            "the price's `{field}` is {other}; give a number of {currency} per million tokens"
        )),
        None => Ok(None),
    };
    let input = rate("input")?.ok_or("`price` needs an `input` rate per million tokens")?;
    let cached_input = rate("cached_input")?;
    let output = rate("output")?.ok_or("`price` needs an `output` rate per million tokens")?;
    if let Some(key) = table.keys().next() {
        return Err(format!(
            "`price` takes `currency`, `input`, `cached_input` and `output`, not `{key}`"
        ));
    }
    Price::per_million(&currency, input, cached_input, output).map_err(|e| e.to_string())
}

/// A demo entry's capabilities: the defaults under the entry's own name (so errors and usage
/// rows name the model the file configured), with any the entry's `capabilities` table sets.
fn demo_entry(name: &str, mut entry: toml::Table) -> Result<ModelCapabilities, String> {
    let overrides = match entry.remove("capabilities") {
        Some(toml::Value::Table(table)) => table,
        Some(_) => return Err("`capabilities` must be a table".into()),
        None => toml::Table::new(),
    };
    if let Some(key) = entry.keys().next() {
        return Err(format!(
            "a demo model takes `name`, `kind`, `label` and `capabilities`, not `{key}`"
        ));
    }
    let defaults = ModelCapabilities {
        id: name.to_string(),
        ..demo::capabilities()
    };
    let mut merged = match toml::Value::try_from(&defaults) {
        Ok(toml::Value::Table(table)) => table,
        _ => return Err("the demo capabilities could not be written as TOML".into()),
    };
    for (key, value) in overrides {
        if key == "provider" {
            return Err("capabilities take no `provider`".into());
        }
        merged.insert(key, value);
    }
    toml::Value::Table(merged)
        .try_into()
        .map_err(|e: toml::de::Error| e.message().to_string())
}

#[cfg(test)]
mod tests {
    use portal_core::model::Provider;

    use super::*;

    const FILE: &str = r#"
default = "local"

[[models]]
name = "demo"
kind = "demo"
capabilities = { can_see = false }

[[models]]
name = "local"
kind = "openai"
label = "Local Qwen"
base_url = "http://127.0.0.1:8000/v1"
api_key = { env = "LOCAL_KEY" }
model = "Qwen/Qwen3-32B"
[models.capabilities]
context_window = 32768
max_output_tokens = 8192
can_reason = true
can_see = false
"#;

    #[test]
    fn models_file_sets_capabilities_labels_and_default() {
        let registry =
            ModelRegistry::from_toml(FILE, 0.0, |_| Some("key".into())).expect("registry");
        assert_eq!(registry.default_name(), "local");
        let local = registry.default_model();
        assert_eq!(local.label(), "Local Qwen");
        assert_eq!(local.capabilities().context_window, 32_768);
        assert!(local.capabilities().can_reason);
        let demo = registry.get("demo").expect("demo listed");
        assert!(demo.is_demo());
        assert!(!demo.capabilities().can_see, "the file overrides a default");
        assert_eq!(demo.capabilities().context_window, 128_000);
    }

    #[test]
    fn an_anthropic_entry_needs_no_base_url_and_takes_thinking_budgets() {
        let file = "[[models]]\nname = \"claude\"\nkind = \"anthropic\"\n\
                    api_key = { env = \"ANTHROPIC_API_KEY\" }\nmodel = \"claude-sonnet-4-5\"\n\
                    thinking_budget = { high = 16000 }\n\
                    capabilities = { context_window = 200000, max_output_tokens = 64000, \
                    can_reason = true, can_see = true }\n";
        let registry =
            ModelRegistry::from_toml(file, 0.0, |_| Some("sk-ant-key".into())).expect("registry");
        let claude = registry.default_model();
        assert_eq!(claude.label(), "claude-sonnet-4-5");
        assert_eq!(claude.capabilities().provider, Provider::Anthropic);
        assert!(!format!("{claude:?}").contains("sk-ant-key"));
        let small = file.replace("high = 16000", "low = 512");
        let refused = ModelRegistry::from_toml(&small, 0.0, |_| Some("k".into())).unwrap_err();
        assert!(
            refused.to_string().contains("thinking_budget.low"),
            "{refused}"
        );
        let openai = file
            .replace("kind = \"anthropic\"", "kind = \"openai\"")
            .replace("model = ", "base_url = \"http://127.0.0.1:9/v1\"\nmodel = ");
        let refused = ModelRegistry::from_toml(&openai, 0.0, |_| Some("k".into())).unwrap_err();
        assert!(
            refused.to_string().contains("reasoning_effort"),
            "{refused}"
        );
    }

    #[test]
    fn a_demo_entry_is_known_by_its_own_name() {
        let file = "[[models]]\nname = \"demo-blind\"\nkind = \"demo\"\n\
                    capabilities = { can_see = false }\n";
        let registry = ModelRegistry::from_toml(file, 0.0, |_| None).expect("registry");
        let blind = registry.get("demo-blind").expect("listed");
        assert_eq!(blind.capabilities().id, "demo-blind");
    }

    #[test]
    fn models_file_mistakes_are_named() {
        let missing_key = ModelRegistry::from_toml(FILE, 0.0, |_| None).unwrap_err();
        assert!(
            missing_key.to_string().contains("LOCAL_KEY"),
            "{missing_key}"
        );
        let kind =
            ModelRegistry::from_toml("[[models]]\nname = \"x\"\nkind = \"gpt\"", 0.0, |_| None)
                .unwrap_err();
        assert!(matches!(kind, RegistryError::Kind { .. }));
        let default = ModelRegistry::from_toml(
            "default = \"y\"\n[[models]]\nname = \"x\"\nkind = \"demo\"",
            0.0,
            |_| None,
        )
        .unwrap_err();
        assert!(matches!(default, RegistryError::Default(_)));
        let typo = ModelRegistry::from_toml(
            "[[models]]\nname = \"x\"\nkind = \"demo\"\ncapabilities = { can_sea = true }",
            0.0,
            |_| None,
        )
        .unwrap_err();
        assert!(typo.to_string().contains("can_sea"), "{typo}");
        assert!(matches!(
            ModelRegistry::from_toml("", 0.0, |_| None),
            Err(RegistryError::Empty)
        ));
    }
}
