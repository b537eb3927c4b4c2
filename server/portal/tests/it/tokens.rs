//! The exact counter against core's estimate on the test corpus (rule C1). The table is a golden
//! file, so a change to the estimate shows as a reviewed diff, and the bounds below fail the test
//! when the estimate drifts to where it would compact too late or far too early.

use std::fmt::Write;
use std::path::Path;

use portal_core::tokens::{EstimateCounter, TokenCounter};
use portal_model::tokens::{BpeCounter, Encoding};

const CORPUS: &[&str] = &[
    "prose.txt",
    "markdown.md",
    "code.rs.txt",
    "tool-call.json",
    "spanish.txt",
    "japanese.txt",
    "mixed.txt",
];

/// The estimate may be this much under the exact count (compacting a little late is absorbed by
/// the 15 % headroom above the 85 % line) ...
const MOST_UNDER: f64 = -0.25;
/// ... and this much over (compacting early wastes window, never fails a request).
const MOST_OVER: f64 = 0.60;

#[test]
fn c1_estimate_stays_near_the_exact_count_on_the_corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/tokens");
    let counters = [
        BpeCounter::new(Encoding::O200k),
        BpeCounter::new(Encoding::Cl100k),
    ];
    let mut table = String::from("file            chars  estimate  o200k  error  cl100k  error\n");
    let mut out_of_bounds = Vec::new();
    for name in CORPUS {
        let text = std::fs::read_to_string(dir.join(name)).expect("corpus file");
        let estimate = EstimateCounter.count(&text);
        write!(
            table,
            "{name:<15} {:>5}  {estimate:>8}",
            text.chars().count()
        )
        .unwrap();
        for counter in &counters {
            let exact = counter.count(&text);
            let error = estimate as f64 / exact as f64 - 1.0;
            write!(table, "  {exact:>5}  {:>+4.0}%", error * 100.0).unwrap();
            if !(MOST_UNDER..=MOST_OVER).contains(&error) {
                out_of_bounds.push(format!(
                    "{name} on {:?}: {:+.0} %",
                    counter.encoding(),
                    error * 100.0
                ));
            }
        }
        table.push('\n');
    }
    expect_test::expect_file!["../../../../tests/golden/tokens/estimate-error.txt"]
        .assert_eq(&table);
    assert!(
        out_of_bounds.is_empty(),
        "the estimate is out of bounds: {out_of_bounds:?}\n{table}"
    );
}

#[test]
fn c1_exact_counts_follow_the_tokenizer() {
    let o200k = BpeCounter::new(Encoding::O200k);
    assert_eq!(o200k.count(""), 0);
    assert_eq!(o200k.count("hello world"), 2);
    // A control sequence typed by a user is ordinary text, several tokens, never one special token.
    assert!(o200k.count("<|endoftext|>") > 1);
}

#[test]
fn c1_model_names_pick_their_encoding() {
    assert_eq!(Encoding::for_model("gpt-4o-mini"), Encoding::O200k);
    assert_eq!(Encoding::for_model("gpt-4"), Encoding::Cl100k);
    assert_eq!(Encoding::for_model("gpt-3.5-turbo"), Encoding::Cl100k);
    assert_eq!(
        Encoding::for_model("llama-3.1-70b-instruct"),
        Encoding::O200k
    );
}

/// Two OpenAI-compatible models alike but for `tokenizer`, on an endpoint never called.
const MODELS: &str = r#"
[[models]]
name = "counted"
kind = "openai"
tokenizer = "o200k_base"
base_url = "http://127.0.0.1:9/v1"
model = "gpt-4.1"
capabilities = { context_window = 128000, max_output_tokens = 4096, can_reason = false, can_see = false }

[[models]]
name = "estimated"
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "gpt-4.1"
capabilities = { context_window = 128000, max_output_tokens = 4096, can_reason = false, can_see = false }
"#;

#[test]
fn c1_a_model_whose_tokenizer_is_named_projects_in_its_exact_tokens() {
    use portal_core::memory::CompactionHint;
    use portal_core::prompt::{PromptConfig, PromptInput, assemble, render};
    use portal_core::{Block, Message, Role, Transcript, Turn, TurnKind, TurnStatus};
    use portal_model::ModelRegistry;

    let registry = ModelRegistry::from_toml(MODELS, 0.0, |_| None).expect("models");
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/tokens/japanese.txt"),
    )
    .expect("corpus file");
    let transcript = Transcript {
        version: 1,
        turns: vec![Turn {
            index: 1,
            kind: TurnKind::Chat,
            status: TurnStatus::Running,
            effort: None,
            context_tokens: None,
            trace: Vec::new(),
            messages: vec![Message::new(Role::User, vec![Block::text(text)])],
        }],
    };
    let mut projected = Vec::new();
    for name in ["counted", "estimated"] {
        let model = registry.get(name).expect("model");
        let prompt = assemble(
            &PromptInput {
                transcript: &transcript,
                compaction_hint: CompactionHint::NoCompaction,
                model: model.capabilities(),
                instructions: "",
                project_instructions: "",
                selected_skills: &[],
                catalogue: &[],
                agent_tools: &[],
                effort: portal_core::effort::Effort::Medium,
            },
            &PromptConfig::default(),
        )
        .prompt;
        // As the turn machine projects a call: with the model's own counter.
        let counter = model.tokens();
        let projection = portal_core::compaction::project_input(&transcript, counter, || {
            counter.count(&render(&prompt)) as u64
        });
        projected.push((projection.tokens, render(&prompt)));
    }
    let (counted, rendered) = &projected[0];
    assert_eq!(
        *counted,
        BpeCounter::new(Encoding::O200k).count(rendered) as u64,
        "C1: the named tokenizer's exact count"
    );
    let (estimated, rendered) = &projected[1];
    assert_eq!(
        *estimated,
        EstimateCounter.count(rendered) as u64,
        "C1: the estimate elsewhere"
    );
    assert_ne!(counted, estimated, "the corpus tells the two apart");

    let wrong = MODELS.replace("o200k_base", "p50k");
    let error = ModelRegistry::from_toml(&wrong, 0.0, |_| None).expect_err("refused");
    assert!(error.to_string().contains("o200k_base"), "{error}");
}
