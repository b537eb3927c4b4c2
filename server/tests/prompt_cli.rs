//! `portal prompt`: the request a model would receive, printed by the real binary.

use std::process::{Command, Output};

use expect_test::expect_file;
use serde_json::Value;

const TRANSCRIPT: &str = "../tests/fixtures/cli/conversation.json";
const OPENAI_AGENT: &str = "../tests/fixtures/cli/agent.openai.toml";
const ANTHROPIC_AGENT: &str = "../tests/fixtures/cli/agent.anthropic.toml";

fn portal_prompt(agent: &str, message: &str, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_portal"))
        .args(["prompt", "--transcript", TRANSCRIPT, "--agent", agent])
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

#[test]
fn l3_prints_the_openai_request_for_an_openai_model() {
    let output = portal_prompt(OPENAI_AGENT, "And tomorrow? 🙂", &[]);
    expect_file!["../../tests/golden/prompt-cli/openai.json"]
        .assert_eq(&String::from_utf8_lossy(&output.stdout));
    let body = body(&output);
    assert_eq!(body["model"], "gpt-4.1-mini");
    assert_eq!(body["messages"][5]["content"], "And tomorrow? 🙂");
}

#[test]
fn l3_prints_the_anthropic_request_when_asked_for_it() {
    let output = portal_prompt(
        ANTHROPIC_AGENT,
        "Plan two days there.",
        &["--format", "anthropic"],
    );
    expect_file!["../../tests/golden/prompt-cli/anthropic.json"]
        .assert_eq(&String::from_utf8_lossy(&output.stdout));
    let body = body(&output);
    assert_eq!(body["model"], "claude-sonnet-4-5");
    assert!(
        body["system"]
            .as_str()
            .unwrap()
            .contains("Plan trips step by step.")
    );
}

#[test]
fn e1_the_message_effort_wins_over_the_agent_default() {
    let default = body(&portal_prompt(ANTHROPIC_AGENT, "Plan two days.", &[]));
    let high = body(&portal_prompt(
        ANTHROPIC_AGENT,
        "Plan two days.",
        &["--effort", "high"],
    ));
    assert_eq!(default["thinking"]["budget_tokens"], 8_192);
    assert_eq!(high["thinking"]["budget_tokens"], 24_576);
}

#[test]
fn e3_no_effort_is_sent_to_a_model_that_cannot_reason() {
    let body = body(&portal_prompt(OPENAI_AGENT, "Hi", &["--effort", "high"]));
    assert!(body.get("reasoning_effort").is_none(), "{body}");
}

#[test]
fn s3_an_unknown_skill_is_refused_and_nothing_is_printed() {
    let error = refusal(&portal_prompt(OPENAI_AGENT, "/fact-check Is that so?", &[]));
    assert!(error.contains("fact-check"), "{error}");
}

#[test]
fn compact_is_not_a_message_to_preview() {
    let error = refusal(&portal_prompt(OPENAI_AGENT, "/compact keep the dates", &[]));
    assert!(error.contains("preview a message instead"), "{error}");
}

#[test]
fn a_broken_agent_file_is_named_with_what_is_wrong() {
    let error = refusal(&portal_prompt(TRANSCRIPT, "Hi", &[]));
    assert!(
        error.contains("conversation.json is not an agent file"),
        "{error}"
    );
    assert!(error.contains("docs/prompt.md"), "{error}");
}

#[test]
fn an_effort_that_is_no_level_is_refused_with_the_levels() {
    let error = refusal(&portal_prompt(OPENAI_AGENT, "Hi", &["--effort", "max"]));
    assert!(error.contains("use low, medium or high"), "{error}");
}
