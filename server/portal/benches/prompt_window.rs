//! Rule M1: building a model call's prompt from SQLite costs what memory replays, not what the
//! conversation holds. Fills a 100-turn and a 10,000-turn conversation (each turn a question, a
//! tool call with its result, and an answer; a compaction every 500 turns), then loads each
//! call's part of the conversation and assembles its prompt, as the turn loop does, and prints
//! p50/p99 and the ratio between the two.
//!
//! `cargo bench -p portal-server --bench prompt_window [-- --rounds N]`; run by `cargo xtask
//! bench`, never by CI.

use std::time::{Duration, Instant};

use portal_core::block::{CompactionTrigger, TurnsCovered};
use portal_core::effort::Effort;
use portal_core::memory::CompactionHint;
use portal_core::model::ModelCapabilities;
use portal_core::prompt::{PromptConfig, PromptInput, assemble};
use portal_core::{Block, Message, Role, TurnStatus};
use portal_store::{ConversationId, NewTurn, Owner, Storage};
use portal_store_sqlite::SqliteStorage;

fn rounds() -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--rounds")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(200)
}

fn main() {
    let data = tempfile::tempdir().expect("data folder");
    let storage = SqliteStorage::open(data.path()).expect("storage");
    let owner = Owner::new("local", "local");
    let model = portal_model::demo::capabilities();
    let rounds = rounds();
    let mut medians = Vec::new();
    println!("{:<22} {:>10} {:>10}", "conversation", "p50 ms", "p99 ms");
    for turns in [100, 10_000] {
        let id = storage
            .create_conversation(&owner, "assistant")
            .expect("opens");
        fill(&storage, &id, turns);
        let mut times = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            let started = Instant::now();
            let prompt_entries = build(&storage, &id, &model);
            times.push(started.elapsed());
            assert!(prompt_entries > 0);
        }
        times.sort();
        let p50 = times[times.len() / 2];
        let p99 = times[(times.len() * 99 / 100).min(times.len() - 1)];
        println!(
            "{:<22} {:>10.3} {:>10.3}",
            format!("{turns} turns"),
            ms(p50),
            ms(p99)
        );
        medians.push(p50);
    }
    println!(
        "10,000 turns / 100 turns at p50: {:.2}×",
        medians[1].as_secs_f64() / medians[0].as_secs_f64()
    );
}

/// One call's prompt, built as the turn loop builds it: memory's part of the conversation, then
/// core's assembly. Returns the number of entries.
fn build(storage: &SqliteStorage, id: &ConversationId, model: &ModelCapabilities) -> usize {
    let config = PromptConfig::default();
    let recent = storage
        .load_recent("local", id, config.memory.max_turns)
        .expect("loads");
    let assembled = assemble(
        &PromptInput {
            transcript: &recent.transcript,
            compaction_hint: recent
                .newest_compaction
                .map_or(CompactionHint::NoCompaction, CompactionHint::NewestInTurn),
            model,
            instructions: "Answer briefly.",
            project_instructions: "",
            selected_skills: &[],
            catalogue: &[],
            agent_tools: &[],
            effort: Effort::Medium,
        },
        &config,
    );
    assembled.prompt.entries.len()
}

fn fill(storage: &SqliteStorage, id: &ConversationId, turns: u32) {
    for n in 1..=turns {
        let question = Message::new(
            Role::User,
            vec![Block::text(format!(
                "Question {n}: how many words is this?"
            ))],
        );
        let turn = storage
            .open_turn(id, NewTurn::chat(question))
            .expect("turn");
        let message = storage
            .append_message(id, turn, Role::Assistant)
            .expect("message");
        if n % 500 == 0 {
            let summary = Block::Compaction {
                summary: format!("Turns 1–{}: questions about words, each answered.", n - 1),
                trigger: CompactionTrigger::Auto,
                covers: TurnsCovered {
                    first: 1,
                    last: n - 1,
                },
                kept_messages: 4,
            };
            storage
                .append_block(id, turn, message, &summary)
                .expect("summary");
        }
        let call = Block::ToolUse {
            id: format!("call_{n}_1_0"),
            name: "count_characters".into(),
            input: serde_json::json!({ "text": "how many words is this" }),
        };
        storage
            .append_block(id, turn, message, &call)
            .expect("call");
        let results = storage
            .append_message(id, turn, Role::Tool)
            .expect("results");
        let result = Block::ToolResult {
            call_id: format!("call_{n}_1_0"),
            content: "22 characters, 5 words".into(),
            is_error: false,
            pictures: Vec::new(),
        };
        storage
            .append_block(id, turn, results, &result)
            .expect("result");
        let answer = storage
            .append_message(id, turn, Role::Assistant)
            .expect("answer");
        storage
            .append_block(id, turn, answer, &Block::text("Five words."))
            .expect("text");
        storage
            .set_turn_status(id, turn, TurnStatus::Completed)
            .expect("ends");
    }
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
