//! Property: for any transcript that `validate` accepts, the rebuilt memory in each provider's
//! format obeys that provider's pairing rules (rules M8, M9, M11, L3).

use crate::prompt_support;

use portal_core::attachment::{AttachmentConfig, PictureRef};
use portal_core::block::ToolPicture;
use portal_core::effort::{Effort, EffortConfig};
use portal_core::memory::{CompactionHint, MemoryConfig};
use portal_core::model::{ModelCapabilities, Provider};
use portal_core::prompt::{
    EncodedPicture, NoPictures, PictureSource, PromptConfig, PromptInput, anthropic, assemble,
    check_pairing, openai,
};
use portal_core::{
    Block, CompactionTrigger, Message, Role, Transcript, Turn, TurnKind, TurnStatus, TurnsCovered,
    validate,
};
use prompt_support::*;
use proptest::prelude::*;
use serde_json::json;

/// One assistant step: its blocks, the calls it makes and how they are answered.
#[derive(Debug, Clone)]
struct StepPlan {
    thinking: bool,
    narration: u8,
    calls: usize,
    /// Bit i set: call i is answered (only honoured where a call may stay unanswered).
    answered: u16,
    /// Rotation of the answers, so parallel calls come back out of order.
    rotate: usize,
    compaction: Option<u8>,
    clarification: bool,
    steer: Option<u8>,
}

#[derive(Debug, Clone)]
struct TurnPlan {
    status: u8,
    compact_kind: bool,
    text: u8,
    attachments: Vec<u8>,
    steps: Vec<StepPlan>,
    answer: u8,
}

const TEXTS: [&str; 6] = [
    "",
    "   ",
    "short",
    "👨‍👩‍👧‍👦 family",
    "a long line that goes on and on to be cut somewhere in the middle of it",
    "/fact-check check this",
];

fn step() -> impl Strategy<Value = StepPlan> {
    (
        any::<bool>(),
        0..6u8,
        0..10usize,
        any::<u16>(),
        0..10usize,
        prop::option::weighted(0.1, 0..8u8),
        prop::bool::weighted(0.1),
        prop::option::weighted(0.15, 0..6u8),
    )
        .prop_map(
            |(thinking, narration, calls, answered, rotate, compaction, clarification, steer)| {
                StepPlan {
                    thinking,
                    narration,
                    calls,
                    answered,
                    rotate,
                    compaction,
                    clarification,
                    steer,
                }
            },
        )
}

fn turn_plan() -> impl Strategy<Value = TurnPlan> {
    (
        0..5u8,
        prop::bool::weighted(0.05),
        0..6u8,
        prop::collection::vec(0..4u8, 0..3),
        prop::collection::vec(step(), 0..4),
        0..6u8,
    )
        .prop_map(
            |(status, compact_kind, text, attachments, steps, answer)| TurnPlan {
                status,
                compact_kind,
                text,
                attachments,
                steps,
                answer,
            },
        )
}

fn build(plans: &[TurnPlan]) -> Transcript {
    let mut next_call = 0;
    let mut turns = Vec::new();
    let count = plans.len();
    for (t, plan) in plans.iter().enumerate() {
        let last = t + 1 == count;
        let index = t as u32 + 1;
        let attachments = plan
            .attachments
            .iter()
            .enumerate()
            .map(|(i, kind)| match kind {
                0 => document(&format!("d{t}_{i}"), 50),
                1 => document(&format!("d{t}_{i}"), 7_000),
                2 => picture(&format!("p{t}_{i}"), 4_000, 3_000),
                _ => picture(&format!("p{t}_{i}"), 300, 200),
            })
            .collect();
        if plan.compact_kind && !last {
            turns.push(Turn {
                index,
                kind: TurnKind::Compact,
                status: TurnStatus::Completed,
                effort: None,
                context_tokens: None,
                trace: Vec::new(),
                messages: vec![
                    user("/compact"),
                    assistant(vec![compaction_block(index.saturating_sub(1).max(1), 0)]),
                ],
            });
            continue;
        }
        let status = match (plan.status, last) {
            (0, true) => TurnStatus::Running,
            (1, _) => TurnStatus::CutOff,
            (2, _) => TurnStatus::Failed,
            (3, _) => TurnStatus::Paused,
            _ => TurnStatus::Completed,
        };
        let mut messages = vec![Message {
            role: Role::User,
            blocks: vec![Block::text(TEXTS[plan.text as usize])],
            attachments,
        }];
        let steps = plan.steps.len();
        for (s, step) in plan.steps.iter().enumerate() {
            let final_step = s + 1 == steps;
            let may_stay_open = status != TurnStatus::Completed && final_step;
            let mut blocks = Vec::new();
            if let Some(kept) = step.compaction {
                blocks.push(compaction_block(index, u32::from(kept)));
            }
            if step.thinking {
                blocks.push(thinking("thinking"));
            }
            if step.narration > 0 {
                blocks.push(text(TEXTS[step.narration as usize]));
            }
            let ids: Vec<String> = (0..step.calls)
                .map(|_| {
                    next_call += 1;
                    format!("call_{next_call}")
                })
                .collect();
            for (i, id) in ids.iter().enumerate() {
                let input = if i % 3 == 0 {
                    json!({"q": "x".repeat(250), "n": i})
                } else {
                    json!({})
                };
                blocks.push(call(id, "tool", input));
            }
            if may_stay_open && status == TurnStatus::Paused && !ids.is_empty() {
                blocks.push(Block::ApprovalRequest {
                    call_id: ids[0].clone(),
                    summary: "approve?".into(),
                });
            }
            if step.clarification && may_stay_open {
                blocks.push(Block::ClarificationRequest {
                    id: format!("q{index}_{s}"),
                    question: "Which one?".into(),
                });
            }
            if blocks.is_empty() {
                blocks.push(thinking("only thinking"));
            }
            messages.push(assistant(blocks));
            let mut answers: Vec<Block> = ids
                .iter()
                .enumerate()
                .filter(|(i, _)| !may_stay_open || step.answered & (1 << i) != 0)
                .map(|(i, id)| {
                    let content = "r".repeat(i * 70);
                    let mut block = if i % 4 == 3 {
                        failure(id, &content)
                    } else {
                        result(id, &content)
                    };
                    // Some results answer with a picture (issue 48), a large one among them.
                    if let Block::ToolResult { pictures, .. } = &mut block
                        && i % 3 == 1
                    {
                        pictures.push(ToolPicture {
                            attachment_id: format!("pic_{id}"),
                            media_type: "image/png".into(),
                            width: 400 * i as u32,
                            height: 300,
                        });
                    }
                    block
                })
                .collect();
            if !answers.is_empty() {
                let by = step.rotate % answers.len();
                answers.rotate_left(by);
                messages.push(tool(answers));
            }
            if let Some(steer) = step.steer
                && !final_step
            {
                messages.push(user(TEXTS[steer as usize]));
            }
        }
        if status == TurnStatus::Completed {
            messages.push(assistant(vec![text(match TEXTS[plan.answer as usize] {
                t if t.trim().is_empty() => "done",
                t => t,
            })]));
        }
        turns.push(Turn {
            index,
            kind: TurnKind::Chat,
            status,
            effort: None,
            context_tokens: None,
            trace: Vec::new(),
            messages,
        });
    }
    Transcript {
        version: portal_core::transcript::FORMAT_VERSION,
        turns,
    }
}

fn compaction_block(last: u32, kept_messages: u32) -> Block {
    Block::Compaction {
        summary: format!("Turns 1–{last}\n\nsummary"),
        trigger: CompactionTrigger::Auto,
        covers: TurnsCovered { first: 1, last },
        kept_messages,
    }
}

fn configs() -> [MemoryConfig; 2] {
    [
        MemoryConfig::default(),
        MemoryConfig {
            max_turns: 3,
            max_calls_per_turn: 2,
            output_turns: 1,
            result_chars: 5,
            argument_chars: 3,
            attachments: AttachmentConfig {
                inline_document_chars: 40,
                inline_replay_budget: 60,
                picture_resend_messages: 1,
                ..AttachmentConfig::default()
            },
        },
    ]
}

/// The neutral list's own rules: every call answered once, in the next entry; no empty entry;
/// no two adjacent entries of one role unless the first makes calls or is a tool's answer.
fn check_entries(entries: &[portal_core::prompt::Entry]) -> Result<(), String> {
    for (i, entry) in entries.iter().enumerate() {
        if entry.parts.is_empty() {
            return Err(format!("entry {i} is empty"));
        }
        let calls: Vec<&str> = entry.calls().map(|c| c.id.as_str()).collect();
        if !calls.is_empty() {
            let next = entries
                .get(i + 1)
                .ok_or(format!("entry {i}: calls at the end"))?;
            let answers: Vec<&str> = next.answers().map(|a| a.call_id.as_str()).collect();
            if next.role != Role::Tool || answers != calls {
                return Err(format!(
                    "entry {i}: calls {calls:?} answered by {answers:?}"
                ));
            }
        }
        if let Some(prev) = i.checked_sub(1).map(|p| &entries[p])
            && prev.role == entry.role
            && prev.role != Role::Tool
            && !prev.has_calls()
        {
            return Err(format!(
                "entries {} and {i} share a role and were not merged",
                i - 1
            ));
        }
    }
    Ok(())
}

/// A source that has every picture, as a one-pixel PNG.
struct EveryPicture;

impl PictureSource for EveryPicture {
    fn picture(&self, _: &PictureRef) -> Option<EncodedPicture> {
        Some(EncodedPicture {
            media_type: "image/png".into(),
            base64: "iVBORw0KGgo=".into(),
        })
    }
}

proptest! {
    #[test]
    fn m8_m9_m11_l3_rebuilt_memory_obeys_each_providers_pairing_rules(
        plans in prop::collection::vec(turn_plan(), 1..8),
        blind in any::<bool>(),
    ) {
        let transcript = build(&plans);
        if let Err(e) = validate(&transcript) {
            panic!("the generator made an invalid transcript: {e}\n{transcript:#?}");
        }
        let model = if blind { blind_model() } else { model() };
        for memory in configs() {
            for provider in [Provider::OpenAi, Provider::Anthropic] {
                let model = ModelCapabilities { provider, ..model.clone() };
                let config = PromptConfig { memory: memory.clone(), ..PromptConfig::default() };
                let assembled = assemble(
                    &PromptInput {
                        transcript: &transcript,
                        compaction_hint: CompactionHint::Search,
                        model: &model,
                        instructions: "Be brief.",
                        project_instructions: "",
                        selected_skills: &[],
                        catalogue: &[],
                        agent_tools: &[],
                        effort: Effort::Medium,
                    },
                    &config,
                );
                check_entries(&assembled.prompt.entries).map_err(TestCaseError::fail)?;
                // Pictures loaded and not: image blocks, or the line saying so.
                for pictures in [&NoPictures as &dyn PictureSource, &EveryPicture] {
                    let body = match provider {
                        Provider::OpenAi => openai::request(&assembled.prompt, &model, pictures),
                        Provider::Anthropic => anthropic::request(
                            &assembled.prompt,
                            &model,
                            &EffortConfig::default(),
                            pictures,
                        ),
                    };
                    if let Err(e) = check_pairing(provider, &body) {
                        return Err(TestCaseError::fail(format!("{e}\n{body:#}")));
                    }
                }
            }
        }
    }
}
