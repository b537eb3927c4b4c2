//! The summary call (rules C5, C11): on the turn's own model, a usage row of purpose
//! `compaction`, and no summary from a call that errs or is cut off.

use futures_util::stream;
use portal_core::compaction::{
    Cause, CompactionConfig, Outcome, SummaryFailure, SummaryRequest, plan, settle,
};
use portal_core::model::ModelCapabilities;
use portal_core::prompt::{PictureSource, Prompt};
use portal_core::tokens::EstimateCounter;
use portal_core::usage::Tokens;
use portal_core::{Block, Message, Role, Transcript, Turn, TurnKind, TurnStatus};
use portal_model::demo::DemoModel;
use portal_model::demo::capabilities;
use portal_model::summary::summarise;
use portal_model::{FinishReason, Model, ModelError, ModelEvent, ModelStream};
use portal_store::CallPurpose;

fn exchange(index: u32, request: &str, answer: &str) -> Turn {
    Turn {
        index,
        kind: TurnKind::Chat,
        status: TurnStatus::Completed,
        effort: None,
        context_tokens: None,
        trace: Vec::new(),
        messages: vec![
            Message::new(Role::User, vec![Block::text(request)]),
            Message::new(Role::Assistant, vec![Block::text(answer)]),
        ],
    }
}

fn request() -> SummaryRequest {
    let mut t = Transcript::new();
    for i in 1..=4 {
        t.turns.push(exchange(
            i,
            &format!("Request {i}: plan the budget for the Lisbon office"),
            &format!("Answer {i}: done."),
        ));
    }
    plan(
        &t,
        Cause::Command,
        Some("keep the figures"),
        100_000,
        &CompactionConfig::default(),
        &EstimateCounter,
    )
    .expect("a plan")
    .request
}

/// A model that answers every call with the same events.
#[derive(Debug)]
struct Scripted {
    capabilities: ModelCapabilities,
    events: Vec<Result<ModelEvent, ModelError>>,
}

impl Scripted {
    fn new(events: Vec<Result<ModelEvent, ModelError>>) -> Self {
        Scripted {
            capabilities: ModelCapabilities {
                id: "scripted-1".into(),
                ..capabilities()
            },
            events,
        }
    }
}

impl Model for Scripted {
    fn label(&self) -> &str {
        "Scripted"
    }

    fn capabilities(&self) -> &ModelCapabilities {
        &self.capabilities
    }

    fn stream(&self, prompt: &Prompt, _pictures: &dyn PictureSource) -> ModelStream {
        assert!(
            prompt.tools.is_empty(),
            "C11: the summary call has no tools"
        );
        assert!(SummaryRequest::from_prompt(prompt).is_some());
        Box::pin(stream::iter(self.events.clone()))
    }
}

fn text(t: &str) -> Result<ModelEvent, ModelError> {
    Ok(ModelEvent::TextDelta(t.into()))
}

fn finished(reason: FinishReason) -> Result<ModelEvent, ModelError> {
    Ok(ModelEvent::Finished { reason })
}

#[tokio::test]
async fn c11_the_demo_writes_an_extractive_summary_and_leaves_a_compaction_usage_row() {
    let request = request();
    let call = summarise(&DemoModel::new(0.0, capabilities()), &request).await;
    let summary = call.answer.expect("a summary");
    assert!(summary.starts_with("Turns 1–4\n"), "{summary}");
    for section in ["## Requests", "## Work done", "## Open work", "## Facts"] {
        assert!(summary.contains(section), "{section}");
    }
    assert!(summary.contains("Request 3: plan the budget for the Lisbon office"));
    assert_eq!(call.usage.purpose, CallPurpose::Compaction);
    assert_eq!(call.usage.model, "demo", "priced at the turn's model");
    assert!(call.usage.tokens.input > 0 && call.usage.tokens.output > 0);
    assert!(
        call.usage.tokens.estimated,
        "the demo's tokens are the portal's estimate"
    );
}

/// A case name, what the model streams, and the failure expected (`None`: a summary).
type FailureCase = (
    &'static str,
    Vec<Result<ModelEvent, ModelError>>,
    Option<SummaryFailure>,
);

#[tokio::test]
async fn c5_a_summary_call_that_fails_gives_no_summary() {
    let cases: Vec<FailureCase> = vec![
        (
            "C5 finished",
            vec![text("## Facts\n- a"), finished(FinishReason::Stop)],
            None,
        ),
        (
            "C5 the stream ends without finishing",
            vec![text("## Facts\n- a")],
            Some(SummaryFailure::CutOff),
        ),
        (
            "C5 stopped at the output limit",
            vec![text("## Facts\n- a"), finished(FinishReason::Length)],
            Some(SummaryFailure::CutOff),
        ),
        (
            "C5 the call fails",
            vec![
                text("## Fa"),
                Err(ModelError::failed("HTTP 502 from the gateway")),
            ],
            Some(SummaryFailure::Error(
                "the model failed: HTTP 502 from the gateway".into(),
            )),
        ),
    ];
    for (name, events, failure) in cases {
        let call = summarise(&Scripted::new(events), &request()).await;
        assert_eq!(call.answer.clone().err(), failure, "{name}");
        assert_eq!(call.usage.purpose, CallPurpose::Compaction, "{name}");
        assert_eq!(call.usage.model, "scripted-1", "{name}");
    }
}

#[tokio::test]
async fn c5_an_empty_summary_commits_nothing() {
    let mut t = Transcript::new();
    for i in 1..=3 {
        t.turns
            .push(exchange(i, &format!("Request {i} on the budget"), "Done."));
    }
    let plan = plan(
        &t,
        Cause::Command,
        None,
        100_000,
        &CompactionConfig::default(),
        &EstimateCounter,
    )
    .expect("a plan");
    let call = summarise(
        &Scripted::new(vec![
            text(" \n"),
            Ok(ModelEvent::Usage(Tokens::reported(900, 1))),
            finished(FinishReason::Stop),
        ]),
        &plan.request,
    )
    .await;
    assert_eq!(call.usage.tokens, Tokens::reported(900, 1));
    assert!(matches!(
        settle(&plan, call.answer, &t, &EstimateCounter),
        Outcome::FailTurn { .. }
    ));
}
