//! Rebuilding memory for transcripts of 100, 10,000 and 100,000 turns, 20 calls each with 2 KB
//! results (rule M1: the cost depends on the replay window, not on the transcript's length).
//!
//! The 100,000-turn transcript keeps 2 KB results in its last 25 turns (more than the window)
//! and short ones before, so that it fits in memory; the rebuild never reads those turns.

use criterion::{BenchmarkId, Criterion, black_box, criterion_group, criterion_main};
use portal_core::effort::Effort;
use portal_core::memory::{CompactionHint, MemoryConfig, rebuild};
use portal_core::model::{ModelCapabilities, PictureLimit, Provider};
use portal_core::prompt::{NoPictures, PromptConfig, PromptInput, assemble, openai};
use portal_core::{Block, Message, Role, Transcript, Turn, TurnKind, TurnStatus};
use serde_json::json;

const CALLS_PER_TURN: usize = 20;
const RESULT_BYTES: usize = 2_048;
const FULL_TURNS_AT_THE_END: usize = 25;

fn transcript(turns: usize, full_results_everywhere: bool) -> Transcript {
    let long = "r".repeat(RESULT_BYTES);
    let turns = (0..turns)
        .map(|t| {
            let full = full_results_everywhere || turns - t <= FULL_TURNS_AT_THE_END;
            let mut messages = vec![Message::new(
                Role::User,
                vec![Block::text("Please do the next step.")],
            )];
            for c in 0..CALLS_PER_TURN {
                let id = format!("call_{t}_{c}");
                messages.push(Message::new(
                    Role::Assistant,
                    vec![
                        Block::Thinking {
                            text: "Next.".into(),
                        },
                        Block::text("Let me look that up."),
                        Block::ToolUse {
                            id: id.clone(),
                            name: "search".into(),
                            input: json!({"query": "step", "page": c}),
                        },
                    ],
                ));
                messages.push(Message::new(
                    Role::Tool,
                    vec![Block::ToolResult {
                        call_id: id,
                        content: if full { long.clone() } else { "ok".into() },
                        is_error: false,
                        pictures: Vec::new(),
                    }],
                ));
            }
            messages.push(Message::new(
                Role::Assistant,
                vec![Block::text("Done with this step.")],
            ));
            Turn {
                index: t as u32 + 1,
                kind: TurnKind::Chat,
                status: TurnStatus::Completed,
                effort: None,
                context_tokens: None,
                trace: Vec::new(),
                messages,
            }
        })
        .collect();
    Transcript {
        version: portal_core::transcript::FORMAT_VERSION,
        turns,
    }
}

fn model() -> ModelCapabilities {
    ModelCapabilities {
        id: "bench".into(),
        provider: Provider::OpenAi,
        context_window: 128_000,
        max_output_tokens: 16_000,
        can_reason: true,
        can_see: true,
        largest_picture: Some(PictureLimit {
            long_edge: 2_048,
            pixels: None,
        }),
    }
}

fn rebuild_memory(c: &mut Criterion) {
    let model = model();
    let config = MemoryConfig::default();
    let mut group = c.benchmark_group("rebuild");
    for (turns, full) in [(100, true), (10_000, true), (100_000, false)] {
        let transcript = transcript(turns, full);
        group.bench_with_input(BenchmarkId::from_parameter(turns), &transcript, |b, t| {
            b.iter(|| rebuild(black_box(t), CompactionHint::NoCompaction, &model, &config))
        });
    }
    group.finish();
}

fn assemble_and_convert(c: &mut Criterion) {
    let model = model();
    let config = PromptConfig::default();
    let transcript = transcript(100, true);
    c.bench_function("assemble + openai request, 100 turns", |b| {
        b.iter(|| {
            let assembled = assemble(
                &PromptInput {
                    transcript: black_box(&transcript),
                    compaction_hint: CompactionHint::NoCompaction,
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
            openai::request(&assembled.prompt, &model, &NoPictures)
        })
    });
}

criterion_group!(benches, rebuild_memory, assemble_and_convert);
criterion_main!(benches);
