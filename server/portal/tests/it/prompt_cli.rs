//! `portal prompt`: the request a model would receive, printed by the real binary.

use std::process::{Command, Output};

use expect_test::expect_file;
use serde_json::Value;

const FIXTURES: &str = "../../tests/fixtures/cli";
const TRAVEL: &str = "config/organisations/acme/agents/travel.toml";
const PLANNER: &str = "config/organisations/acme/agents/planner.toml";

/// Runs `portal prompt` on the fixture conversation with the fixture configuration and models.
fn portal_prompt(agent: &str, message: &str, extra: &[&str]) -> Output {
    portal_prompt_with(
        &[
            "--config",
            "config",
            "--models",
            "models.toml",
            "--agent",
            agent,
        ],
        message,
        extra,
    )
}

fn portal_prompt_with(setup: &[&str], message: &str, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_portal"))
        .current_dir(FIXTURES)
        .args(["prompt", "--transcript", "conversation.json"])
        .args(setup)
        .args(["--message", message])
        .args(extra)
        .output()
        .expect("the portal binary runs")
}

fn body(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "portal prompt failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("stdout is one JSON body")
}

fn refusal(output: &Output) -> String {
    assert!(
        !output.status.success(),
        "portal prompt should have refused"
    );
    assert!(output.stdout.is_empty(), "nothing is printed on stdout");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            t["function"]["name"]
                .as_str()
                .or(t["name"].as_str())
                .unwrap()
                .to_string()
        })
        .collect()
}

#[test]
fn l1_s5_s6_prints_the_openai_request_with_the_selected_skill_and_the_catalogue() {
    let output = portal_prompt(TRAVEL, "/fact-check Is it always rainy? 🙂", &[]);
    expect_file!["../../../../tests/golden/prompt-cli/openai.json"]
        .assert_eq(&String::from_utf8_lossy(&output.stdout));
    let body = body(&output);
    assert_eq!(body["model"], "gpt-4.1-mini");
    let system = body["messages"][0]["content"].as_str().unwrap();
    let skill = system.find("<skill name=\"fact-check\">").expect("layer 4");
    let catalogue = system.find("- itinerary: ").expect("layer 5");
    assert!(
        skill < catalogue,
        "selected skills come before the catalogue"
    );
    assert!(tool_names(&body).contains(&"load_skill".to_string()));
    let last = body["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["content"], "/fact-check Is it always rainy? 🙂");
}

// Rule L1 (issue 45): a project's instructions, given as a file, are the prompt's layer 3,
// "Project instructions", after the author's and before the skills selected for the message;
// without the file there is no layer 3.
#[test]
fn l1_a_projects_instructions_are_previewed_as_layer_three() {
    let message = "/fact-check Is it always rainy?";
    let with = body(&portal_prompt(
        TRAVEL,
        message,
        &["--project-instructions", "project-instructions.md"],
    ));
    let system = with["messages"][0]["content"].as_str().unwrap();
    let author = system
        .find("<layer number=\"2\" name=\"Author instructions\">")
        .expect("layer 2");
    let project = system
        .find(
            "<layer number=\"3\" name=\"Project instructions\">\n\
             Give prices per night, in euros.\n</layer>",
        )
        .expect("layer 3, with the file's words");
    let skills = system
        .find("<layer number=\"4\" name=\"Selected skills\">")
        .expect("layer 4");
    assert!(author < project && project < skills, "{system}");

    let without = body(&portal_prompt(TRAVEL, message, &[]));
    let system = without["messages"][0]["content"].as_str().unwrap();
    assert!(!system.contains("Project instructions\">"), "{system}");

    let error = refusal(&portal_prompt(
        TRAVEL,
        message,
        &["--project-instructions", "no-such-project.md"],
    ));
    assert!(error.contains("cannot read no-such-project.md"), "{error}");
}

#[test]
fn l3_prints_the_anthropic_request_when_asked_for_it() {
    let output = portal_prompt(PLANNER, "Plan two days there.", &["--format", "anthropic"]);
    expect_file!["../../../../tests/golden/prompt-cli/anthropic.json"]
        .assert_eq(&String::from_utf8_lossy(&output.stdout));
    let body = body(&output);
    assert!(
        body["system"]
            .as_str()
            .unwrap()
            .contains("Plan trips step by step.")
    );
    assert_eq!(body["messages"][0]["role"], "user");
}

#[test]
fn e1_the_message_effort_wins_over_the_agent_default() {
    let format = ["--format", "anthropic"];
    let default = body(&portal_prompt(PLANNER, "Plan two days.", &format));
    let low = body(&portal_prompt(
        PLANNER,
        "Plan two days.",
        &["--format", "anthropic", "--effort", "low"],
    ));
    // Medium's 8,192 budget stays under the demo model's 8,192 output tokens.
    assert_eq!(default["thinking"]["budget_tokens"], 8_191);
    assert_eq!(low["thinking"]["budget_tokens"], 2_048);
}

#[test]
fn e3_no_effort_is_sent_to_a_model_that_cannot_reason() {
    let body = body(&portal_prompt(TRAVEL, "Hi", &["--effort", "high"]));
    assert!(body.get("reasoning_effort").is_none(), "{body}");
    let planner = self::body(&portal_prompt(PLANNER, "Hi", &["--effort", "high"]));
    assert_eq!(planner["reasoning_effort"], "high");
}

#[test]
fn s3_an_unknown_skill_is_refused_and_nothing_is_printed() {
    let error = refusal(&portal_prompt(TRAVEL, "/no-such-skill Is that so?", &[]));
    assert!(error.contains("no-such-skill"), "{error}");
}

#[test]
fn a_standalone_agent_file_runs_in_local_mode_on_the_demo_model() {
    let body = body(&portal_prompt_with(
        &["--agent", "standalone-agent.toml"],
        "Hi",
        &[],
    ));
    assert_eq!(body["model"], "demo");
    assert!(
        body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("Be brief.")
    );
}

#[test]
fn an_agent_that_binds_skills_needs_its_configuration() {
    let error = refusal(&portal_prompt_with(
        &["--agent", "standalone-agent-with-skills.toml"],
        "Hi",
        &[],
    ));
    assert!(error.contains("give it with --config"), "{error}");
}

#[test]
fn an_agent_outside_the_configuration_is_refused() {
    let error = refusal(&portal_prompt("standalone-agent.toml", "Hi", &[]));
    assert!(
        error.contains("is not an agent of the configuration"),
        "{error}"
    );
}

#[test]
fn an_unlisted_model_is_named_with_the_listed_ones() {
    let error = refusal(&portal_prompt_with(
        &["--config", "config", "--agent", TRAVEL],
        "Hi",
        &[],
    ));
    assert!(error.contains("model `gpt`"), "{error}");
    assert!(error.contains("it lists demo"), "{error}");
}

#[test]
fn compact_is_not_a_message_to_preview() {
    let error = refusal(&portal_prompt(TRAVEL, "/compact keep the dates", &[]));
    assert!(error.contains("preview a message instead"), "{error}");
}

#[test]
fn a_broken_agent_file_is_named() {
    let error = refusal(&portal_prompt_with(&["--agent", "models.toml"], "Hi", &[]));
    assert!(error.contains("models.toml"), "{error}");
}

#[test]
fn an_effort_that_is_no_level_is_refused_with_the_levels() {
    let error = refusal(&portal_prompt(TRAVEL, "Hi", &["--effort", "max"]));
    assert!(error.contains("use low, medium or high"), "{error}");
}
