//! Rule M1 end to end: a model call in a 10,000-turn conversation reads from storage only what
//! memory replays (the latest turns and the newest compaction's turn), in one load.

use crate::common;

use std::sync::Arc;

use portal_core::block::{CompactionTrigger, TurnsCovered};
use portal_core::effort::Effort;
use portal_core::stream::TurnEvent;
use portal_core::{Block, Message, Role, TurnStatus};
use portal_host::turn::{TurnSetup, Turns};
use portal_model::ModelRegistry;
use portal_store::{NewTurn, Storage};
use portal_store_sqlite::SqliteStorage;
use portal_tools::ToolRegistry;
use rusqlite::{Connection, params};

const TURNS: u32 = 10_000;
const COMPACTION_TURN: u32 = 100;

fn json(block: &Block) -> String {
    serde_json::to_string(block).expect("json")
}

/// Writes `TURNS` answered turns into conversation `id` in one transaction, with a compaction in
/// turn `COMPACTION_TURN`, and every other turn older than the window's reach unreadable, so
/// that reading one of them fails.
fn fill(database: &std::path::Path, id: &str) {
    let mut c = Connection::open(database).expect("database");
    c.busy_timeout(std::time::Duration::from_secs(10))
        .expect("timeout");
    let t = c.transaction().expect("transaction");
    let summary = Block::Compaction {
        summary: "Turns 1–99: the person planned a bakery's launch.".into(),
        trigger: CompactionTrigger::Auto,
        covers: TurnsCovered { first: 1, last: 99 },
        kept_messages: 0,
    };
    for turn in 1..=TURNS {
        let readable = turn == COMPACTION_TURN || turn > TURNS - 50;
        t.execute(
            "INSERT INTO turns (conversation_id, turn, kind, status) VALUES (?1, ?2, 'chat', 'completed')",
            params![id, turn],
        )
        .expect("turn");
        for (message, role) in [(0, "user"), (1, "assistant")] {
            t.execute(
                "INSERT INTO messages (conversation_id, turn, message, role) VALUES (?1, ?2, ?3, ?4)",
                params![id, turn, message, role],
            )
            .expect("message");
        }
        let question = if readable {
            json(&Block::text(format!("Question {turn}")))
        } else {
            "this is not a block".to_string()
        };
        let mut answers = Vec::new();
        if turn == COMPACTION_TURN {
            answers.push(("compaction", json(&summary)));
        }
        answers.push(("text", json(&Block::text(format!("Answer {turn}")))));
        t.execute(
            "INSERT INTO blocks (conversation_id, turn, message, block, kind, body) VALUES (?1, ?2, 0, 0, 'text', ?3)",
            params![id, turn, question],
        )
        .expect("question");
        for (place, (kind, body)) in answers.into_iter().enumerate() {
            t.execute(
                "INSERT INTO blocks (conversation_id, turn, message, block, kind, body) VALUES (?1, ?2, 1, ?3, ?4, ?5)",
                params![id, turn, place, kind, body],
            )
            .expect("answer");
        }
    }
    t.commit().expect("committed");
}

#[test]
fn m1_storage_loads_the_latest_turns_and_the_newest_compaction_only() {
    let data = tempfile::tempdir().expect("tempdir");
    let storage = SqliteStorage::open(data.path()).expect("storage");
    let owner = portal_store::Owner::new("local", "local");
    let id = storage
        .create_conversation(&owner, "assistant")
        .expect("opens");
    fill(
        &data.path().join(portal_store_sqlite::DATABASE_FILE),
        id.as_str(),
    );
    let recent = storage
        .load_recent("local", &id, 20)
        .expect("M1: only readable turns are read");
    let indices: Vec<u32> = recent.transcript.turns.iter().map(|t| t.index).collect();
    let mut expected = vec![COMPACTION_TURN];
    expected.extend(TURNS - 20..=TURNS);
    assert_eq!(indices, expected);
    assert_eq!(recent.newest_compaction, Some(COMPACTION_TURN));
    assert!(
        storage.load_transcript("local", &id).is_err(),
        "the whole conversation holds unreadable turns, so a whole load would fail"
    );
}

#[tokio::test]
async fn m1_the_calls_of_a_turn_in_a_10000_turn_conversation_read_only_memorys_window() {
    let data = tempfile::tempdir().expect("tempdir");
    let storage = Arc::new(SqliteStorage::open(data.path()).expect("storage"));
    let owner = portal_store::Owner::new("local", "local");
    let id = storage
        .create_conversation(&owner, "assistant")
        .expect("opens");
    fill(
        &data.path().join(portal_store_sqlite::DATABASE_FILE),
        id.as_str(),
    );
    let turns = Turns::new(
        storage.clone(),
        ToolRegistry::standard(),
        Default::default(),
        Default::default(),
        Default::default(),
        None,
    );
    let models = ModelRegistry::demo_only(0.0);
    let setup = TurnSetup {
        org_id: "local".into(),
        user_id: "local".into(),
        instructions: String::new(),
        project_instructions: String::new(),
        model: Arc::clone(models.default_model()),
        price: None,
        selected_skills: Vec::new(),
        catalogue: Vec::new(),
        effort: Effort::Medium,
        tools: ToolRegistry::standard(),
    };
    // Every model call of the turn reads what memory replays, and none an unreadable older turn.
    let message = Message::new(Role::User, vec![Block::text("How long is this sentence?")]);
    let turn = turns
        .start(&id, NewTurn::chat(message), setup)
        .await
        .expect("the turn opens");
    assert_eq!(turn, TURNS + 1);
    let events = common::logged_events(&turns, &id, turn).await;
    assert_eq!(
        events.last(),
        Some(&TurnEvent::TurnEnd {
            status: TurnStatus::Completed,
            reason: None
        }),
        "M1: the calls read no turn outside the window"
    );
    let recent = storage.load_recent("local", &id, 0).expect("latest");
    let answered = recent.transcript.turns[0]
        .messages
        .iter()
        .flat_map(|m| &m.blocks)
        .any(|b| matches!(b, Block::Text { text } if !text.is_empty()));
    assert!(answered, "the model answered");
}
