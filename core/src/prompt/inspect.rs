//! What the model saw (docs/inspector.md): a recorded call's prompt as its layers in reading
//! order, each with its text and its token count, the framing and the tools besides, so that the
//! counts add up to the call's whole input; memory's replayed calls with what each kept and why,
//! and the summary's covered turns.

use serde::{Deserialize, Serialize};

use crate::attachment::PictureRef;
use crate::effort::Effort;
use crate::memory;
use crate::memory::explain::{KeptCall, SummaryCovers, kept_calls, summary_covers};
use crate::tokens::{CALL_OVERHEAD, MESSAGE_OVERHEAD, TokenCounter, picture_tokens};

use super::assemble::Diagnostic;
use super::entry::{Layer, Part};
use super::layers;
use super::neutral::Prompt;
use super::render::render_entries;

/// A recorded call's prompt, taken apart for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Inspection {
    /// The seven layers in reading order, those the call had.
    pub layers: Vec<LayerView>,
    /// Tokens of the system text's framing: the precedence sentence, the layer tags and the
    /// closing line.
    pub framing_tokens: u64,
    /// The tools offered, each with its tokens.
    pub tools: Vec<ToolView>,
    /// Every count above, summed: the call's input as counted.
    pub total_tokens: u64,
    /// Whether the counts are the model's tokenizer's (`exact`) or core's estimate.
    pub exact: bool,
    /// The effort sent, if any (rule E3).
    pub effort: Option<Effort>,
    /// Memory's replayed calls: what each kept and why.
    pub memory_calls: Vec<KeptCall>,
    /// The turns the replayed summary covers, when memory opens with one.
    pub summary: Option<SummaryCovers>,
    /// The pictures sent, each at its sent size.
    pub pictures: Vec<PictureRef>,
}

/// One layer: its number, label, tokens and text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LayerView {
    pub layer: Layer,
    pub number: u8,
    pub label: &'static str,
    pub tokens: u64,
    /// The layer's text; `None` when it is withheld from the person looking
    /// ([`Inspection::withhold`]).
    pub text: Option<String>,
}

/// One tool offered to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolView {
    pub name: String,
    pub tokens: u64,
}

impl Inspection {
    /// Leaves out `layer`'s text, keeping its name and size (the instructions layer, for people
    /// who are not the organisation's agent authors).
    pub fn withhold(&mut self, layer: Layer) {
        for view in self.layers.iter_mut().filter(|v| v.layer == layer) {
            view.text = None;
        }
    }
}

/// Takes `prompt` apart, counting with `counter`; `exact` says whether it is the model's own
/// tokenizer.
pub fn inspect(prompt: &Prompt, counter: &dyn TokenCounter, exact: bool) -> Inspection {
    let count = |text: &str| counter.count(text) as u64;
    let mut framing: u64 = layers::system_pieces(&prompt.layers)
        .iter()
        .map(|piece| count(piece))
        .sum();
    let mut views = Vec::new();
    for layer in &prompt.layers {
        let tokens = count(&layer.text);
        framing = framing.saturating_sub(tokens);
        views.push(LayerView {
            layer: layer.layer,
            number: layer.layer.number(),
            label: layer.layer.label(),
            tokens,
            text: Some(layer.text.clone()),
        });
    }
    for layer in [Layer::Memory, Layer::NewMessage] {
        let entries: Vec<_> = prompt
            .entries
            .iter()
            .filter(|e| e.layer == layer)
            .cloned()
            .collect();
        if entries.is_empty() {
            continue;
        }
        let tokens = entries
            .iter()
            .map(|entry| {
                MESSAGE_OVERHEAD as u64
                    + entry
                        .parts
                        .iter()
                        .map(|part| part_tokens(part, &count))
                        .sum::<u64>()
            })
            .sum();
        views.push(LayerView {
            layer,
            number: layer.number(),
            label: layer.label(),
            tokens,
            text: Some(render_entries(&entries)),
        });
    }
    let tools: Vec<ToolView> = prompt
        .tools
        .iter()
        .map(|t| ToolView {
            name: t.name.clone(),
            tokens: count(&t.name) + count(&t.description) + count(&t.parameters.to_string()),
        })
        .collect();
    let total_tokens = framing
        + views.iter().map(|v| v.tokens).sum::<u64>()
        + tools.iter().map(|t| t.tokens).sum::<u64>();
    Inspection {
        layers: views,
        framing_tokens: framing,
        tools,
        total_tokens,
        exact,
        effort: prompt.effort,
        memory_calls: kept_calls(&prompt.entries, Layer::Memory),
        summary: summary_covers(&prompt.entries),
        pictures: prompt.pictures().cloned().collect(),
    }
}

/// Something the prompt builder worked around, for people: what, and the rule it concerns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiagnosticView {
    pub message: String,
    pub rule: Option<String>,
}

/// The prompt builder's diagnostics, each with its message and rule.
pub fn diagnostics(found: &[Diagnostic]) -> Vec<DiagnosticView> {
    found
        .iter()
        .map(|diagnostic| DiagnosticView {
            message: diagnostic.to_string(),
            rule: match diagnostic {
                Diagnostic::ToolNameTaken { .. } => None,
                Diagnostic::Memory(found) => Some(match found {
                    memory::Diagnostic::SearchedBeyondWindow
                    | memory::Diagnostic::HintMissed { .. } => "M1",
                    memory::Diagnostic::KeptTailShort { .. } => "C3",
                    memory::Diagnostic::OrphanResults { .. } => "C4",
                    memory::Diagnostic::PictureForBlindModel { .. } => "A5",
                }),
            }
            .map(str::to_string),
        })
        .collect()
}

fn part_tokens(part: &Part, count: &dyn Fn(&str) -> u64) -> u64 {
    match part {
        Part::Text { text } => count(text),
        Part::Picture { picture } => picture_tokens(picture.width, picture.height) as u64,
        Part::Call(call) => {
            CALL_OVERHEAD as u64
                + count(&call.id)
                + count(&call.name)
                + count(&call.arguments.to_string())
        }
        Part::Answer(answer) => {
            let pictures: usize = answer
                .pictures
                .iter()
                .map(|p| picture_tokens(p.width, p.height))
                .sum();
            CALL_OVERHEAD as u64 + count(&answer.call_id) + count(&answer.content) + pictures as u64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::{Entry, SystemLayer};
    use crate::tokens::EstimateCounter;
    use crate::transcript::Role;

    fn prompt() -> Prompt {
        let mut message = Entry::new(Role::User, Layer::NewMessage);
        message.push_text("How long is the Tagus?");
        Prompt {
            layers: vec![
                SystemLayer {
                    layer: Layer::Floor,
                    text: "Be plain.".into(),
                },
                SystemLayer {
                    layer: Layer::Instructions,
                    text: "Answer as the river desk.".into(),
                },
            ],
            entries: vec![message],
            tools: Vec::new(),
            effort: None,
        }
    }

    #[test]
    fn l1_the_layers_come_in_reading_order_and_their_counts_add_up_to_the_total() {
        let inspection = inspect(&prompt(), &EstimateCounter, false);
        let layers: Vec<_> = inspection.layers.iter().map(|l| l.number).collect();
        assert_eq!(layers, [1, 2, 7]);
        let summed: u64 = inspection.framing_tokens
            + inspection.layers.iter().map(|l| l.tokens).sum::<u64>()
            + inspection.tools.iter().map(|t| t.tokens).sum::<u64>();
        assert_eq!(summed, inspection.total_tokens);
        assert!(inspection.framing_tokens > 0);
    }

    #[test]
    fn a5_each_diagnostic_says_what_was_worked_around_and_its_rule() {
        let found = [
            Diagnostic::ToolNameTaken {
                name: "load_skill".into(),
            },
            Diagnostic::Memory(memory::Diagnostic::PictureForBlindModel {
                attachment_id: "att_1".into(),
            }),
            Diagnostic::Memory(memory::Diagnostic::OrphanResults {
                turn: 3,
                message: 1,
            }),
        ];
        let views = diagnostics(&found);
        let rules: Vec<_> = views.iter().map(|v| v.rule.as_deref()).collect();
        assert_eq!(rules, [None, Some("A5"), Some("C4")]);
        assert!(views[0].message.contains("`load_skill`"), "{views:?}");
    }

    // Issue 45: a project's instructions are shown as their own labelled layer, between the
    // author's and the skills, and stay shown to the person when the author's are withheld.
    #[test]
    fn l1_the_inspector_labels_a_projects_instructions_as_layer_three() {
        let mut prompt = prompt();
        prompt.layers.push(SystemLayer {
            layer: Layer::Project,
            text: "Figures in euros.".into(),
        });
        let mut inspection = inspect(&prompt, &EstimateCounter, false);
        inspection.withhold(Layer::Instructions);
        let shown: Vec<_> = inspection
            .layers
            .iter()
            .map(|l| (l.number, l.label, l.text.as_deref()))
            .collect();
        assert_eq!(
            shown[1..3],
            [
                (2, "Author instructions", None),
                (3, "Project instructions", Some("Figures in euros.")),
            ]
        );
    }

    #[test]
    fn a_withheld_layer_keeps_its_name_and_size_but_not_its_text() {
        let mut inspection = inspect(&prompt(), &EstimateCounter, false);
        let before = inspection.clone();
        inspection.withhold(Layer::Instructions);
        let instructions = &inspection.layers[1];
        assert_eq!(instructions.label, "Author instructions");
        assert_eq!(instructions.text, None);
        assert_eq!(instructions.tokens, before.layers[1].tokens);
        assert_eq!(inspection.layers[0], before.layers[0]);
        assert_eq!(inspection.total_tokens, before.total_tokens);
    }
}
