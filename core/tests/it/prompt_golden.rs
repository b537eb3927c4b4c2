//! Golden files: the assembled prompt for each transcript under `tests/fixtures/prompt/`, and the
//! provider request bodies for some. Regenerate with `UPDATE_EXPECT=1`. Anthropic's body with
//! prompt-caching marks is checked against the body without them for every fixture.

use crate::prompt_support;

use expect_test::expect_file;
use portal_core::attachment::PictureRef;
use portal_core::effort::{Effort, EffortConfig};
use portal_core::memory::CompactionHint;
use portal_core::model::{ModelCapabilities, Provider};
use portal_core::prompt::{
    EncodedPicture, PictureSource, PromptConfig, PromptInput, anthropic, assemble, check_pairing,
    openai, render,
};
use portal_core::skills::{CatalogueEntry, Skill};
use portal_core::tools::ToolDefinition;
use portal_core::{Transcript, TurnStatus, validate};
use prompt_support::*;
use serde::Deserialize;
use serde_json::json;

/// The fixtures, by file name; `fixtures_are_all_listed` keeps the list whole.
const FIXTURES: [&str; 11] = [
    "parallel-calls-out-of-order",
    "call-never-returned",
    "cut-off-turn",
    "twelve-calls",
    "twenty-five-turns",
    "zwj-emoji-across-cut",
    "adjacent-users-after-cut-off",
    "thinking-and-calls-only",
    "compaction-with-kept-tail",
    "attachments",
    "skills-and-approval",
];

/// Fixtures whose request bodies are kept as goldens too.
const WITH_BODIES: [&str; 4] = [
    "parallel-calls-out-of-order",
    "compaction-with-kept-tail",
    "attachments",
    "skills-and-approval",
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fixture {
    description: String,
    #[serde(default)]
    model: Option<ModelCapabilities>,
    #[serde(default)]
    instructions: String,
    #[serde(default)]
    project_instructions: String,
    #[serde(default)]
    selected_skills: Vec<Skill>,
    #[serde(default)]
    catalogue: Vec<CatalogueEntry>,
    #[serde(default)]
    agent_tools: Vec<ToolDefinition>,
    #[serde(default)]
    effort: Option<Effort>,
    #[serde(default)]
    compaction_hint: CompactionHint,
    transcript: Transcript,
}

struct Placeholders;

impl PictureSource for Placeholders {
    fn picture(&self, picture: &PictureRef) -> Option<EncodedPicture> {
        Some(EncodedPicture {
            media_type: picture.media_type.clone(),
            base64: format!(
                "<{} at {}×{}>",
                picture.attachment_id, picture.width, picture.height
            ),
        })
    }
}

/// The driver: the fixture's prompt, rendered, against its golden file; both request bodies
/// checked against the providers' pairing rules, and kept as goldens when asked.
fn check(name: &str, fixture: &Fixture) {
    validate(&fixture.transcript).unwrap_or_else(|e| panic!("{name}: {e}"));
    let model = fixture.model.clone().unwrap_or_else(model);
    let assembled = assemble(
        &PromptInput {
            transcript: &fixture.transcript,
            compaction_hint: fixture.compaction_hint,
            model: &model,
            instructions: &fixture.instructions,
            project_instructions: &fixture.project_instructions,
            selected_skills: &fixture.selected_skills,
            catalogue: &fixture.catalogue,
            agent_tools: &fixture.agent_tools,
            effort: fixture.effort.unwrap_or(Effort::Medium),
        },
        &PromptConfig::default(),
    );
    let mut out = format!("# {}\n\n", fixture.description);
    out.push_str(&render(&assembled.prompt));
    if !assembled.diagnostics.is_empty() {
        out.push_str(&format!(
            "=== diagnostics: {:?} ===\n",
            assembled.diagnostics
        ));
    }
    expect_file![format!("../../../tests/golden/prompt/{name}.txt")].assert_eq(&out);

    let openai = openai::request(&assembled.prompt, &model, &Placeholders);
    let anthropic = anthropic::request(
        &assembled.prompt,
        &model,
        &EffortConfig::default(),
        &Placeholders,
    );
    check_pairing(Provider::OpenAi, &openai).unwrap_or_else(|e| panic!("{name}: {e}"));
    check_pairing(Provider::Anthropic, &anthropic).unwrap_or_else(|e| panic!("{name}: {e}"));
    // The prompt-caching marks the server adds change nothing the model reads.
    let cached = anthropic::cached_request(
        &assembled.prompt,
        &model,
        &EffortConfig::default(),
        &Placeholders,
    );
    assert_eq!(unmarked(cached), anthropic, "{name}");
    if WITH_BODIES.contains(&name) {
        let pretty = |v| serde_json::to_string_pretty(v).unwrap() + "\n";
        expect_file![format!("../../../tests/golden/prompt/{name}.openai.json")]
            .assert_eq(&pretty(&openai));
        expect_file![format!(
            "../../../tests/golden/prompt/{name}.anthropic.json"
        )]
        .assert_eq(&pretty(&anthropic));
    }
}

fn read_fixture(name: &str) -> Fixture {
    let path = format!(
        "{}/../tests/fixtures/prompt/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let json = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn golden_prompts() {
    for name in FIXTURES {
        check(name, &read_fixture(name));
    }
}

#[test]
fn golden_prompt_with_a_megabyte_argument() {
    // Built here rather than stored: the fixture would be a megabyte.
    let huge = "lorem ipsum ".repeat(90_000);
    assert!(huge.len() > 1_000_000);
    let conversation = transcript(vec![
        turn(
            TurnStatus::Completed,
            vec![
                user("Save the draft."),
                assistant(vec![call(
                    "save1",
                    "write_file",
                    json!({"path": "/drafts/essay.txt", "content": huge, "append": false}),
                )]),
                tool(vec![result("save1", "Wrote 1,080,000 bytes.")]),
                assistant(vec![text("Saved.")]),
            ],
        ),
        turn(TurnStatus::Running, vec![user("Now shorten it.")]),
    ]);
    let fixture = Fixture {
        description: "A past call whose arguments hold a 1 MB string: cut to 200 characters, the JSON kept valid.".into(),
        model: None,
        instructions: String::new(),
        project_instructions: String::new(),
        selected_skills: Vec::new(),
        catalogue: Vec::new(),
        agent_tools: Vec::new(),
        effort: None,
        compaction_hint: CompactionHint::Search,
        transcript: conversation,
    };
    check("megabyte-argument", &fixture);
}

#[test]
fn fixtures_are_all_listed() {
    let dir = format!("{}/../tests/fixtures/prompt", env!("CARGO_MANIFEST_DIR"));
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|f| f.strip_suffix(".json").map(str::to_string))
        .collect();
    found.sort();
    let mut listed: Vec<String> = FIXTURES.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(found, listed);
}
