//! The storage suite, run unchanged on SQLite and on PostgreSQL (`databases`): transcripts
//! written the way the turn loop writes them (block by block, text in deltas) load back whole and
//! valid, including after a crash mid-turn.

use crate::databases;
use crate::fixtures;

use databases::Database;

use std::time::{Duration, Instant};

use portal_core::attachment::{Attachment, Document, Picture, ReadingStatus};
use portal_core::effort::Effort;
use portal_core::usage::{Price, Tokens};
use portal_core::{
    Block, BlockKind, Message, Role, TraceEntry, Transcript, Turn, TurnKind, TurnStatus, validate,
};
use portal_store::{
    CallPurpose, ConversationChange, ConversationId, ImportedConversation, ImportedProject,
    ImportedWork, ListCursor, NewApiKey, NewProject, NewShareLink, NewTurn, Owner, PausedClaim,
    ProjectChange, ProjectConversations, ProjectFilter, ShareVisibility, SignInPlaces, SsoAccount,
    SsoSignIn, SsoSignInLimits, Storage, StorageError, TurnRef, Usage,
};
use portal_store_sqlite::{DATABASE_FILE, SCHEMA_VERSION, SqliteStorage};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use tempfile::TempDir;

fn owner() -> Owner {
    Owner::new("org_a", "user_1")
}

/// Splits `text` into deltas of `size` characters, as a model streams it.
fn deltas(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(size.max(1))
        .map(|chunk| chunk.iter().collect())
        .collect()
}

/// The block with its streamed text taken out, and that text, for a kind that streams.
fn streamed_start(block: &Block) -> Option<(Block, String)> {
    match block {
        Block::Thinking { text } => Some((
            Block::Thinking {
                text: String::new(),
            },
            text.clone(),
        )),
        Block::Text { text } => Some((Block::text(""), text.clone())),
        Block::ToolResult {
            call_id,
            content,
            is_error,
            pictures,
        } => Some((
            Block::ToolResult {
                call_id: call_id.clone(),
                content: String::new(),
                is_error: *is_error,
                pictures: pictures.clone(),
            },
            content.clone(),
        )),
        _ => None,
    }
}

/// Writes `transcript` through the storage API the way the turn loop would, streaming every
/// text in deltas of `delta_chars` characters.
fn write_transcript(
    storage: &dyn Storage,
    owner: &Owner,
    transcript: &Transcript,
    delta_chars: usize,
) -> ConversationId {
    let id = storage
        .create_conversation(owner, "agent_1")
        .expect("conversation opens");
    for turn in &transcript.turns {
        let user = &turn.messages[0];
        for attachment in &user.attachments {
            if storage.attachment(owner, attachment.id()).is_err() {
                storage
                    .put_attachment(owner, attachment, &mut &b"uploaded bytes"[..], 14, u64::MAX)
                    .expect("attachment is stored");
            }
        }
        let (first_trace, later_trace) = turn.trace.split_at(turn.trace.len().min(1));
        let index = storage
            .open_turn(
                &id,
                NewTurn {
                    kind: turn.kind,
                    effort: turn.effort,
                    trace: first_trace.to_vec(),
                    message: user.clone(),
                    ..NewTurn::chat(user.clone())
                },
            )
            .expect("turn opens");
        assert_eq!(index, turn.index);
        for entry in later_trace {
            storage
                .add_trace(&id, index, entry)
                .expect("trace is added");
        }
        for message in &turn.messages[1..] {
            let m = storage
                .append_message(&id, index, message.role)
                .expect("message starts");
            for block in &message.blocks {
                match streamed_start(block) {
                    Some((start, text)) => {
                        let b = storage
                            .append_block(&id, index, m, &start)
                            .expect("block starts");
                        for delta in deltas(&text, delta_chars) {
                            storage
                                .append_block_text(&id, index, m, b, &delta)
                                .expect("delta is written");
                        }
                    }
                    None => {
                        storage
                            .append_block(&id, index, m, block)
                            .expect("block is written");
                    }
                }
            }
        }
        if let Some(tokens) = turn.context_tokens {
            storage
                .set_context_tokens(&id, index, tokens)
                .expect("context size is set");
        }
        storage
            .set_turn_status(&id, index, turn.status)
            .expect("status is set");
    }
    id
}

/// Every valid transcript the project keeps as a fixture: the shared transcript fixtures and the
/// transcripts of the prompt fixtures.
pub(crate) fn valid_fixtures() -> Vec<(String, Transcript)> {
    let mut all: Vec<(String, Transcript)> = fixtures::TRANSCRIPTS
        .iter()
        .filter(|(name, _)| name.starts_with("valid-"))
        .map(|(name, json)| {
            let transcript = portal_core::parse_transcript(json).expect("fixture is valid");
            (name.to_string(), transcript)
        })
        .collect();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/prompt");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .expect("prompt fixtures are readable")
        .map(|entry| entry.expect("directory entry").path())
        .collect();
    paths.sort();
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("fixture is readable");
        let value: serde_json::Value = serde_json::from_str(&text).expect("fixture is JSON");
        let transcript: Transcript =
            serde_json::from_value(value["transcript"].clone()).expect("fixture has a transcript");
        validate(&transcript).expect("prompt fixture is valid");
        all.push((path.display().to_string(), transcript));
    }
    all
}

fn every_valid_fixture_round_trips_through_storage(db: &Database) {
    let storage = db.open();
    let fixtures = valid_fixtures();
    assert!(fixtures.len() >= 15, "the fixtures are found");
    for (name, transcript) in fixtures {
        let id = write_transcript(&*storage, &owner(), &transcript, 7);
        let loaded = storage
            .load_transcript("org_a", &id)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(loaded, transcript, "{name} loads back as written");
        validate(&loaded).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

fn full_turn_with_tool_calls_round_trips_and_validates(db: &Database) {
    let storage = db.open();
    let id = storage
        .create_conversation(&owner(), "agent_1")
        .expect("conversation opens");
    let user = Message::new(Role::User, vec![Block::text("Weather in Paris and Rome?")]);
    let turn = storage
        .open_turn(
            &id,
            NewTurn {
                kind: TurnKind::Chat,
                effort: Some(Effort::High),
                trace: vec![TraceEntry::SkillSelect {
                    skill_ids: vec!["weather".into()],
                }],
                ..NewTurn::chat(user.clone())
            },
        )
        .expect("turn opens");
    assert_eq!(turn, 1);

    let m = storage
        .append_message(&id, turn, Role::Assistant)
        .expect("assistant message");
    let thinking = storage
        .append_block(
            &id,
            turn,
            m,
            &Block::Thinking {
                text: String::new(),
            },
        )
        .expect("thinking starts");
    for delta in ["Two cities, ", "two calls."] {
        storage
            .append_block_text(&id, turn, m, thinking, delta)
            .expect("thinking streams");
    }
    let calls = [("call_paris", "Paris"), ("call_rome", "Rome")];
    for (call, city) in calls {
        storage
            .append_block(
                &id,
                turn,
                m,
                &Block::ToolUse {
                    id: call.into(),
                    name: "weather".into(),
                    input: serde_json::json!({ "city": city }),
                },
            )
            .expect("call is written");
    }
    let usage = |input_tokens| Usage {
        purpose: CallPurpose::Turn,
        model: "model-x".into(),
        tokens: Tokens::reported(input_tokens, 40),
        price: None,
    };
    storage
        .record_usage(&id, turn, &usage(1_200))
        .expect("usage row");

    let results = storage
        .append_message(&id, turn, Role::Tool)
        .expect("tool message");
    for (call, content) in [("call_rome", "24 °C"), ("call_paris", "18 °C")] {
        let b = storage
            .append_block(
                &id,
                turn,
                results,
                &Block::ToolResult {
                    call_id: call.into(),
                    content: String::new(),
                    is_error: false,
                    pictures: Vec::new(),
                },
            )
            .expect("result starts");
        storage
            .append_block_text(&id, turn, results, b, content)
            .expect("result streams");
    }

    let answer = storage
        .append_message(&id, turn, Role::Assistant)
        .expect("answer message");
    let text = storage
        .append_block(&id, turn, answer, &Block::text(""))
        .expect("answer starts");
    for delta in deltas("Paris is 18 °C, Rome 24 °C. 🌤️", 3) {
        storage
            .append_block_text(&id, turn, answer, text, &delta)
            .expect("answer streams");
    }
    storage
        .record_usage(&id, turn, &usage(1_450))
        .expect("usage row");
    storage
        .set_turn_status(&id, turn, TurnStatus::Completed)
        .expect("turn completes");

    let expected = Transcript {
        version: 1,
        turns: vec![Turn {
            index: 1,
            kind: TurnKind::Chat,
            status: TurnStatus::Completed,
            effort: Some(Effort::High),
            context_tokens: Some(1_450),
            trace: vec![TraceEntry::SkillSelect {
                skill_ids: vec!["weather".into()],
            }],
            messages: vec![
                user,
                Message::new(
                    Role::Assistant,
                    vec![
                        Block::Thinking {
                            text: "Two cities, two calls.".into(),
                        },
                        Block::ToolUse {
                            id: "call_paris".into(),
                            name: "weather".into(),
                            input: serde_json::json!({ "city": "Paris" }),
                        },
                        Block::ToolUse {
                            id: "call_rome".into(),
                            name: "weather".into(),
                            input: serde_json::json!({ "city": "Rome" }),
                        },
                    ],
                ),
                Message::new(
                    Role::Tool,
                    vec![
                        Block::ToolResult {
                            call_id: "call_rome".into(),
                            content: "24 °C".into(),
                            is_error: false,
                            pictures: Vec::new(),
                        },
                        Block::ToolResult {
                            call_id: "call_paris".into(),
                            content: "18 °C".into(),
                            is_error: false,
                            pictures: Vec::new(),
                        },
                    ],
                ),
                Message::new(
                    Role::Assistant,
                    vec![Block::text("Paris is 18 °C, Rome 24 °C. 🌤️")],
                ),
            ],
        }],
    };
    let loaded = storage.load_transcript("org_a", &id).expect("loads");
    assert_eq!(loaded, expected);
    validate(&loaded).expect("the stored turn is valid");
    assert_eq!(
        storage.usage("org_a", &id).expect("usage").len(),
        2,
        "a usage row per model call"
    );
}

/// Counts the rows of `table`, read straight from the database.
fn rows(db: &Database, table: &str) -> i64 {
    db.count(&format!("SELECT COUNT(*) FROM {table}"))
}

fn five_thousand_deltas_stream_into_one_block_and_load_whole(db: &Database) {
    let storage = db.open();
    let id = storage
        .create_conversation(&owner(), "agent_1")
        .expect("conversation opens");
    let turn = storage
        .open_turn(
            &id,
            NewTurn::chat(Message::new(Role::User, vec![Block::text("Write a lot")])),
        )
        .expect("turn opens");
    let m = storage
        .append_message(&id, turn, Role::Assistant)
        .expect("message");
    let b = storage
        .append_block(&id, turn, m, &Block::text(""))
        .expect("block");
    // 5,000 deltas of 10 bytes: 50 KB, mixing one- to four-byte characters.
    let pieces = ["abcdefghij", "héllo wö", "日本語x", "🇯🇵ab"];
    assert!(pieces.iter().all(|p| p.len() == 10));
    let mut expected = String::new();
    let started = Instant::now();
    for i in 0..5_000 {
        let delta = pieces[i % pieces.len()];
        expected.push_str(delta);
        storage
            .append_block_text(&id, turn, m, b, delta)
            .expect("delta is written");
    }
    let streamed = started.elapsed();
    assert_eq!(expected.len(), 50_000);

    let started = Instant::now();
    let live = storage
        .load_transcript("org_a", &id)
        .expect("loads mid-stream");
    let load_mid = started.elapsed();
    assert_eq!(live.turns[0].messages[1].blocks[0], Block::text(&expected));
    assert_eq!(rows(db, "block_chunks"), 5_000);

    let started = Instant::now();
    storage
        .set_turn_status(&id, turn, TurnStatus::Completed)
        .expect("turn completes");
    let fold = started.elapsed();
    assert_eq!(
        rows(db, "block_chunks"),
        0,
        "an ended turn is stored as whole blocks"
    );
    let loaded = storage.load_transcript("org_a", &id).expect("loads");
    assert_eq!(
        loaded.turns[0].messages[1].blocks[0],
        Block::text(&expected)
    );
    validate(&loaded).expect("valid");
    eprintln!(
        "5,000 deltas (50 KB): streamed in {streamed:?} ({:?} each), loaded mid-stream in {load_mid:?}, folded in {fold:?}",
        streamed / 5_000
    );
}

/// Writes a turn that stops mid-way: text streamed in part, a call made and never answered, and
/// a message started without a block. Returns the conversation.
fn write_interrupted_turn(storage: &dyn Storage) -> ConversationId {
    let id = storage
        .create_conversation(&owner(), "agent_1")
        .expect("conversation opens");
    let first = write_answered_turn(storage, &id);
    storage
        .set_turn_status(&id, first, TurnStatus::Completed)
        .expect("first turn completes");
    let turn = storage
        .open_turn(
            &id,
            NewTurn::chat(Message::new(
                Role::User,
                vec![Block::text("Check the logs")],
            )),
        )
        .expect("second turn opens");
    let m = storage
        .append_message(&id, turn, Role::Assistant)
        .expect("message");
    let b = storage
        .append_block(&id, turn, m, &Block::text(""))
        .expect("block");
    for delta in ["Looking at ", "the logs 📜 ", "now."] {
        storage
            .append_block_text(&id, turn, m, b, delta)
            .expect("delta");
    }
    storage
        .append_block(
            &id,
            turn,
            m,
            &Block::ToolUse {
                id: "call_logs".into(),
                name: "read_logs".into(),
                input: serde_json::json!({ "since": "1h" }),
            },
        )
        .expect("call");
    storage
        .append_message(&id, turn, Role::Tool)
        .expect("tool message starts, no result yet");
    id
}

/// Writes a running turn answered "Hi!" and returns its index.
fn write_answered_turn(storage: &dyn Storage, id: &ConversationId) -> u32 {
    let turn = storage
        .open_turn(
            id,
            NewTurn::chat(Message::new(Role::User, vec![Block::text("Hello")])),
        )
        .expect("turn opens");
    let m = storage
        .append_message(id, turn, Role::Assistant)
        .expect("message");
    storage
        .append_block(id, turn, m, &Block::text("Hi!"))
        .expect("answer");
    turn
}

fn m10_crash_mid_turn_leaves_a_cut_off_turn_with_what_it_wrote(db: &Database) {
    let storage = db.open();
    let id = write_interrupted_turn(&*storage);
    // The process dies: its connections are never closed, so nothing is checkpointed or flushed
    // on the way out.
    std::mem::forget(storage);

    let storage = db.open();
    let recovered = storage.recover().expect("recovery runs");
    assert_eq!(
        recovered,
        vec![TurnRef {
            conversation: id.clone(),
            turn: 2
        }]
    );
    let loaded = storage.load_transcript("org_a", &id).expect("loads");
    validate(&loaded).expect("a cut-off turn is valid");
    let turn = &loaded.turns[1];
    assert_eq!(turn.status, TurnStatus::CutOff);
    assert_eq!(
        turn.messages,
        vec![
            Message::new(Role::User, vec![Block::text("Check the logs")]),
            Message::new(
                Role::Assistant,
                vec![
                    Block::text("Looking at the logs 📜 now."),
                    Block::ToolUse {
                        id: "call_logs".into(),
                        name: "read_logs".into(),
                        input: serde_json::json!({ "since": "1h" }),
                    },
                ],
            ),
        ],
        "the text written so far and the call it ran are kept; the empty tool message is not"
    );
    assert_eq!(loaded.turns[0].status, TurnStatus::Completed);
    assert_eq!(rows(db, "block_chunks"), 0, "recovery folds streamed text");
    assert!(
        storage.recover().expect("second recovery").is_empty(),
        "recovery is idempotent"
    );
}

fn m9_recovery_answers_no_call(db: &Database) {
    let storage = db.open();
    let id = write_interrupted_turn(&*storage);
    storage.recover().expect("recovery runs");
    let loaded = storage.load_transcript("org_a", &id).expect("loads");
    let results: Vec<&Block> = loaded.turns[1]
        .messages
        .iter()
        .flat_map(|m| &m.blocks)
        .filter(|b| b.kind() == BlockKind::ToolResult)
        .collect();
    assert!(
        results.is_empty(),
        "storage invents no answer; memory answers the call that never returned"
    );
}

fn recovery_leaves_paused_and_ended_turns_alone(db: &Database) {
    let storage = db.open();
    let id = storage
        .create_conversation(&owner(), "agent_1")
        .expect("conversation");
    let first = write_answered_turn(&*storage, &id);
    storage
        .set_turn_status(&id, first, TurnStatus::Paused)
        .expect("pauses");
    let second = write_answered_turn(&*storage, &id);
    storage
        .set_turn_status(&id, second, TurnStatus::Failed)
        .expect("fails");
    assert!(storage.recover().expect("recovery").is_empty());
    let loaded = storage.load_transcript("org_a", &id).expect("loads");
    let statuses: Vec<TurnStatus> = loaded.turns.iter().map(|t| t.status).collect();
    assert_eq!(statuses, vec![TurnStatus::Paused, TurnStatus::Failed]);
}

fn a_message_without_blocks_is_reused_then_left_out(db: &Database) {
    let storage = db.open();
    let id = storage
        .create_conversation(&owner(), "agent_1")
        .expect("conversation");
    let turn = write_answered_turn(&*storage, &id);
    let tool = storage
        .append_message(&id, turn, Role::Tool)
        .expect("message");
    let again = storage
        .append_message(&id, turn, Role::Assistant)
        .expect("message");
    assert_eq!(tool, again, "an empty last message is reused");
    let loaded = storage.load_transcript("org_a", &id).expect("loads");
    assert_eq!(
        loaded.turns[0].messages.len(),
        2,
        "the empty message is left out"
    );
    validate(&loaded).expect("valid");
}

// C2, C5: a call's output withdrawn after an overflow leaves storage with its streamed text;
// nothing before it, in its message or in earlier turns, changes, and a message it leaves empty
// is taken by the next one.
fn c2_withdrawn_blocks_leave_storage_and_nothing_before_them_changes(db: &Database) {
    let storage = db.open();
    let id = storage
        .create_conversation(&owner(), "agent_1")
        .expect("conversation");
    let first = write_answered_turn(&*storage, &id);
    storage
        .set_turn_status(&id, first, TurnStatus::Completed)
        .expect("completed");
    let earlier = storage.load_transcript("org_a", &id).expect("loads");
    let turn = storage
        .open_turn(
            &id,
            NewTurn::chat(Message::new(Role::User, vec![Block::text("Plan it")])),
        )
        .expect("turn opens");
    let m = storage
        .append_message(&id, turn, Role::Assistant)
        .expect("message");
    let kept = Block::text("Kept");
    storage.append_block(&id, turn, m, &kept).expect("kept");
    for (kind, text) in [
        (BlockKind::Thinking, "Four lines"),
        (BlockKind::Text, "Here is"),
    ] {
        let empty = match kind {
            BlockKind::Thinking => Block::Thinking {
                text: String::new(),
            },
            _ => Block::text(""),
        };
        let b = storage.append_block(&id, turn, m, &empty).expect("block");
        for delta in deltas(text, 3) {
            storage
                .append_block_text(&id, turn, m, b, &delta)
                .expect("delta");
        }
    }

    storage.withdraw_blocks(&id, turn, m, 1).expect("withdrawn");
    let loaded = storage.load_transcript("org_a", &id).expect("loads");
    assert_eq!(
        loaded.turns[0], earlier.turns[0],
        "an earlier turn is untouched"
    );
    assert_eq!(loaded.turns[1].messages[1].blocks, vec![kept]);
    assert_eq!(rows(db, "block_chunks"), 0, "the streamed text is gone too");
    storage
        .withdraw_blocks(&id, turn, m, 1)
        .expect("withdrawing nothing more removes nothing");

    storage.withdraw_blocks(&id, turn, m, 0).expect("withdrawn");
    let again = storage
        .append_message(&id, turn, Role::Assistant)
        .expect("message");
    assert_eq!(again, m, "the emptied message is taken again");
    storage
        .append_block(&id, turn, again, &Block::text("The answer"))
        .expect("answer");
    storage
        .set_turn_status(&id, turn, TurnStatus::Completed)
        .expect("completed");
    let loaded = storage.load_transcript("org_a", &id).expect("loads");
    assert_eq!(
        loaded.turns[1].messages[1].blocks,
        vec![Block::text("The answer")]
    );
    validate(&loaded).expect("valid");
    assert!(matches!(
        storage.withdraw_blocks(&id, turn, m, 0),
        Err(StorageError::TurnNotRunning { .. })
    ));
}

fn migrations_are_idempotent_on_reopen(db: &Database) {
    let storage = db.open();
    let id = write_transcript(&*storage, &owner(), &valid_fixtures()[0].1, 5);
    let before = storage.load_transcript("org_a", &id).expect("loads");
    drop(storage);
    for _ in 0..2 {
        let storage = db.open();
        assert_eq!(
            storage.load_transcript("org_a", &id).expect("loads"),
            before
        );
    }
    let known = match db {
        Database::Sqlite(_) => SCHEMA_VERSION,
        Database::Postgres { .. } => portal_store_postgres::SCHEMA_VERSION,
    };
    assert_eq!(db.schema_version(), i64::from(known));
}

#[test]
fn sqlite_keeps_its_log_in_wal_mode() {
    let dir = TempDir::new().expect("temporary folder");
    drop(SqliteStorage::open(dir.path()).expect("opens"));
    let connection =
        rusqlite::Connection::open(dir.path().join(DATABASE_FILE)).expect("database opens");
    let journal: String = connection
        .pragma_query_value(None, "journal_mode", |row| row.get(0))
        .expect("journal mode");
    assert_eq!(journal, "wal");
}

// What a readiness probe reads: the version the database holds now, which a newer build's
// migration moves past what this storage was opened at.
fn the_schema_version_is_read_from_the_database_as_it_is_now(db: &Database) {
    let storage = db.open();
    let known = match db {
        Database::Sqlite(_) => portal_server::SCHEMA_VERSIONS.sqlite,
        Database::Postgres { .. } => portal_server::SCHEMA_VERSIONS.postgres,
    };
    assert_eq!(storage.schema_version().expect("read"), known);
    db.set_schema_version(known + 1);
    assert_eq!(storage.schema_version().expect("read"), known + 1);
}

fn a_database_from_a_newer_build_is_refused(db: &Database) {
    drop(db.open());
    db.set_schema_version(999);
    let opened = match db {
        Database::Sqlite(dir) => SqliteStorage::open(dir.path()).map(|_| ()),
        Database::Postgres { url, .. } => {
            portal_store_postgres::PostgresStorage::connect(url).map(|_| ())
        }
    };
    match opened {
        Err(error @ StorageError::SchemaTooNew { .. }) => {
            assert!(
                error.to_string().contains("run that newer build"),
                "{error}"
            );
        }
        other => panic!("expected SchemaTooNew, got {other:?}"),
    }
}

// Replicas started at once on an empty PostgreSQL database migrate it once between them: the
// migrations take turns through an advisory lock, so none fails on a table another just made.
#[test]
fn replicas_starting_at_once_on_an_empty_postgres_database_migrate_it_once() {
    let Some(db) = Database::postgres() else {
        return;
    };
    let url = db.url();
    let starts = std::sync::Barrier::new(4);
    std::thread::scope(|scope| {
        let opened: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    starts.wait();
                    portal_store_postgres::PostgresStorage::connect(&url).map(drop)
                })
            })
            .collect();
        for start in opened {
            start
                .join()
                .expect("no panic")
                .expect("every replica opens");
        }
    });
    assert_eq!(
        db.schema_version(),
        i64::from(portal_store_postgres::SCHEMA_VERSION)
    );
    assert_eq!(db.count("SELECT count(*) FROM portal_schema"), 1);
}

// A replica started while its database is not listening yet (both starting at once) waits for
// it, as the pool did before its first connection was made on its own: here the database's port
// opens a second after the start, through a forwarder to the test PostgreSQL.
#[test]
fn a_database_that_starts_listening_a_second_late_is_waited_for() {
    let Some(db) = Database::postgres() else {
        return;
    };
    let url = db.url();
    let real = url
        .strip_prefix("postgres://postgres@")
        .and_then(|rest| rest.split_once('/'))
        .map(|(address, _)| address.to_string())
        .expect("the test URL names host:port");
    let late = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = late.local_addr().expect("an address").port();
    drop(late);
    let late_url = url.replacen(&real, &format!("127.0.0.1:{port}"), 1);
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(1));
        let listener = std::net::TcpListener::bind(("127.0.0.1", port)).expect("the port again");
        for client in listener.incoming() {
            let (Ok(client), Ok(server)) = (client, std::net::TcpStream::connect(&real)) else {
                continue;
            };
            for (mut from, mut to) in [
                (
                    client.try_clone().expect("clone"),
                    server.try_clone().expect("clone"),
                ),
                (server, client),
            ] {
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut from, &mut to);
                    let _ = to.shutdown(std::net::Shutdown::Both);
                });
            }
        }
    });
    let started = Instant::now();
    portal_store_postgres::PostgresStorage::connect(&late_url).expect("the database is waited for");
    let waited = started.elapsed();
    assert!(
        (std::time::Duration::from_millis(900)..std::time::Duration::from_secs(10))
            .contains(&waited),
        "{waited:?}"
    );
}

#[test]
fn open_creates_the_data_folder() {
    let dir = TempDir::new().expect("temporary folder");
    let data = dir.path().join("nested").join("portal-data");
    let storage = SqliteStorage::open(&data).expect("opens");
    assert_eq!(storage.path(), Some(data.join(DATABASE_FILE).as_path()));
    assert!(data.join(DATABASE_FILE).is_file());
}

fn picture(id: &str) -> Attachment {
    Attachment::Picture(Picture {
        id: id.into(),
        filename: "cat.png".into(),
        media_type: "image/png".into(),
        width: 800,
        height: 600,
    })
}

// Issue 48: a tool's picture is its owner's attachment: counted against their quota, found by
// them alone (another user of the organisation, or of another, finds nothing), and deleted with
// the conversation it was kept in.
fn a_tools_picture_is_the_owners_counted_and_deleted_with_its_conversation(db: &Database) {
    let storage = db.open();
    let alice = owner();
    let id = storage
        .create_conversation(&alice, "agent_1")
        .expect("conversation");
    let refused =
        storage.put_tool_picture(&alice, &id, &picture("pic_0"), &mut &b"\x89PNG"[..], 4, 3);
    assert!(
        matches!(
            refused,
            Err(StorageError::QuotaExceeded {
                used: 0,
                size: 4,
                quota: 3
            })
        ),
        "{refused:?}"
    );
    storage
        .put_tool_picture(&alice, &id, &picture("pic_1"), &mut &b"\x89PNG"[..], 4, 4)
        .expect("kept within the quota");
    let full = storage.put_tool_picture(&alice, &id, &picture("pic_2"), &mut &b"\x89PNG"[..], 4, 4);
    assert!(
        matches!(full, Err(StorageError::QuotaExceeded { used: 4, .. })),
        "{full:?}"
    );
    assert_eq!(
        storage.attachment(&alice, "pic_1").expect("the owner's"),
        picture("pic_1")
    );
    for other in [Owner::new("org_a", "user_2"), Owner::new("org_b", "user_1")] {
        assert!(
            storage.attachment(&other, "pic_1").is_err(),
            "{other:?} finds nothing"
        );
    }
    storage.delete_conversation(&alice, &id).expect("deleted");
    assert!(
        storage.attachment(&alice, "pic_1").is_err(),
        "gone with its conversation"
    );
    assert!(
        storage.attachment_bytes("org_a", "pic_1").is_err(),
        "its bytes too"
    );
}

fn another_organisation_sees_nothing_of_a_conversation(db: &Database) {
    let storage = db.open();
    let alice = owner();
    let mallory = Owner::new("org_b", "user_1");
    storage
        .put_attachment(&alice, &picture("pic_1"), &mut &b"\x89PNG"[..], 4, u64::MAX)
        .expect("stored");
    let mut message = Message::new(Role::User, vec![Block::text("Look")]);
    message.attachments.push(picture("pic_1"));
    let id = storage
        .create_conversation(&alice, "agent_1")
        .expect("conversation");
    let turn = storage
        .open_turn(&id, NewTurn::chat(message))
        .expect("turn opens");
    storage
        .record_usage(
            &id,
            turn,
            &Usage {
                purpose: CallPurpose::Turn,
                model: "m".into(),
                tokens: Tokens::reported(1, 1),
                price: None,
            },
        )
        .expect("usage");

    let not_found = |result: Result<(), StorageError>| match result {
        Err(StorageError::ConversationNotFound { conversation }) => assert_eq!(conversation, id),
        other => panic!("expected not found, got {other:?}"),
    };
    not_found(storage.conversation("org_b", &id).map(drop));
    not_found(storage.load_transcript("org_b", &id).map(drop));
    not_found(storage.usage("org_b", &id).map(drop));
    assert!(
        storage
            .list_conversations(&mallory, &everything())
            .expect("lists")
            .conversations
            .is_empty()
    );
    assert!(matches!(
        storage.attachment(&mallory, "pic_1"),
        Err(StorageError::AttachmentNotFound { .. })
    ));
    assert!(matches!(
        storage.attachment_bytes("org_b", "pic_1"),
        Err(StorageError::AttachmentNotFound { .. })
    ));

    let theirs = storage
        .create_conversation(&mallory, "agent_1")
        .expect("conversation");
    let mut borrowed = Message::new(Role::User, vec![Block::text("Steal")]);
    borrowed.attachments.push(picture("pic_1"));
    assert!(
        matches!(
            storage.open_turn(&theirs, NewTurn::chat(borrowed)),
            Err(StorageError::AttachmentNotFound { .. })
        ),
        "a message cannot carry another organisation's attachment"
    );
    assert!(
        storage
            .load_transcript("org_b", &theirs)
            .expect("loads")
            .turns
            .is_empty(),
        "the refused turn left nothing behind"
    );

    let info = storage.conversation("org_a", &id).expect("owner sees it");
    assert_eq!(info.owner, alice);
    let listed = storage
        .list_conversations(&alice, &everything())
        .expect("lists");
    assert_eq!(
        listed
            .conversations
            .iter()
            .map(|c| &c.id)
            .collect::<Vec<_>>(),
        [&info.id]
    );
    assert_eq!(
        storage.attachment_bytes("org_a", "pic_1").expect("bytes"),
        b"\x89PNG"
    );
}

/// Issue 29: a row keeps the price it was priced at when the models file changes, and deleting
/// a conversation leaves its usage for quotas and reports.
fn usage_rows_keep_the_price_they_were_written_with_and_outlive_their_conversation(db: &Database) {
    let storage = db.open();
    let id = storage
        .create_conversation(&owner(), "agent_1")
        .expect("conversation");
    let turn = write_answered_turn(&*storage, &id);
    let priced = |input: f64| Usage {
        purpose: CallPurpose::Turn,
        model: "model-x".into(),
        tokens: Tokens {
            cached_input: 400,
            reasoning: 7,
            estimated: true,
            ..Tokens::reported(1_000, 50)
        },
        price: Some(Price::per_million("EUR", input, Some(0.25), 10.0).expect("price")),
    };
    for usage in [priced(2.0), priced(4.0)] {
        storage.record_usage(&id, turn, &usage).expect("usage row");
    }
    let rows = storage.usage("org_a", &id).expect("usage");
    assert_eq!(
        rows.iter().map(|r| r.usage.clone()).collect::<Vec<_>>(),
        vec![priced(2.0), priced(4.0)],
        "each row as written, with its own price"
    );
    let costs: Vec<u64> = rows
        .iter()
        .map(|r| r.usage.cost().expect("priced").nanos)
        .collect();
    assert_eq!(
        costs,
        vec![
            600 * 2_000 + 400 * 250 + 50 * 10_000,
            600 * 4_000 + 400 * 250 + 50 * 10_000
        ]
    );
    storage
        .set_turn_status(&id, turn, TurnStatus::Completed)
        .expect("ended");
    storage.delete_conversation(&owner(), &id).expect("deleted");
    let sql = format!(
        "SELECT count(*) FROM usage WHERE conversation_id = '{}' AND org_id = 'org_a'",
        id.as_str()
    );
    assert_eq!(db.count(&sql), 2, "the usage outlives the conversation");
}

fn c11_turn_calls_set_the_context_size_and_compaction_calls_leave_only_a_usage_row(db: &Database) {
    let storage = db.open();
    let id = storage
        .create_conversation(&owner(), "agent_1")
        .expect("conversation");
    let turn = write_answered_turn(&*storage, &id);
    let call = |purpose, input_tokens| Usage {
        purpose,
        model: "turn-model".into(),
        tokens: Tokens::reported(input_tokens, 10),
        price: None,
    };
    let context = |storage: &dyn Storage| {
        storage.load_transcript("org_a", &id).expect("loads").turns[0].context_tokens
    };
    storage
        .record_usage(&id, turn, &call(CallPurpose::Turn, 90_000))
        .expect("usage");
    assert_eq!(context(&*storage), Some(90_000));
    storage
        .record_usage(&id, turn, &call(CallPurpose::Compaction, 110_000))
        .expect("usage");
    assert_eq!(
        context(&*storage),
        Some(90_000),
        "a compaction call carries no context size"
    );
    storage
        .record_usage(&id, turn, &call(CallPurpose::Turn, 12_000))
        .expect("usage");
    assert_eq!(
        context(&*storage),
        Some(12_000),
        "each call on the turn's model overwrites it"
    );
    let rows = storage.usage("org_a", &id).expect("usage");
    let purposes: Vec<CallPurpose> = rows.iter().map(|r| r.usage.purpose).collect();
    assert_eq!(
        purposes,
        vec![
            CallPurpose::Turn,
            CallPurpose::Compaction,
            CallPurpose::Turn
        ]
    );
    assert!(
        rows.iter()
            .all(|r| r.usage.model == "turn-model" && r.turn == 1),
        "the compaction row is priced at the turn's model"
    );

    storage
        .set_turn_status(&id, turn, TurnStatus::CutOff)
        .expect("cut off");
    storage
        .record_usage(&id, turn, &call(CallPurpose::Turn, 500))
        .expect("a late call still leaves its row");
    assert_eq!(
        context(&*storage),
        Some(12_000),
        "an ended turn is not rewritten"
    );
    assert_eq!(storage.usage("org_a", &id).expect("usage").len(), 4);
}

fn a1_an_attachment_keeps_the_kind_it_was_stored_with(db: &Database) {
    let storage = db.open();
    let reading = Document {
        id: "doc_1".into(),
        filename: "report.pdf".into(),
        media_type: "application/pdf".into(),
        status: ReadingStatus::Reading,
        pages_read: 1,
        pages_total: 3,
        stopped_by: None,
        unreadable_pages: Vec::new(),
        headings: Vec::new(),
        text: None,
    };
    storage
        .put_attachment(
            &owner(),
            &Attachment::Document(reading.clone()),
            &mut &b"%PDF"[..],
            4,
            u64::MAX,
        )
        .expect("stored");
    let finished = Attachment::Document(Document {
        status: ReadingStatus::Finished,
        pages_read: 3,
        text: Some("Findings.".into()),
        ..reading
    });
    storage
        .update_attachment("org_a", &finished)
        .expect("reading progress is stored");
    assert_eq!(
        storage.attachment(&owner(), "doc_1").expect("read"),
        finished
    );
    assert!(matches!(
        storage.update_attachment("org_a", &picture("doc_1")),
        Err(StorageError::AttachmentKindChanged {
            stored: "document",
            ..
        })
    ));
    assert!(matches!(
        storage.put_attachment(&owner(), &picture("doc_1"), &mut &b""[..], 0, u64::MAX),
        Err(StorageError::AttachmentExists { .. })
    ));
    assert_eq!(
        storage.attachment(&owner(), "doc_1").expect("read"),
        finished
    );
}

fn a_loaded_message_shows_its_attachment_as_last_stored(db: &Database) {
    let storage = db.open();
    storage
        .put_attachment(&owner(), &picture("pic_1"), &mut &b""[..], 0, u64::MAX)
        .expect("stored");
    let id = storage
        .create_conversation(&owner(), "agent_1")
        .expect("conversation");
    let mut message = Message::new(Role::User, vec![Block::text("Look")]);
    message.attachments.push(picture("pic_1"));
    storage
        .open_turn(&id, NewTurn::chat(message.clone()))
        .expect("turn opens");
    let loaded = storage.load_transcript("org_a", &id).expect("loads");
    assert_eq!(loaded.turns[0].messages[0], message);
}

fn a2_a_text_document_stored_without_its_text_is_loaded_with_it_from_its_bytes(db: &Database) {
    let storage = db.open();
    let stored = Document {
        id: "doc_notes".into(),
        filename: "notes.md".into(),
        media_type: "text/markdown".into(),
        status: ReadingStatus::Finished,
        pages_read: 0,
        pages_total: 0,
        stopped_by: None,
        unreadable_pages: Vec::new(),
        headings: vec!["Notes".into()],
        text: None,
    };
    let bytes = "\u{feff}# Notes\r\n\r\nHerons by the weir.\r\n";
    storage
        .put_attachment(
            &owner(),
            &Attachment::Document(stored.clone()),
            &mut bytes.as_bytes(),
            bytes.len() as u64,
            u64::MAX,
        )
        .expect("stored");
    let read = Attachment::Document(Document {
        text: Some("# Notes\n\nHerons by the weir.".into()),
        ..stored.clone()
    });
    assert_eq!(
        storage.attachment(&owner(), "doc_notes").expect("read"),
        read
    );
    assert_eq!(
        storage
            .attachment_bytes("org_a", "doc_notes")
            .expect("bytes"),
        bytes.as_bytes(),
        "the bytes are stored as sent"
    );
    let id = storage
        .create_conversation(&owner(), "agent_1")
        .expect("conversation");
    let mut message = Message::new(Role::User, vec![Block::text("Read this")]);
    message.attachments.push(Attachment::Document(stored));
    storage
        .open_turn(&id, NewTurn::chat(message))
        .expect("turn opens");
    let loaded = storage.load_transcript("org_a", &id).expect("loads");
    assert_eq!(
        loaded.turns[0].messages[0].attachments,
        std::slice::from_ref(&read)
    );
    let recent = storage.load_recent("org_a", &id, 4).expect("loads");
    assert_eq!(recent.transcript.turns[0].messages[0].attachments, [read]);
    // Bytes that are not all there are refused, and nothing is stored.
    let error = storage
        .put_attachment(
            &owner(),
            &picture("pic_short"),
            &mut &b"\x89PNG"[..],
            8,
            u64::MAX,
        )
        .expect_err("4 of 8 bytes");
    assert!(
        matches!(error, StorageError::UploadUnread { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("4 of its 8 bytes"), "{error}");
    assert!(matches!(
        storage.attachment(&owner(), "pic_short"),
        Err(StorageError::AttachmentNotFound { .. })
    ));
}

fn an_ended_turn_is_never_rewritten(db: &Database) {
    let storage = db.open();
    let id = storage
        .create_conversation(&owner(), "agent_1")
        .expect("conversation");
    let turn = write_answered_turn(&*storage, &id);
    assert!(matches!(
        storage.open_turn(
            &id,
            NewTurn::chat(Message::new(Role::User, vec![Block::text("again")]))
        ),
        Err(StorageError::TurnStillRunning { turn: 1, .. })
    ));
    storage
        .set_turn_status(&id, turn, TurnStatus::CutOff)
        .expect("cut off");
    storage
        .set_turn_status(&id, turn, TurnStatus::CutOff)
        .expect("setting the same status again is harmless");
    assert!(matches!(
        storage.set_turn_status(&id, turn, TurnStatus::Completed),
        Err(StorageError::TurnEnded {
            status: TurnStatus::CutOff,
            ..
        })
    ));
    assert!(matches!(
        storage.append_block_text(&id, turn, 1, 0, "late delta"),
        Err(StorageError::TurnNotRunning { .. })
    ));
    assert!(matches!(
        storage.append_block(&id, turn, 1, &Block::text("late")),
        Err(StorageError::TurnNotRunning { .. })
    ));
    assert!(matches!(
        storage.add_trace(
            &id,
            turn,
            &TraceEntry::CompactionFailed {
                reason: "late".into()
            }
        ),
        Err(StorageError::TurnEnded { .. })
    ));
    let loaded = storage.load_transcript("org_a", &id).expect("loads");
    assert_eq!(loaded.turns[0].messages[1].blocks, vec![Block::text("Hi!")]);
}

fn a_paused_turn_takes_no_blocks_until_it_runs_again_and_a_new_turn_may_follow_it(db: &Database) {
    let storage = db.open();
    let id = storage
        .create_conversation(&owner(), "agent_1")
        .expect("conversation");
    let turn = write_answered_turn(&*storage, &id);
    storage
        .set_turn_status(&id, turn, TurnStatus::Paused)
        .expect("pauses");
    assert!(matches!(
        storage.append_block(&id, turn, 1, &Block::text("more")),
        Err(StorageError::TurnNotRunning {
            status: TurnStatus::Paused,
            ..
        })
    ));
    storage
        .set_turn_status(&id, turn, TurnStatus::Running)
        .expect("resumes");
    storage
        .append_block(&id, turn, 1, &Block::text("more"))
        .expect("a resumed turn takes blocks");
    storage
        .set_turn_status(&id, turn, TurnStatus::Paused)
        .expect("pauses again");
    let next = storage
        .open_turn(
            &id,
            NewTurn::chat(Message::new(Role::User, vec![Block::text("Yes")])),
        )
        .expect("a new turn may follow a paused one");
    assert_eq!(next, 2);
}

/// Writes a turn paused on the approval of one call (2 messages) and returns its index.
fn write_paused_turn(storage: &dyn Storage, id: &ConversationId) -> u32 {
    let turn = storage
        .open_turn(
            id,
            NewTurn::chat(Message::new(Role::User, vec![Block::text("Publish it")])),
        )
        .expect("turn opens");
    let m = storage
        .append_message(id, turn, Role::Assistant)
        .expect("message");
    for block in [
        Block::ToolUse {
            id: "call_1".into(),
            name: "publish_note".into(),
            input: serde_json::json!({ "title": "t", "text": "x" }),
        },
        Block::ApprovalRequest {
            call_id: "call_1".into(),
            summary: "Publish the note".into(),
        },
    ] {
        storage.append_block(id, turn, m, &block).expect("block");
    }
    storage
        .set_turn_status(id, turn, TurnStatus::Paused)
        .expect("pauses");
    turn
}

fn of_many_claims_on_a_paused_turn_at_once_exactly_one_resumes_it(db: &Database) {
    let storage = db.open();
    for round in 0..20 {
        let id = storage
            .create_conversation(&owner(), "agent_1")
            .expect("conversation");
        let turn = write_paused_turn(&*storage, &id);
        let start = std::sync::Barrier::new(8);
        let outcomes: Vec<Result<(), StorageError>> = std::thread::scope(|scope| {
            let claims: Vec<_> = (0..8)
                .map(|_| {
                    scope.spawn(|| {
                        start.wait();
                        storage.claim_paused(&id, turn, 2, PausedClaim::Resume)
                    })
                })
                .collect();
            claims
                .into_iter()
                .map(|c| c.join().expect("claim"))
                .collect()
        });
        let won = outcomes.iter().filter(|o| o.is_ok()).count();
        assert_eq!(won, 1, "round {round}: {outcomes:?}");
        assert!(
            outcomes
                .iter()
                .filter_map(|o| o.as_ref().err())
                .all(|e| matches!(e, StorageError::AlreadyResumed { .. })),
            "round {round}: {outcomes:?}"
        );
        let loaded = storage.load_transcript("org_a", &id).expect("loads");
        assert_eq!(loaded.turns[0].status, TurnStatus::Running);
    }
}

fn of_a_cancel_and_resumes_claiming_a_paused_turn_at_once_exactly_one_wins(db: &Database) {
    let storage = db.open();
    let mut cut_off = 0;
    for round in 0..20 {
        let id = storage
            .create_conversation(&owner(), "agent_1")
            .expect("conversation");
        let turn = write_paused_turn(&*storage, &id);
        let start = std::sync::Barrier::new(4);
        let claims = [
            PausedClaim::CutOff,
            PausedClaim::Resume,
            PausedClaim::Resume,
            PausedClaim::Resume,
        ];
        let outcomes: Vec<(PausedClaim, Result<(), StorageError>)> = std::thread::scope(|scope| {
            let running: Vec<_> = claims
                .iter()
                .map(|&claim| {
                    let (storage, id, start) = (&storage, &id, &start);
                    scope.spawn(move || {
                        start.wait();
                        (claim, storage.claim_paused(id, turn, 2, claim))
                    })
                })
                .collect();
            running
                .into_iter()
                .map(|c| c.join().expect("claim"))
                .collect()
        });
        let won: Vec<PausedClaim> = outcomes
            .iter()
            .filter(|(_, o)| o.is_ok())
            .map(|(claim, _)| *claim)
            .collect();
        let [won] = won.as_slice() else {
            panic!("round {round}: {outcomes:?}");
        };
        let loaded = storage.load_transcript("org_a", &id).expect("loads");
        assert_eq!(loaded.turns[0].status, won.status(), "round {round}");
        for (_, outcome) in &outcomes {
            match (won, outcome) {
                (_, Ok(())) => {}
                (PausedClaim::Resume, Err(StorageError::AlreadyResumed { .. }))
                | (
                    PausedClaim::CutOff,
                    Err(StorageError::TurnEnded {
                        status: TurnStatus::CutOff,
                        ..
                    }),
                ) => {}
                _ => panic!("round {round}: {outcomes:?}"),
            }
        }
        cut_off += usize::from(*won == PausedClaim::CutOff);
    }
    eprintln!("the cancel won {cut_off} of 20 rounds");
}

fn a_claim_made_on_a_pause_the_turn_has_moved_past_or_ended_is_refused(db: &Database) {
    let storage = db.open();
    let id = storage
        .create_conversation(&owner(), "agent_1")
        .expect("conversation");
    let turn = write_paused_turn(&*storage, &id);
    storage
        .claim_paused(&id, turn, 2, PausedClaim::Resume)
        .expect("claimed");
    let error = storage
        .claim_paused(&id, turn, 2, PausedClaim::Resume)
        .expect_err("running");
    assert!(
        error.to_string().contains("already answered or decided"),
        "{error}"
    );
    // The turn goes on and pauses again further on: a claim read at the first pause is late.
    let m = storage
        .append_message(&id, turn, Role::Tool)
        .expect("message");
    storage
        .append_block(
            &id,
            turn,
            m,
            &Block::ToolResult {
                call_id: "call_1".into(),
                content: "Published".into(),
                is_error: false,
                pictures: Vec::new(),
            },
        )
        .expect("result");
    let m = storage
        .append_message(&id, turn, Role::Assistant)
        .expect("message");
    storage
        .append_block(
            &id,
            turn,
            m,
            &Block::ClarificationRequest {
                id: "ask_1".into(),
                question: "Which title?".into(),
            },
        )
        .expect("question");
    storage
        .set_turn_status(&id, turn, TurnStatus::Paused)
        .expect("pauses again");
    assert!(matches!(
        storage.claim_paused(&id, turn, 2, PausedClaim::Resume),
        Err(StorageError::AlreadyResumed { .. })
    ));
    storage
        .claim_paused(&id, turn, 4, PausedClaim::Resume)
        .expect("a claim on the pause it has now");
    storage
        .set_turn_status(&id, turn, TurnStatus::CutOff)
        .expect("cut off");
    assert!(matches!(
        storage.claim_paused(&id, turn, 4, PausedClaim::Resume),
        Err(StorageError::TurnEnded {
            status: TurnStatus::CutOff,
            ..
        })
    ));
    assert!(matches!(
        storage.claim_paused(&id, turn + 1, 1, PausedClaim::Resume),
        Err(StorageError::TurnNotFound { .. })
    ));
}

fn an_upload_is_stored_only_within_its_owners_quota(db: &Database) {
    let storage = db.open();
    let alice = owner();
    storage
        .put_attachment(&alice, &picture("pic_1"), &mut &[0; 600][..], 600, 1_000)
        .expect("600 of 1,000 bytes");
    let error = storage
        .put_attachment(&alice, &picture("pic_2"), &mut &[0; 401][..], 401, 1_000)
        .expect_err("1,001 bytes");
    assert!(
        matches!(
            error,
            StorageError::QuotaExceeded {
                used: 600,
                size: 401,
                quota: 1_000
            }
        ),
        "{error}"
    );
    assert!(matches!(
        storage.attachment(&alice, "pic_2"),
        Err(StorageError::AttachmentNotFound { .. })
    ));
    storage
        .put_attachment(&alice, &picture("pic_3"), &mut &[0; 400][..], 400, 1_000)
        .expect("exactly the quota");
    storage
        .put_attachment(
            &Owner::new("org_a", "user_2"),
            &picture("pic_4"),
            &mut &[0; 1_000][..],
            1_000,
            1_000,
        )
        .expect("another user has a quota of their own");
}

fn writes_name_what_is_missing_or_wrong(db: &Database) {
    let storage = db.open();
    let id = storage
        .create_conversation(&owner(), "agent_1")
        .expect("conversation");
    let nowhere = ConversationId::new("nowhere");
    assert!(matches!(
        storage.append_message(&nowhere, 1, Role::Assistant),
        Err(StorageError::ConversationNotFound { .. })
    ));
    assert!(matches!(
        storage.append_message(&id, 1, Role::Assistant),
        Err(StorageError::TurnNotFound { turn: 1, .. })
    ));
    for message in [
        Message::new(Role::Assistant, vec![Block::text("hi")]),
        Message::new(Role::User, Vec::new()),
        Message::new(Role::User, vec![Block::Thinking { text: "hmm".into() }]),
    ] {
        assert!(matches!(
            storage.open_turn(&id, NewTurn::chat(message)),
            Err(StorageError::NotAUserMessage { .. })
        ));
    }
    let turn = write_answered_turn(&*storage, &id);
    assert!(matches!(
        storage.append_block(&id, turn, 5, &Block::text("x")),
        Err(StorageError::MessageNotFound { message: 5, .. })
    ));
    assert!(matches!(
        storage.append_block_text(&id, turn, 1, 9, "x"),
        Err(StorageError::BlockNotFound { block: 9, .. })
    ));
    let call = storage
        .append_block(
            &id,
            turn,
            1,
            &Block::ToolUse {
                id: "c1".into(),
                name: "t".into(),
                input: serde_json::Value::Null,
            },
        )
        .expect("call");
    match storage.append_block_text(&id, turn, 1, call, "x") {
        Err(error @ StorageError::NotStreamable { .. }) => {
            assert!(error.to_string().contains("tool_use block"), "{error}");
        }
        other => panic!("expected NotStreamable, got {other:?}"),
    }
}

/// One step of the turn loop, as the crash property replays it.
#[derive(Debug, Clone)]
enum Step {
    Open(String),
    Message(Role),
    Block(Block),
    Delta(String),
    End(TurnStatus),
}

/// A conversation of one to three turns, each with tool rounds, streamed in random pieces.
fn conversation_steps() -> impl Strategy<Value = Vec<Step>> {
    let piece = prop::sample::select(vec!["a", "bc", " ", "é", "日本", "👩‍💻", "e\u{301}", "\n"]);
    let text = prop::collection::vec(prop::collection::vec(piece, 1..4), 1..5);
    let round = (any::<bool>(), text.clone(), 0..3usize, text.clone());
    let turn = (
        prop::collection::vec(round, 0..3),
        text,
        prop::sample::select(vec![
            TurnStatus::Completed,
            TurnStatus::Failed,
            TurnStatus::CutOff,
        ]),
    );
    prop::collection::vec(turn, 1..4).prop_map(|turns| {
        let joined =
            |deltas: &[Vec<&str>]| -> Vec<String> { deltas.iter().map(|d| d.concat()).collect() };
        let mut steps = Vec::new();
        for (t, (rounds, answer, status)) in turns.into_iter().enumerate() {
            steps.push(Step::Open(format!("Question {t}")));
            for (r, (thinks, narration, calls, result)) in rounds.into_iter().enumerate() {
                steps.push(Step::Message(Role::Assistant));
                if thinks {
                    steps.push(Step::Block(Block::Thinking {
                        text: String::new(),
                    }));
                    steps.extend(joined(&narration).into_iter().map(Step::Delta));
                }
                steps.push(Step::Block(Block::text("")));
                steps.extend(joined(&narration).into_iter().map(Step::Delta));
                for c in 0..calls {
                    steps.push(Step::Block(Block::ToolUse {
                        id: format!("call_{t}_{r}_{c}"),
                        name: "search".into(),
                        input: serde_json::json!({ "q": c }),
                    }));
                }
                if calls > 0 {
                    steps.push(Step::Message(Role::Tool));
                    for c in 0..calls {
                        steps.push(Step::Block(Block::ToolResult {
                            call_id: format!("call_{t}_{r}_{c}"),
                            content: String::new(),
                            is_error: false,
                            pictures: Vec::new(),
                        }));
                        steps.extend(joined(&result).into_iter().map(Step::Delta));
                    }
                }
            }
            steps.push(Step::Message(Role::Assistant));
            steps.push(Step::Block(Block::text("")));
            steps.extend(joined(&answer).into_iter().map(Step::Delta));
            steps.push(Step::End(status));
        }
        steps
    })
}

/// What the transcript should be after `steps` and a crash, worked out without storage.
fn expected_after_crash(steps: &[Step]) -> Transcript {
    let mut transcript = Transcript::new();
    for step in steps {
        match step {
            Step::Open(text) => transcript.turns.push(Turn {
                index: transcript.turns.len() as u32 + 1,
                kind: TurnKind::Chat,
                status: TurnStatus::Running,
                effort: None,
                context_tokens: None,
                trace: Vec::new(),
                messages: vec![Message::new(Role::User, vec![Block::text(text)])],
            }),
            Step::Message(role) => {
                let messages = &mut transcript.turns.last_mut().expect("turn").messages;
                match messages.last_mut() {
                    Some(last) if last.blocks.is_empty() => last.role = *role,
                    _ => messages.push(Message::new(*role, Vec::new())),
                }
            }
            Step::Block(block) => last_message(&mut transcript).blocks.push(block.clone()),
            Step::Delta(delta) => {
                match last_message(&mut transcript)
                    .blocks
                    .last_mut()
                    .expect("block")
                {
                    Block::Thinking { text } | Block::Text { text } => text.push_str(delta),
                    Block::ToolResult { content, .. } => content.push_str(delta),
                    other => panic!("no text streams into {other:?}"),
                }
            }
            Step::End(status) => transcript.turns.last_mut().expect("turn").status = *status,
        }
    }
    for turn in &mut transcript.turns {
        if turn.status == TurnStatus::Running {
            turn.status = TurnStatus::CutOff;
            turn.trace.push(TraceEntry::TurnCutOff {
                reason: portal_core::turn_run::STOPPED_REASON.into(),
            });
        }
        turn.messages.retain(|m| !m.blocks.is_empty());
    }
    transcript
}

fn last_message(transcript: &mut Transcript) -> &mut Message {
    transcript
        .turns
        .last_mut()
        .and_then(|t| t.messages.last_mut())
        .expect("message")
}

/// Runs `steps` against storage as the turn loop would.
fn run_steps(storage: &dyn Storage, id: &ConversationId, steps: &[Step]) {
    let (mut turn, mut message, mut block) = (0, 0, 0);
    for step in steps {
        match step {
            Step::Open(text) => {
                turn = storage
                    .open_turn(
                        id,
                        NewTurn::chat(Message::new(Role::User, vec![Block::text(text)])),
                    )
                    .expect("turn opens");
            }
            Step::Message(role) => {
                message = storage
                    .append_message(id, turn, *role)
                    .expect("message starts");
            }
            Step::Block(content) => {
                block = storage
                    .append_block(id, turn, message, content)
                    .expect("block starts");
            }
            Step::Delta(delta) => storage
                .append_block_text(id, turn, message, block, delta)
                .expect("delta is written"),
            Step::End(status) => storage
                .set_turn_status(id, turn, *status)
                .expect("turn ends"),
        }
    }
}

/// Rule M10 at every point: wherever the process stops, recovery leaves a valid transcript
/// holding exactly what was written, the interrupted turn cut off.
fn m10_a_crash_at_any_step_leaves_a_valid_transcript_of_what_was_written(db: &Database) {
    let storage = db.open();
    let cases = conversation_steps().prop_flat_map(|steps| {
        let len = steps.len();
        (Just(steps), 0..=len)
    });
    let config = Config {
        source_file: Some(file!()),
        ..Config::default()
    };
    TestRunner::new(config)
        .run(&cases, |(steps, cut)| {
            let id = storage
                .create_conversation(&owner(), "agent_1")
                .expect("conversation");
            run_steps(&*storage, &id, &steps[..cut]);
            storage.recover().expect("recovery runs");
            let loaded = storage.load_transcript("org_a", &id).expect("loads");
            prop_assert!(validate(&loaded).is_ok(), "{:?}", validate(&loaded));
            prop_assert_eq!(loaded, expected_after_crash(&steps[..cut]));
            Ok(())
        })
        .unwrap_or_else(|failure| panic!("{}: {failure}", db.name()));
}

fn keys(user: &str, client: &str) -> Vec<String> {
    vec![format!("user {user}"), format!("client {client}")]
}

/// One sign-in's places under the throttle's rule and its minute.
fn take(storage: &dyn Storage, keys: &[String]) -> SignInPlaces {
    storage
        .take_sign_in_places(keys, 60_000, portal_server::sessions::rule)
        .expect("the places are taken or refused")
}

// The sign-in throttle's statements (sessions/throttle.rs holds the rule): five places a key,
// the sixth refused for nearly a minute, each key counted apart, a key's failures and single
// places forgotten, and everything past the window removed as sign-ins come.
fn sign_in_failures_are_counted_by_the_rule_forgotten_and_removed_after_their_window(
    db: &Database,
) {
    let storage = db.open();
    let alice = keys("acme/alice", "192.0.2.1");
    let mut taken = Vec::new();
    for _ in 0..5 {
        match take(&*storage, &alice) {
            SignInPlaces::Taken(places) => taken.push(places),
            other => panic!("{other:?}"),
        }
    }
    assert!(taken.iter().all(|places| places.len() == 2), "{taken:?}");
    match take(&*storage, &alice) {
        SignInPlaces::Wait(wait) => assert!(
            (Duration::from_secs(55)..=Duration::from_secs(60)).contains(&wait),
            "{wait:?}"
        ),
        other => panic!("the sixth waits: {other:?}"),
    }
    assert!(matches!(
        take(&*storage, &keys("acme/bob", "192.0.2.1")),
        SignInPlaces::Wait(_)
    ));
    assert!(matches!(
        take(&*storage, &keys("acme/alice", "192.0.2.2")),
        SignInPlaces::Wait(_)
    ));
    assert!(matches!(
        take(&*storage, &keys("acme/bob", "192.0.2.2")),
        SignInPlaces::Taken(_)
    ));
    // A right password: alice's failures go, and one place of her address.
    storage
        .forget_sign_in_failures(&alice[..1], &[taken[0][1]])
        .expect("forgotten");
    assert!(matches!(take(&*storage, &alice), SignInPlaces::Taken(_)));
    assert!(matches!(
        take(&*storage, &keys("acme/carol", "192.0.2.1")),
        SignInPlaces::Wait(_)
    ));
    std::thread::sleep(Duration::from_millis(5));
    assert!(matches!(
        storage
            .take_sign_in_places(&alice, 1, portal_server::sessions::rule)
            .expect("taken"),
        SignInPlaces::Taken(_)
    ));
    assert_eq!(
        db.count("SELECT count(*) FROM sign_in_failures"),
        2,
        "only the last sign-in's places are left past a window of 1 ms"
    );
}

// Sign-ins at once through two storages (two replicas on PostgreSQL, two connections to one
// SQLite file) take turns: of 40 for one user, exactly five get places, whichever address
// each comes from.
fn forty_sign_ins_at_once_through_two_storages_take_exactly_five_places(db: &Database) {
    let (a, b) = (db.open(), db.open());
    let starts = std::sync::Barrier::new(40);
    let taken = std::thread::scope(|scope| {
        let sign_ins: Vec<_> = (0..40)
            .map(|n| {
                let (storage, starts) = (if n % 2 == 0 { &a } else { &b }, &starts);
                scope.spawn(move || {
                    starts.wait();
                    take(
                        &**storage,
                        &keys("acme/alice", &format!("10.0.0.{}", n % 3)),
                    )
                })
            })
            .collect();
        sign_ins
            .into_iter()
            .map(|s| s.join().expect("no panic"))
            .filter(|places| matches!(places, SignInPlaces::Taken(_)))
            .count()
    });
    assert_eq!(taken, 5);
    assert_eq!(
        db.count("SELECT count(*) FROM sign_in_failures WHERE key = 'user acme/alice'"),
        5
    );
}

/// The prompt inspector's calls: numbered per turn in the order kept, a text past the bound kept
/// by its size, read only within the conversation's organisation, and deleted with it.
fn model_calls_are_numbered_per_turn_bounded_and_deleted_with_their_conversation(db: &Database) {
    use portal_store::{CallPurpose, KeptText, MAX_KEPT_BYTES, NewCall};
    let storage = db.open();
    let id = write_interrupted_turn(&*storage);
    let call = |purpose, body: Option<String>| NewCall {
        purpose,
        model: "demo".into(),
        prompt: KeptText::bounded("{\"layers\":[]}".into()),
        body: body.map(KeptText::bounded),
        diagnostics: "[]".into(),
    };
    let kept = [
        storage.record_call(&id, 2, &call(CallPurpose::Compaction, None)),
        storage.record_call(
            &id,
            2,
            &call(CallPurpose::Turn, Some("{\"a\":\"é\"}".into())),
        ),
        storage.record_call(
            &id,
            2,
            &call(CallPurpose::Turn, Some("x".repeat(MAX_KEPT_BYTES + 1))),
        ),
        storage.record_call(&id, 1, &call(CallPurpose::Turn, None)),
    ];
    let numbers: Vec<u32> = kept.into_iter().map(|n| n.expect("kept")).collect();
    assert_eq!(numbers, [1, 2, 3, 1], "{}", db.name());

    let calls = storage.calls("org_a", &id, 2).expect("read");
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[0].purpose, CallPurpose::Compaction);
    assert_eq!(calls[0].body, None, "no body: the demo's");
    assert_eq!(calls[0].prompt.text.as_deref(), Some("{\"layers\":[]}"));
    let body = calls[1].body.as_ref().expect("a body");
    assert_eq!(body.text.as_deref(), Some("{\"a\":\"é\"}"));
    assert_eq!(body.bytes, 10);
    let large = calls[2].body.as_ref().expect("a body");
    assert_eq!(
        (large.text.as_deref(), large.bytes),
        (None, MAX_KEPT_BYTES as u64 + 1)
    );

    assert!(
        storage.calls("org_b", &id, 2).is_err(),
        "another organisation is told not found"
    );
    storage
        .set_turn_status(&id, 2, TurnStatus::Completed)
        .expect("the turn ends");
    storage.delete_conversation(&owner(), &id).expect("deleted");
    assert_eq!(
        db.count("SELECT count(*) FROM model_calls"),
        0,
        "{}",
        db.name()
    );
}

/// The limits the single sign-on tests keep sign-ins under way to: ten minutes, as the portal's,
/// and small counts, so that filling them takes a few rows.
const SSO_LIMITS: SsoSignInLimits = SsoSignInLimits {
    lifetime_ms: 600_000,
    most: 6,
    from_one_client: 3,
};

/// A single sign-on under way from `client`; `state` and `binding` stand for the digests the
/// portal stores of the state and the browser's cookie.
fn sso_sign_in(state: &str, binding: &str, client: Option<&str>) -> SsoSignIn {
    SsoSignIn {
        state_sha256: state.into(),
        binding_sha256: binding.into(),
        client: client.map(str::to_string),
        provider: "acme-id".into(),
        verifier: format!("verifier of {state}"),
        nonce: format!("nonce of {state}"),
        return_to: "/c/0123abcd?x=1".into(),
    }
}

fn keep(storage: &dyn Storage, sign_in: &SsoSignIn) -> Result<(), StorageError> {
    storage.keep_sso_sign_in(sign_in, SSO_LIMITS)
}

fn claim(storage: &dyn Storage, state: &str, binding: Option<&str>) -> Option<SsoSignIn> {
    storage
        .claim_sso_sign_in(state, binding)
        .expect("the claim is answered")
}

/// Moves every sign-in under way ten minutes nearer its end, as the clock would.
fn age_sso_sign_ins(db: &Database) {
    db.execute("UPDATE sso_sign_ins SET expires_at = expires_at - 600000");
}

// A single sign-on under way is claimed once, by the browser holding its binding, before it
// expires, through any storage (any replica): a second claim finds nothing, and a claim with
// another binding, with none, or too late finds nothing and uses it up.
fn an_sso_sign_in_is_claimed_once_by_its_browser_before_it_expires(db: &Database) {
    let (a, b) = (db.open(), db.open());
    let first = sso_sign_in("s1", "b1", Some("192.0.2.1"));
    keep(&*a, &first).expect("kept");
    assert_eq!(claim(&*b, "s1", Some("b1")), Some(first), "{}", db.name());
    assert_eq!(claim(&*a, "s1", Some("b1")), None, "used once");
    assert_eq!(claim(&*b, "s1", Some("b1")), None, "used once");

    keep(&*a, &sso_sign_in("s2", "b2", None)).expect("kept");
    assert_eq!(claim(&*b, "s2", Some("another browser")), None);
    assert_eq!(
        claim(&*a, "s2", Some("b2")),
        None,
        "a wrong binding used it up"
    );
    keep(&*a, &sso_sign_in("s3", "b3", None)).expect("kept");
    assert_eq!(claim(&*b, "s3", None), None);
    assert_eq!(claim(&*a, "s3", Some("b3")), None, "no binding used it up");
    keep(&*a, &sso_sign_in("s4", "b4", None)).expect("kept");
    age_sso_sign_ins(db);
    assert_eq!(claim(&*b, "s4", Some("b4")), None, "expired");
    assert_eq!(claim(&*a, "never kept", Some("b1")), None);
    assert_eq!(db.count("SELECT count(*) FROM sso_sign_ins"), 0);
}

// At most `most` single sign-ons are under way: one more is refused, saying what to do, until
// older ones expire; expired ones are removed as new ones come.
fn past_the_most_sso_sign_ins_under_way_a_new_one_is_refused_until_old_ones_expire(db: &Database) {
    let storage = db.open();
    for n in 0..SSO_LIMITS.most {
        let client = format!("192.0.2.{n}");
        keep(
            &*storage,
            &sso_sign_in(&format!("s{n}"), "b", Some(&client)),
        )
        .expect("kept");
    }
    let refused = keep(&*storage, &sso_sign_in("more", "b", None));
    assert!(
        matches!(refused, Err(StorageError::SsoSignInsFull { most: 6, .. })),
        "{refused:?}"
    );
    let said = refused.expect_err("refused").to_string();
    assert!(said.contains("try again in a few minutes"), "{said}");
    age_sso_sign_ins(db);
    keep(&*storage, &sso_sign_in("later", "b", None)).expect("kept once the others expired");
    assert_eq!(
        db.count("SELECT count(*) FROM sso_sign_ins"),
        1,
        "{}",
        db.name()
    );
    assert!(claim(&*storage, "later", Some("b")).is_some());
}

// One client (its address or IPv6 /64, as the portal names it) holds at most `from_one_client`
// sign-ins under way; others, and sign-ins whose client is unknown, are not held back by it,
// and a claimed one gives its place back.
fn one_client_holds_at_most_its_share_of_the_sso_sign_ins_under_way(db: &Database) {
    let storage = db.open();
    let flooder = Some("2001:db8:1:2::");
    for n in 0..SSO_LIMITS.from_one_client {
        keep(&*storage, &sso_sign_in(&format!("s{n}"), "b", flooder)).expect("kept");
    }
    assert!(matches!(
        keep(&*storage, &sso_sign_in("one more", "b", flooder)),
        Err(StorageError::SsoSignInsFull { .. })
    ));
    keep(
        &*storage,
        &sso_sign_in("other", "b", Some("2001:db8:1:3::")),
    )
    .expect("kept");
    keep(&*storage, &sso_sign_in("unknown", "b", None)).expect("kept");
    assert!(claim(&*storage, "s0", Some("b")).is_some());
    keep(&*storage, &sso_sign_in("again", "b", flooder)).expect("a place was given back");
}

// Through two storages at once (two replicas on PostgreSQL, two connections to one SQLite
// file): of 40 sign-ins started from one client, exactly its share is kept, and of 20 claims
// of one sign-in, exactly one gets it.
fn sso_sign_ins_started_and_claimed_at_once_through_two_storages_keep_the_limits_and_one_claim(
    db: &Database,
) {
    let (a, b) = (db.open(), db.open());
    let on = |n: usize| if n.is_multiple_of(2) { &a } else { &b };
    let starts = std::sync::Barrier::new(40);
    let kept = std::thread::scope(|scope| {
        let keeps: Vec<_> = (0..40)
            .map(|n| {
                let (storage, starts) = (on(n), &starts);
                scope.spawn(move || {
                    starts.wait();
                    let sign_in = sso_sign_in(&format!("s{n}"), "b", Some("192.0.2.1"));
                    match keep(&**storage, &sign_in) {
                        Ok(()) => true,
                        Err(StorageError::SsoSignInsFull { .. }) => false,
                        Err(other) => panic!("{other}"),
                    }
                })
            })
            .collect();
        keeps
            .into_iter()
            .map(|k| k.join().expect("no panic"))
            .filter(|kept| *kept)
            .count()
    });
    assert_eq!(kept as u64, SSO_LIMITS.from_one_client, "{}", db.name());

    keep(&*a, &sso_sign_in("contested", "b", None)).expect("kept");
    let starts = std::sync::Barrier::new(20);
    let won = std::thread::scope(|scope| {
        let claims: Vec<_> = (0..20)
            .map(|n| {
                let (storage, starts) = (on(n), &starts);
                scope.spawn(move || {
                    starts.wait();
                    claim(&**storage, "contested", Some("b"))
                })
            })
            .collect();
        claims
            .into_iter()
            .map(|c| c.join().expect("no panic"))
            .filter(Option::is_some)
            .count()
    });
    assert_eq!(won, 1, "{}", db.name());
}

/// Issue 45: the fixtures without attachments that ended, imported in one call: each loads back
/// as it was, under its title, or one made from its first message.
fn every_ended_fixture_imports_whole_and_loads_back_equal(db: &Database) {
    let storage = db.open();
    let ended: Vec<(String, Transcript)> = valid_fixtures()
        .into_iter()
        .filter(|(_, t)| {
            t.turns.iter().all(|turn| !turn.status.is_open())
                && t.turns
                    .iter()
                    .flat_map(|turn| &turn.messages)
                    .all(|m| m.attachments.is_empty())
        })
        .collect();
    assert!(ended.len() >= 5, "{} fixtures", ended.len());
    let imported: Vec<ImportedConversation> = ended
        .iter()
        .enumerate()
        .map(|(i, (_, transcript))| {
            let title = if i == 0 {
                String::new()
            } else {
                format!("Fixture {i}")
            };
            ImportedConversation::new("agent_1".into(), title, transcript.clone())
        })
        .collect();
    let ids = storage
        .import_conversations(&owner(), &ImportedWork::conversations(imported))
        .expect("imported");
    assert_eq!(ids.len(), ended.len());
    for (i, (id, (name, transcript))) in ids.iter().zip(&ended).enumerate() {
        let loaded = storage.load_transcript("org_a", id).expect("loaded");
        assert_eq!(&loaded, transcript, "{name} loads back as imported");
        let summary = storage.conversation_summary(&owner(), id).expect("listed");
        if i > 0 {
            assert_eq!(summary.title, format!("Fixture {i}"));
        } else {
            assert!(
                !summary.title.is_empty(),
                "{name} is named after its first message"
            );
        }
    }
}

/// Issue 45: an import refused anywhere leaves nothing behind: an attachment that is not the
/// organisation's, or a turn still open, in its last conversation.
fn an_import_refused_anywhere_leaves_nothing_behind(db: &Database) {
    let storage = db.open();
    let good = an_ended_fixture();
    let with = |transcript: Transcript| {
        ImportedConversation::new("agent_1".into(), "t".into(), transcript)
    };
    let mut foreign = good.clone();
    foreign.turns[0].messages[0]
        .attachments
        .push(picture("not_stored"));
    let mut open = good.clone();
    open.turns[0].status = TurnStatus::Running;
    for (bad, refusal) in [(foreign, "attachment"), (open, "running")] {
        let refused = storage.import_conversations(
            &owner(),
            &ImportedWork::conversations(vec![with(good.clone()), with(bad)]),
        );
        let error = refused.expect_err("refused");
        assert!(error.to_string().contains(refusal), "{error}");
        let listed = storage
            .list_conversations(&owner(), &everything())
            .expect("listed");
        assert!(listed.conversations.is_empty(), "{}: {listed:?}", db.name());
        assert_eq!(rows(db, "turns"), 0, "{}", db.name());
    }
}

/// An ended fixture without attachments, for imports.
fn an_ended_fixture() -> Transcript {
    valid_fixtures()
        .into_iter()
        .map(|(_, t)| t)
        .find(|t| {
            !t.turns.is_empty()
                && t.turns.iter().all(|turn| !turn.status.is_open())
                && t.turns
                    .iter()
                    .flat_map(|turn| &turn.messages)
                    .all(|m| m.attachments.is_empty())
        })
        .expect("an ended fixture")
}

/// Issue 45: an import makes its projects, newest first as it lists them, and puts each
/// conversation in its project, one it made or one the importer had, pinned or not.
fn an_import_makes_its_projects_and_places_its_conversations(db: &Database) {
    let storage = db.open();
    let alice = owner();
    let had = storage
        .create_project(&new_project(&alice, 1), 10)
        .expect("made");
    let made = |n: usize| ImportedProject {
        id: format!("imported_{n}"),
        name: format!("Imported {n}"),
        instructions: format!("Instructions {n}."),
        agent_id: (n == 1).then(|| "agent_1".to_string()),
    };
    let placed = |project: Option<&str>, pinned| ImportedConversation {
        project: project.map(str::to_string),
        pinned,
        ..ImportedConversation::new("agent_1".into(), "t".into(), an_ended_fixture())
    };
    let work = ImportedWork {
        projects: vec![made(1), made(2)],
        most_projects: 3,
        conversations: vec![
            placed(Some("imported_1"), true),
            placed(Some("imported_1"), false),
            placed(Some("project_1"), true),
            placed(None, false),
        ],
    };
    let ids = storage
        .import_conversations(&alice, &work)
        .expect("imported");
    let projects = storage.projects(&alice).expect("listed");
    let shown: Vec<(&str, &str, &str, Option<&str>)> = projects
        .iter()
        .map(|p| {
            (
                p.id.as_str(),
                p.name.as_str(),
                p.instructions.as_str(),
                p.agent_id.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            (
                "imported_1",
                "Imported 1",
                "Instructions 1.",
                Some("agent_1")
            ),
            ("imported_2", "Imported 2", "Instructions 2.", None),
            (
                "project_1",
                "Herons 1",
                "Figures in euros.",
                Some("agent_1")
            ),
        ],
        "{}",
        db.name()
    );
    assert_eq!(projects[2], had, "the importer's own project is as it was");
    let summaries: Vec<(Option<String>, bool)> = ids
        .iter()
        .map(|id| {
            let summary = storage.conversation_summary(&alice, id).expect("listed");
            (summary.project, summary.pinned)
        })
        .collect();
    assert_eq!(
        summaries,
        [
            (Some("imported_1".into()), true),
            (Some("imported_1".into()), false),
            (Some("project_1".into()), true),
            (None, false),
        ],
        "{}",
        db.name()
    );
}

/// Issue 45: an import whose projects would bring the importer's past the most, or that puts a
/// conversation in someone else's project, is refused whole: no project, no conversation.
fn an_import_past_the_most_projects_or_into_anothers_is_refused_whole(db: &Database) {
    let storage = db.open();
    let alice = owner();
    let bob = Owner::new("org_a", "user_2");
    storage
        .create_project(&new_project(&alice, 1), 10)
        .expect("made");
    storage
        .create_project(&new_project(&bob, 2), 10)
        .expect("made");
    let made = |n: usize| ImportedProject {
        id: format!("imported_{n}"),
        name: format!("Imported {n}"),
        instructions: String::new(),
        agent_id: None,
    };
    let into = |project: &str| ImportedConversation {
        project: Some(project.to_string()),
        ..ImportedConversation::new("agent_1".into(), "t".into(), an_ended_fixture())
    };
    let past = ImportedWork {
        projects: vec![made(1), made(2)],
        most_projects: 2,
        conversations: vec![into("imported_1")],
    };
    let refused = storage.import_conversations(&alice, &past);
    assert!(
        matches!(
            refused,
            Err(StorageError::ImportProjectsFull {
                have: 1,
                new: 2,
                most: 2
            })
        ),
        "{}: {refused:?}",
        db.name()
    );
    let said = refused.unwrap_err().to_string();
    assert!(
        said.contains("would make 2 projects, and you have 1 of the 2")
            && said.ends_with("nothing was imported"),
        "{said}"
    );
    let bobs = ImportedWork {
        projects: vec![made(3)],
        most_projects: 10,
        conversations: vec![into("imported_3"), into("project_2")],
    };
    assert!(
        matches!(
            storage.import_conversations(&alice, &bobs),
            Err(StorageError::ProjectNotFound { .. })
        ),
        "{}",
        db.name()
    );
    assert_eq!(rows(db, "projects"), 2, "{}", db.name());
    assert_eq!(rows(db, "conversations"), 0, "{}", db.name());
    assert_eq!(rows(db, "turns"), 0, "{}", db.name());
}

/// Issue 45: a share link keeps its snapshot whatever the conversation does next, is counted
/// against its owner's most, found by its token alone, revoked by its owner alone, and deleted
/// with its conversation.
fn share_links_keep_their_snapshot_and_go_with_their_conversation(db: &Database) {
    let storage = db.open();
    let (_, transcript) = valid_fixtures()
        .into_iter()
        .find(|(_, t)| {
            t.turns.len() >= 2
                && t.turns.iter().all(|turn| !turn.status.is_open())
                && t.turns
                    .iter()
                    .flat_map(|turn| &turn.messages)
                    .all(|m| m.attachments.is_empty())
        })
        .expect("an ended fixture of two turns or more");
    let ids = storage
        .import_conversations(
            &owner(),
            &ImportedWork::conversations(vec![ImportedConversation::new(
                "agent_1".into(),
                "Herons".into(),
                transcript.clone(),
            )]),
        )
        .expect("imported");
    let mut shown = transcript.clone();
    shown.turns.truncate(1);
    let link = |n: usize, lifetime_ms| NewShareLink {
        id: format!("share_{n}"),
        token: format!("token_{n}"),
        owner: owner(),
        conversation: ids[0].clone(),
        title: "Herons".into(),
        visibility: ShareVisibility::Organisation,
        snapshot: shown.clone(),
        lifetime_ms,
    };
    let kept = storage.create_share_link(&link(1, None), 2).expect("kept");
    assert_eq!(kept.turns, 1);
    storage
        .create_share_link(&link(2, Some(60_000)), 2)
        .expect("a second");
    let full = storage.create_share_link(&link(3, None), 2);
    assert!(
        matches!(full, Err(StorageError::ShareLinksFull { most: 2 })),
        "{}: {full:?}",
        db.name()
    );
    let stranger = NewShareLink {
        owner: Owner::new("org_a", "user_2"),
        ..link(4, None)
    };
    assert!(
        matches!(
            storage.create_share_link(&stranger, 2),
            Err(StorageError::ConversationNotFound { .. })
        ),
        "another user cannot share it"
    );
    let (found, snapshot) = storage.shared("token_1").expect("read").expect("found");
    assert_eq!(
        (found, snapshot),
        (kept.clone(), shown.clone()),
        "{}",
        db.name()
    );
    assert_eq!(storage.shared("token_9").expect("read"), None);

    assert!(
        !storage
            .revoke_share_link(&Owner::new("org_a", "user_2"), "share_1")
            .expect("answered")
    );
    assert!(
        storage
            .revoke_share_link(&owner(), "share_1")
            .expect("revoked")
    );
    let listed = storage.share_links(&owner()).expect("listed");
    assert_eq!(
        listed.iter().map(|l| l.id.as_str()).collect::<Vec<_>>(),
        ["share_2", "share_1"],
        "{}",
        db.name()
    );
    assert!(listed[1].revoked_at_ms.is_some() && !listed[1].live(i64::MAX));
    storage
        .create_share_link(&link(5, None), 2)
        .expect("a revoked link frees its place");

    storage
        .delete_conversation(&owner(), &ids[0])
        .expect("deleted");
    assert_eq!(storage.shared("token_2").expect("read"), None);
    assert!(storage.share_links(&owner()).expect("listed").is_empty());
}

fn new_project(owner: &Owner, n: usize) -> NewProject {
    NewProject {
        id: format!("project_{n}"),
        owner: owner.clone(),
        name: format!("Herons {n}"),
        instructions: "Figures in euros.".into(),
        agent_id: Some("agent_1".into()),
    }
}

/// The ids a list of `owner`'s conversations shows with `query`'s filters, in order.
fn listed(
    storage: &dyn Storage,
    owner: &Owner,
    query: portal_store::ConversationQuery,
) -> Vec<ConversationId> {
    storage
        .list_conversations(owner, &query)
        .expect("listed")
        .conversations
        .into_iter()
        .map(|c| c.id)
        .collect()
}

// Issue 45: a project is its owner's alone (another person's reads, changes, moves into and
// deletions find nothing), is kept within the most a person may have, and takes conversations
// made in it or moved into it; a list filters by it.
fn projects_are_their_owners_and_take_their_conversations(db: &Database) {
    let storage = db.open();
    let (alice, bob) = (owner(), Owner::new("org_a", "user_2"));
    let kept = storage
        .create_project(&new_project(&alice, 1), 2)
        .expect("made");
    assert_eq!(
        (kept.name.as_str(), kept.agent_id.as_deref()),
        ("Herons 1", Some("agent_1"))
    );
    storage
        .create_project(&new_project(&alice, 2), 2)
        .expect("a second");
    let full = storage.create_project(&new_project(&alice, 3), 2);
    assert!(
        matches!(full, Err(StorageError::ProjectsFull { most: 2 })),
        "{}: {full:?}",
        db.name()
    );
    storage
        .create_project(&new_project(&bob, 4), 2)
        .expect("bob has his own places");
    let ids = |projects: Vec<portal_store::Project>| {
        projects.into_iter().map(|p| p.id).collect::<Vec<_>>()
    };
    assert_eq!(
        ids(storage.projects(&alice).expect("listed")),
        ["project_2", "project_1"],
        "newest first"
    );
    assert_eq!(storage.project(&alice, "project_1").expect("read"), kept);

    let changed = storage
        .change_project(
            &alice,
            "project_1",
            &ProjectChange {
                name: Some("Storks".into()),
                agent_id: Some(None),
                ..ProjectChange::default()
            },
        )
        .expect("changed");
    assert_eq!(
        (
            changed.name.as_str(),
            changed.instructions.as_str(),
            changed.agent_id.as_deref()
        ),
        ("Storks", "Figures in euros.", None),
        "what the change leaves out stays"
    );
    assert_eq!(storage.project(&alice, "project_1").expect("read"), changed);

    let mine = storage
        .create_conversation_in_project(&alice, "agent_1", "project_1")
        .expect("opened in the project");
    let loose = storage
        .create_conversation(&alice, "agent_1")
        .expect("opened in none");
    assert_eq!(
        storage.conversation("org_a", &mine).expect("read").project,
        Some("project_1".into())
    );
    let into = |project: &str| ConversationChange {
        project: Some(Some(project.to_string())),
        ..ConversationChange::default()
    };
    let moved = storage
        .change_conversation(&alice, &loose, &into("project_2"))
        .expect("moved");
    assert_eq!(moved.project.as_deref(), Some("project_2"));

    // Bob's project, and Bob asking about Alice's, find nothing, and change nothing.
    let not_found = |result: Result<_, StorageError>| {
        matches!(result, Err(StorageError::ProjectNotFound { .. }))
    };
    assert!(not_found(storage.project(&bob, "project_1").map(drop)));
    assert!(not_found(
        storage
            .change_project(&bob, "project_1", &ProjectChange::default())
            .map(drop)
    ));
    assert!(not_found(
        storage
            .delete_project(&bob, "project_1", ProjectConversations::Delete)
            .map(drop)
    ));
    assert!(not_found(
        storage
            .create_conversation_in_project(&alice, "agent_1", "project_4")
            .map(drop)
    ));
    assert!(not_found(
        storage
            .change_conversation(&alice, &mine, &into("project_4"))
            .map(drop)
    ));
    assert!(matches!(
        storage.change_conversation(&bob, &mine, &into("project_4")),
        Err(StorageError::ConversationNotFound { .. })
    ));
    assert_eq!(
        storage.conversation("org_a", &mine).expect("read").project,
        Some("project_1".into()),
        "{}: a refused move leaves it where it was",
        db.name()
    );
    assert_eq!(storage.projects(&alice).expect("listed").len(), 2);

    let query = |project| portal_store::ConversationQuery {
        project,
        ..everything()
    };
    assert_eq!(
        listed(
            &*storage,
            &alice,
            query(ProjectFilter::Within("project_1".into()))
        ),
        std::slice::from_ref(&mine)
    );
    assert_eq!(
        listed(
            &*storage,
            &bob,
            query(ProjectFilter::Within("project_1".into()))
        ),
        Vec::<ConversationId>::new(),
        "bob lists nothing of alice's project"
    );
    let out = storage
        .change_conversation(
            &alice,
            &loose,
            &ConversationChange {
                project: Some(None),
                ..ConversationChange::default()
            },
        )
        .expect("taken out");
    assert_eq!(out.project, None);
    assert_eq!(
        listed(&*storage, &alice, query(ProjectFilter::Outside)),
        std::slice::from_ref(&loose)
    );
}

// Issue 45: deleting a project keeps its conversations, out of any project, or deletes them as
// deleting each one would (attachments and share links too), refusing the whole deletion while
// one of them runs a turn.
fn deleting_a_project_keeps_or_deletes_its_conversations_whole(db: &Database) {
    let storage = db.open();
    let alice = owner();
    for n in [1, 2] {
        storage
            .create_project(&new_project(&alice, n), 10)
            .expect("made");
    }
    let kept = storage
        .create_conversation_in_project(&alice, "agent_1", "project_1")
        .expect("opened");
    storage
        .delete_project(&alice, "project_1", ProjectConversations::Keep)
        .expect("deleted");
    assert!(matches!(
        storage.project(&alice, "project_1"),
        Err(StorageError::ProjectNotFound { .. })
    ));
    assert_eq!(
        storage.conversation("org_a", &kept).expect("kept").project,
        None
    );

    storage
        .put_attachment(&alice, &picture("pic_1"), &mut &b""[..], 0, u64::MAX)
        .expect("stored");
    let running = storage
        .create_conversation_in_project(&alice, "agent_1", "project_2")
        .expect("opened");
    let mut message = Message::new(Role::User, vec![Block::text("Look")]);
    message.attachments.push(picture("pic_1"));
    let turn = storage
        .open_turn(&running, NewTurn::chat(message))
        .expect("runs");
    let quiet = storage
        .create_conversation_in_project(&alice, "agent_1", "project_2")
        .expect("opened");
    let refused = storage.delete_project(&alice, "project_2", ProjectConversations::Delete);
    assert!(
        matches!(refused, Err(StorageError::TurnStillRunning { .. })),
        "{}: {refused:?}",
        db.name()
    );
    for id in [&running, &quiet] {
        assert_eq!(
            storage
                .conversation("org_a", id)
                .expect("still there")
                .project,
            Some("project_2".into()),
            "{}: a refused deletion deletes nothing",
            db.name()
        );
    }
    storage
        .set_turn_status(&running, turn, TurnStatus::Completed)
        .expect("ends");
    storage
        .create_share_link(
            &NewShareLink {
                id: "share_1".into(),
                token: "token_1".into(),
                owner: alice.clone(),
                conversation: running.clone(),
                title: "Look".into(),
                visibility: ShareVisibility::Organisation,
                snapshot: storage.load_transcript("org_a", &running).expect("loads"),
                lifetime_ms: None,
            },
            10,
        )
        .expect("shared");
    storage
        .delete_project(&alice, "project_2", ProjectConversations::Delete)
        .expect("deleted with its conversations");
    for id in [&running, &quiet] {
        assert!(matches!(
            storage.conversation("org_a", id),
            Err(StorageError::ConversationNotFound { .. })
        ));
    }
    assert!(
        storage.attachment(&alice, "pic_1").is_err(),
        "its attachment went with it"
    );
    assert_eq!(storage.shared("token_1").expect("read"), None);
    assert_eq!(listed(&*storage, &alice, everything()), [kept]);
    assert!(storage.projects(&alice).expect("listed").is_empty());
}

// Issue 45: pinned conversations list first, each part newest activity first; a page's cursor
// holds its place across the pinned and the rest, and a search keeps to a project.
fn pinned_conversations_list_first_and_search_keeps_to_a_project(db: &Database) {
    let storage = db.open();
    let alice = owner();
    storage
        .create_project(&new_project(&alice, 1), 10)
        .expect("made");
    let mut opened = Vec::new();
    for n in 0..6 {
        let id = if n % 2 == 0 {
            storage.create_conversation_in_project(&alice, "agent_1", "project_1")
        } else {
            storage.create_conversation(&alice, "agent_1")
        }
        .expect("opened");
        let text = if n < 3 { "herons at dusk" } else { "storks" };
        storage
            .open_turn(
                &id,
                NewTurn::chat(Message::new(Role::User, vec![Block::text(text)])),
            )
            .expect("opens");
        std::thread::sleep(Duration::from_millis(3));
        opened.push(id);
    }
    for n in [1, 2] {
        storage
            .change_conversation(
                &alice,
                &opened[n],
                &ConversationChange {
                    pinned: Some(true),
                    ..ConversationChange::default()
                },
            )
            .expect("pinned");
    }
    let expected = [2, 1, 5, 4, 3, 0].map(|n| opened[n].clone());
    assert_eq!(listed(&*storage, &alice, everything()), expected);
    let mut paged = Vec::new();
    let mut query = portal_store::ConversationQuery {
        limit: 1,
        ..everything()
    };
    loop {
        let page = storage.list_conversations(&alice, &query).expect("a page");
        paged.extend(page.conversations.into_iter().map(|c| c.id));
        match page.next {
            Some(next) => {
                let cursor = next.encode();
                query.after = Some(ListCursor::decode(&cursor).expect("decodes"));
            }
            None => break,
        }
    }
    assert_eq!(paged, expected, "{}: pages hold across the pin", db.name());
    let summary = storage
        .conversation_summary(&alice, &opened[2])
        .expect("read");
    assert!(summary.pinned && summary.project.as_deref() == Some("project_1"));

    let herons_in_project = portal_store::ConversationQuery {
        search: Some("HERONS".into()),
        project: ProjectFilter::Within("project_1".into()),
        ..everything()
    };
    assert_eq!(
        listed(&*storage, &alice, herons_in_project),
        [opened[2].clone(), opened[0].clone()]
    );
    storage
        .change_conversation(
            &alice,
            &opened[2],
            &ConversationChange {
                pinned: Some(false),
                ..ConversationChange::default()
            },
        )
        .expect("unpinned");
    assert_eq!(
        listed(&*storage, &alice, everything())[..2],
        [opened[1].clone(), opened[5].clone()]
    );
}

/// A query for a whole conversation list.
fn everything() -> portal_store::ConversationQuery {
    portal_store::ConversationQuery {
        limit: 100,
        ..Default::default()
    }
}

on_every_database!(
    migrations_are_idempotent_on_reopen,
    a_database_from_a_newer_build_is_refused,
    the_schema_version_is_read_from_the_database_as_it_is_now,
    every_valid_fixture_round_trips_through_storage,
    a_tools_picture_is_the_owners_counted_and_deleted_with_its_conversation,
    every_ended_fixture_imports_whole_and_loads_back_equal,
    an_import_refused_anywhere_leaves_nothing_behind,
    an_import_makes_its_projects_and_places_its_conversations,
    an_import_past_the_most_projects_or_into_anothers_is_refused_whole,
    share_links_keep_their_snapshot_and_go_with_their_conversation,
    projects_are_their_owners_and_take_their_conversations,
    deleting_a_project_keeps_or_deletes_its_conversations_whole,
    pinned_conversations_list_first_and_search_keeps_to_a_project,
    full_turn_with_tool_calls_round_trips_and_validates,
    five_thousand_deltas_stream_into_one_block_and_load_whole,
    m10_crash_mid_turn_leaves_a_cut_off_turn_with_what_it_wrote,
    m9_recovery_answers_no_call,
    recovery_leaves_paused_and_ended_turns_alone,
    a_message_without_blocks_is_reused_then_left_out,
    c2_withdrawn_blocks_leave_storage_and_nothing_before_them_changes,
    another_organisation_sees_nothing_of_a_conversation,
    c11_turn_calls_set_the_context_size_and_compaction_calls_leave_only_a_usage_row,
    usage_rows_keep_the_price_they_were_written_with_and_outlive_their_conversation,
    a1_an_attachment_keeps_the_kind_it_was_stored_with,
    a_loaded_message_shows_its_attachment_as_last_stored,
    a2_a_text_document_stored_without_its_text_is_loaded_with_it_from_its_bytes,
    an_ended_turn_is_never_rewritten,
    a_paused_turn_takes_no_blocks_until_it_runs_again_and_a_new_turn_may_follow_it,
    of_many_claims_on_a_paused_turn_at_once_exactly_one_resumes_it,
    of_a_cancel_and_resumes_claiming_a_paused_turn_at_once_exactly_one_wins,
    a_claim_made_on_a_pause_the_turn_has_moved_past_or_ended_is_refused,
    an_upload_is_stored_only_within_its_owners_quota,
    writes_name_what_is_missing_or_wrong,
    m10_a_crash_at_any_step_leaves_a_valid_transcript_of_what_was_written,
    sign_in_failures_are_counted_by_the_rule_forgotten_and_removed_after_their_window,
    forty_sign_ins_at_once_through_two_storages_take_exactly_five_places,
    an_sso_account_is_found_by_its_provider_subject_and_its_owner_and_made_once,
    model_calls_are_numbered_per_turn_bounded_and_deleted_with_their_conversation,
    an_sso_sign_in_is_claimed_once_by_its_browser_before_it_expires,
    past_the_most_sso_sign_ins_under_way_a_new_one_is_refused_until_old_ones_expire,
    one_client_holds_at_most_its_share_of_the_sso_sign_ins_under_way,
    sso_sign_ins_started_and_claimed_at_once_through_two_storages_keep_the_limits_and_one_claim,
    an_api_key_is_found_by_its_digest_listed_to_its_owner_and_revoked_for_good,
    past_the_most_live_api_keys_a_new_one_is_refused_until_one_is_revoked_or_expires,
    keys_made_at_once_through_two_storages_keep_the_limit,
);

fn an_sso_account_is_found_by_its_provider_subject_and_its_owner_and_made_once(db: &Database) {
    let storage = db.open();
    let account = SsoAccount {
        issuer: "https://idp.example.com".into(),
        subject: "248289761001".into(),
        owner: Owner::new("acme", "ada-3f2a1c"),
        name: "Ada Lovelace".into(),
        created_at_ms: 1_700_000_000_000,
    };
    assert_eq!(
        storage
            .sso_account(&account.issuer, &account.subject)
            .expect("read"),
        None
    );
    storage.create_sso_account(&account).expect("made");
    assert_eq!(
        storage
            .sso_account(&account.issuer, &account.subject)
            .expect("read"),
        Some(account.clone())
    );
    assert_eq!(
        storage.sso_account_of(&account.owner).expect("read"),
        Some(account.clone())
    );
    assert_eq!(
        storage
            .sso_account("https://other.example.com", &account.subject)
            .expect("read"),
        None,
        "a subject belongs to its issuer"
    );
    let same_person = SsoAccount {
        owner: Owner::new("acme", "another-id"),
        ..account.clone()
    };
    let same_id = SsoAccount {
        subject: "another-subject".into(),
        ..account.clone()
    };
    for conflict in [same_person, same_id] {
        assert!(
            storage.create_sso_account(&conflict).is_err(),
            "{conflict:?}"
        );
    }
    assert_eq!(
        storage
            .sso_account_of(&Owner::new("acme", "another-id"))
            .expect("read"),
        None
    );
}

/// A key of `owner` named `name`, for `agents`, living `lifetime_ms`; its secret is `name`.
fn api_key(owner: &Owner, name: &str, agents: &[&str], lifetime_ms: Option<i64>) -> NewApiKey {
    NewApiKey {
        id: format!("key_{name}"),
        key_sha256: format!("digest of {name}"),
        hint: format!("psk_{name}"),
        owner: owner.clone(),
        name: name.into(),
        agents: agents.iter().map(|a| a.to_string()).collect(),
        lifetime_ms,
    }
}

// An API key is kept with the database's time and its lifetime, found by its digest through any
// storage, listed to its owner alone, newest first, and revoked by its owner alone: a revoked
// key is still found (so that it signs nothing in) and keeps the time it was first revoked.
fn an_api_key_is_found_by_its_digest_listed_to_its_owner_and_revoked_for_good(db: &Database) {
    let (a, b) = (db.open(), db.open());
    let alice = Owner::new("acme", "alice");
    let gina = Owner::new("globex", "alice");
    let first = a
        .create_api_key(
            &api_key(&alice, "first", &["default"], Some(86_400_000)),
            20,
        )
        .expect("kept");
    assert_eq!(
        first.expires_at_ms,
        Some(first.created_at_ms + 86_400_000),
        "{}",
        db.name()
    );
    assert!(first.live(first.created_at_ms));
    assert!(!first.live(first.created_at_ms + 86_400_000), "expired");
    let second = a
        .create_api_key(&api_key(&alice, "second", &[], None), 20)
        .expect("kept");
    a.create_api_key(&api_key(&gina, "hers", &[], None), 20)
        .expect("kept");
    assert_eq!(
        b.api_key("digest of first").expect("read"),
        Some(first.clone())
    );
    assert_eq!(b.api_key("digest of nothing").expect("read"), None);
    let listed: Vec<String> = b
        .api_keys(&alice)
        .expect("listed")
        .into_iter()
        .map(|k| k.name)
        .collect();
    assert_eq!(listed, ["second", "first"], "{}", db.name());
    assert!(
        !b.revoke_api_key(&gina, &second.id).expect("answered"),
        "not hers"
    );
    assert!(b.revoke_api_key(&alice, &second.id).expect("answered"));
    let revoked = a.api_key("digest of second").expect("read").expect("kept");
    assert!(!revoked.live(revoked.revoked_at_ms.expect("revoked")));
    db.execute("UPDATE api_keys SET revoked_at = 1000 WHERE name = 'second'");
    assert!(a.revoke_api_key(&alice, &second.id).expect("answered"));
    assert_eq!(
        a.api_key("digest of second")
            .expect("read")
            .expect("kept")
            .revoked_at_ms,
        Some(1000),
        "a second revocation keeps the first time"
    );
    assert!(!a.revoke_api_key(&alice, "key_nothing").expect("answered"));
    let duplicate = a.create_api_key(&api_key(&alice, "first", &[], None), 20);
    assert!(duplicate.is_err(), "one digest, one key: {duplicate:?}");
}

// An owner holds at most `most` live keys: one more is refused, saying what to do, until one is
// revoked or expires; others' keys do not count.
fn past_the_most_live_api_keys_a_new_one_is_refused_until_one_is_revoked_or_expires(db: &Database) {
    let storage = db.open();
    let alice = Owner::new("acme", "alice");
    for n in 0..3 {
        storage
            .create_api_key(&api_key(&alice, &format!("k{n}"), &[], None), 3)
            .expect("kept");
    }
    storage
        .create_api_key(&api_key(&Owner::new("acme", "bob"), "bobs", &[], None), 3)
        .expect("bob's own");
    let refused = storage.create_api_key(&api_key(&alice, "more", &[], None), 3);
    assert!(
        matches!(refused, Err(StorageError::ApiKeysFull { most: 3 })),
        "{refused:?}"
    );
    assert!(
        refused
            .expect_err("refused")
            .to_string()
            .contains("revoke one you no longer use"),
    );
    assert!(storage.revoke_api_key(&alice, "key_k0").expect("revoked"));
    storage
        .create_api_key(&api_key(&alice, "more", &[], None), 3)
        .expect("room once one was revoked");
    db.execute("UPDATE api_keys SET expires_at = created_at WHERE name = 'k1'");
    storage
        .create_api_key(&api_key(&alice, "after", &[], None), 3)
        .expect("room once one expired");
    assert_eq!(storage.api_keys(&alice).expect("listed").len(), 5);
}

// Keys made at once through two storages (two replicas) never pass the limit together.
fn keys_made_at_once_through_two_storages_keep_the_limit(db: &Database) {
    let (a, b) = (db.open(), db.open());
    let alice = Owner::new("acme", "alice");
    let made = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..12)
            .map(|n| {
                let storage = if n % 2 == 0 { &a } else { &b };
                let key = api_key(&alice, &format!("at once {n}"), &[], None);
                scope.spawn(move || storage.create_api_key(&key, 5).is_ok())
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("joined"))
            .filter(|made| *made)
            .count()
    });
    assert_eq!(made, 5, "{}", db.name());
}
