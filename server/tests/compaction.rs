//! The summary call (rules C5, C11): on the turn's own model, a usage row of purpose
//! `compaction`, and no summary from a call that errs or is cut off.

use futures_util::stream;
use portal_core::compaction::{
    Cause, CompactionConfig, Outcome, SummaryFailure, SummaryRequest, plan, settle,
};
use portal_core::model::ModelCapabilities;
use portal_core::prompt::{PictureSource, Prompt};
use portal_core::tokens::EstimateCounter;
use portal_core::{Block, Message, Role, Transcript, Turn, TurnKind, TurnStatus};
use portal_server::compaction::summarise;
use portal_server::demo::DemoModel;
use portal_server::model::registry::demo_capabilities;
use portal_server::model::{FinishReason, Model, ModelError, ModelEvent, ModelStream};
use portal_server::storage::CallPurpose;

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
                ..demo_capabilities()
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
    let call = summarise(&DemoModel::new(0.0, demo_capabilities()), &request).await;
    let summary = call.answer.expect("a summary");
    assert!(summary.starts_with("Turns 1–4\n"), "{summary}");
    for section in ["## Requests", "## Work done", "## Open work", "## Facts"] {
        assert!(summary.contains(section), "{section}");
    }
    assert!(summary.contains("Request 3: plan the budget for the Lisbon office"));
    assert_eq!(call.usage.purpose, CallPurpose::Compaction);
    assert_eq!(call.usage.model, "demo", "priced at the turn's model");
    assert!(call.usage.input_tokens > 0 && call.usage.output_tokens > 0);
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
            Ok(ModelEvent::Usage {
                input_tokens: 900,
                output_tokens: 1,
            }),
            finished(FinishReason::Stop),
        ]),
        &plan.request,
    )
    .await;
    assert_eq!(
        (call.usage.input_tokens, call.usage.output_tokens),
        (900, 1)
    );
    assert!(matches!(
        settle(&plan, call.answer, &t, &EstimateCounter),
        Outcome::FailTurn { .. }
    ));
}

// ---- The step in the turn loop, writing to real SQLite ----

mod step {
    use super::*;
    use futures_util::StreamExt;
    use portal_core::compaction::{Basis, CallGuard, CompactionError, Projection};
    use portal_core::stream::TurnEvent;
    use portal_core::{BlockKind, CompactionTrigger};
    use portal_server::compaction::{Step, TurnSink, after_overflow, before_call, command};
    use portal_server::events::TurnLog;
    use portal_server::storage::{
        AsyncStorage, ConversationId, NewTurn, Owner, SqliteStorage, Storage,
    };
    use std::sync::Arc;

    const WINDOW: u64 = 100_000;

    struct Conversation {
        _dir: tempfile::TempDir,
        storage: AsyncStorage,
        id: ConversationId,
        log: Arc<TurnLog>,
    }

    impl Conversation {
        /// Five finished exchanges and a sixth turn running, as the turn loop left it.
        fn new(kind: TurnKind, text: &str) -> Self {
            let dir = tempfile::tempdir().expect("a temporary folder");
            let storage = SqliteStorage::open(dir.path()).expect("a store");
            let id = storage
                .create_conversation(&Owner::new("org", "ana"), "agent")
                .expect("a conversation");
            for i in 1..=5 {
                let turn = storage
                    .open_turn(
                        &id,
                        NewTurn::chat(Message::new(
                            Role::User,
                            vec![Block::text(format!("Request {i}: the Lisbon budget"))],
                        )),
                    )
                    .expect("a turn");
                let m = storage
                    .append_message(&id, turn, Role::Assistant)
                    .expect("a message");
                storage
                    .append_block(&id, turn, m, &Block::text(format!("Answer {i}.")))
                    .expect("a block");
                storage
                    .set_turn_status(&id, turn, TurnStatus::Completed)
                    .expect("ended");
            }
            storage
                .open_turn(
                    &id,
                    NewTurn {
                        kind,
                        ..NewTurn::chat(Message::new(Role::User, vec![Block::text(text)]))
                    },
                )
                .expect("the running turn");
            Conversation {
                _dir: dir,
                storage: AsyncStorage::new(Arc::new(storage)),
                id,
                log: TurnLog::new(),
            }
        }

        fn sink(&self) -> TurnSink<'_> {
            TurnSink {
                storage: &self.storage,
                conversation: &self.id,
                turn: 6,
                log: &self.log,
            }
        }

        fn transcript(&self) -> Transcript {
            self.storage
                .blocking()
                .load_transcript("org", &self.id)
                .expect("the transcript")
        }

        async fn events(&self) -> Vec<TurnEvent> {
            self.log.push(TurnEvent::TurnEnd {
                status: TurnStatus::Completed,
                reason: None,
            });
            self.log
                .read_from(0, std::time::Duration::from_secs(5))
                .map(|(_, e)| e)
                .collect::<Vec<_>>()
                .await
        }
    }

    fn demo() -> DemoModel {
        DemoModel::new(
            0.0,
            ModelCapabilities {
                context_window: WINDOW,
                ..demo_capabilities()
            },
        )
    }

    fn guard() -> CallGuard {
        CallGuard::new(CompactionConfig::default(), WINDOW, 500)
    }

    fn projected(tokens: u64) -> Projection {
        Projection {
            tokens,
            basis: Basis::Estimated,
        }
    }

    #[tokio::test]
    async fn c1_c11_compaction_before_a_call_writes_the_block_and_a_usage_row() {
        let c = Conversation::new(TurnKind::Chat, "Now the Porto budget");
        let before = c.transcript();
        let step = before_call(c.sink(), &demo(), &mut guard(), &before, &projected(90_000))
            .await
            .expect("stored");
        assert_eq!(step, Step::Call { message: Some(1) });
        let after = c.transcript();
        assert_eq!(
            after.turns[..5],
            before.turns[..5],
            "earlier turns untouched"
        );
        let Block::Compaction {
            trigger,
            covers,
            summary,
            kept_messages,
        } = &after.turns[5].messages[1].blocks[0]
        else {
            panic!("the block opens the call's assistant message");
        };
        assert_eq!(*trigger, CompactionTrigger::Auto);
        assert_eq!(covers.last, 4, "turn 5 is in the kept tail");
        assert!(summary.starts_with("Turns 1–4\n"));
        assert_eq!(*kept_messages, 4);
        let usage = c.storage.blocking().usage("org", &c.id).expect("usage");
        assert_eq!(usage.len(), 1);
        assert_eq!(usage[0].usage.purpose, CallPurpose::Compaction);
        assert_eq!(usage[0].usage.model, "demo");
        assert_eq!(after.turns[5].context_tokens, None, "C11: no context size");
        let events = c.events().await;
        assert!(
            matches!(
                events[..3],
                [
                    TurnEvent::MessageStart { message: 1, .. },
                    TurnEvent::BlockStart {
                        message: 1,
                        block: 0,
                        kind: BlockKind::Compaction,
                        ..
                    },
                    TurnEvent::Compacted {
                        message: 1,
                        block: 0,
                        trigger: CompactionTrigger::Auto,
                        ..
                    },
                ]
            ),
            "{events:?}"
        );
    }

    #[tokio::test]
    async fn c5_a_summary_that_fails_before_a_call_is_logged_and_changes_no_turn() {
        let c = Conversation::new(TurnKind::Chat, "Now the Porto budget");
        let before = c.transcript();
        let cut_off = Scripted::new(vec![text("## Facts\n- half")]);
        let mut g = guard();
        let step = before_call(c.sink(), &cut_off, &mut g, &before, &projected(90_000))
            .await
            .expect("stored");
        assert_eq!(step, Step::Call { message: None });
        let after = c.transcript();
        assert_eq!(after.turns[..5], before.turns[..5]);
        assert_eq!(
            after.turns[5].messages, before.turns[5].messages,
            "no block written"
        );
        assert!(matches!(
            after.turns[5].trace.as_slice(),
            [portal_core::TraceEntry::CompactionFailed { .. }]
        ));
        assert_eq!(
            c.storage
                .blocking()
                .usage("org", &c.id)
                .expect("usage")
                .len(),
            1
        );
        // The call then overflows: the turn fails, with no second summary call.
        let step = after_overflow(c.sink(), &cut_off, &mut g, &after)
            .await
            .expect("stored");
        assert!(matches!(
            step,
            Step::Fail(CompactionError::SummaryFailedAfterOverflow { .. })
        ));
        assert_eq!(
            c.storage
                .blocking()
                .usage("org", &c.id)
                .expect("usage")
                .len(),
            1
        );
        let events = c.events().await;
        assert!(events.contains(&TurnEvent::BlockEnd {
            message: 1,
            block: 0
        }));
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, TurnEvent::Compacted { .. }))
        );
    }

    #[tokio::test]
    async fn c2_an_overflow_compacts_once_and_a_second_fails_the_turn() {
        let c = Conversation::new(TurnKind::Chat, "Now the Porto budget");
        let t = c.transcript();
        let mut g = guard();
        let step = after_overflow(c.sink(), &demo(), &mut g, &t)
            .await
            .expect("stored");
        assert_eq!(step, Step::Call { message: Some(1) });
        let t = c.transcript();
        let step = after_overflow(c.sink(), &demo(), &mut g, &t)
            .await
            .expect("stored");
        assert!(matches!(
            step,
            Step::Fail(CompactionError::TailTooLarge { .. })
        ));
        assert_eq!(
            c.storage
                .blocking()
                .usage("org", &c.id)
                .expect("usage")
                .len(),
            1,
            "one summary call"
        );
        assert_eq!(c.transcript().turns[5].trace.len(), 1);
    }

    #[tokio::test]
    async fn c6_a_compact_turn_is_the_block_alone_and_a_failed_one_writes_nothing() {
        let c = Conversation::new(TurnKind::Compact, "/compact keep the Lisbon figures");
        let t = c.transcript();
        let done = command(
            c.sink(),
            &demo(),
            &t,
            Some("keep the Lisbon figures"),
            &CompactionConfig::default(),
        )
        .await
        .expect("stored");
        assert_eq!(done, Ok(()));
        let after = c.transcript();
        let turn = &after.turns[5];
        assert_eq!(turn.messages.len(), 2);
        let [
            Block::Compaction {
                trigger,
                kept_messages,
                ..
            },
        ] = turn.messages[1].blocks.as_slice()
        else {
            panic!("the block alone: {:?}", turn.messages[1]);
        };
        assert_eq!((*trigger, *kept_messages), (CompactionTrigger::Manual, 0));
        // A failing summary fails the /compact turn and writes nothing.
        let c = Conversation::new(TurnKind::Compact, "/compact");
        let t = c.transcript();
        let failing = Scripted::new(vec![Err(ModelError::failed("HTTP 500"))]);
        let done = command(c.sink(), &failing, &t, None, &CompactionConfig::default())
            .await
            .expect("stored");
        assert!(matches!(done, Err(CompactionError::CommandFailed { .. })));
        assert_eq!(c.transcript().turns[5].messages, t.turns[5].messages);
    }
}
