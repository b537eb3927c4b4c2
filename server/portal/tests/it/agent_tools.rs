//! Tools per agent: an agent is offered the agent tools its configuration lists (the demo agent
//! keeps the demo tools), the portal's own tools stay available to every agent, a call to a tool
//! the agent is not offered is answered as unknown, and a configuration listing a tool the
//! server does not have is refused at start.

use crate::common;

use std::sync::{Arc, Mutex};

use futures_util::stream;
use portal_core::effort::Effort;
use portal_core::model::ModelCapabilities;
use portal_core::prompt::{PictureSource, Prompt};
use portal_core::stream::TurnEvent;
use portal_core::{Block, Message, Role, TurnStatus};
use portal_host::turn::{TurnSetup, Turns};
use portal_identity::{Agent, Identity};
use portal_model::demo::capabilities;
use portal_model::{FinishReason, Model, ModelEvent, ModelStream};
use portal_store::{NewTurn, Owner, Storage};
use portal_store_sqlite::SqliteStorage;
use portal_tools::ToolRegistry;
use serde_json::json;

/// A model that calls `publish_note` and the portal's `read_tool_result` whatever the prompt
/// offers, then answers once the calls are answered; it keeps the tools each prompt offered.
#[derive(Debug)]
struct Insistent {
    capabilities: ModelCapabilities,
    offered: Mutex<Vec<Vec<String>>>,
}

impl Model for Insistent {
    fn label(&self) -> &str {
        "insistent"
    }

    fn capabilities(&self) -> &ModelCapabilities {
        &self.capabilities
    }

    fn stream(&self, prompt: &Prompt, _pictures: &dyn PictureSource) -> ModelStream {
        let mut offered = self.offered.lock().expect("offered");
        offered.push(prompt.tools.iter().map(|t| t.name.clone()).collect());
        let call = |index: u32, name: &str, arguments: serde_json::Value| {
            Ok(ModelEvent::ToolCallEnd {
                index,
                id: Some(format!("call_{index}")),
                name: name.into(),
                arguments: Ok(arguments),
            })
        };
        let events = if offered.len() == 1 {
            vec![
                call(
                    0,
                    "publish_note",
                    json!({"title": "Herons", "text": "Grey."}),
                ),
                call(1, "read_tool_result", json!({"call_id": "call_1_1_0"})),
                Ok(ModelEvent::Finished {
                    reason: FinishReason::ToolCalls,
                }),
            ]
        } else {
            vec![
                Ok(ModelEvent::TextDelta("Done.".into())),
                Ok(ModelEvent::Finished {
                    reason: FinishReason::Stop,
                }),
            ]
        };
        Box::pin(stream::iter(events))
    }
}

/// An agent of organisation `local` offered `tools`.
fn agent(tools: &[&str]) -> Agent {
    Agent {
        id: "helper".into(),
        organisation: "local".into(),
        name: "Helper".into(),
        instructions: String::new(),
        model: "insistent".into(),
        effort: Effort::Medium,
        skills: Vec::new(),
        tools: tools.iter().map(|t| t.to_string()).collect(),
        mcp: Default::default(),
        knowledge: Vec::new(),
        description: String::new(),
        examples: Vec::new(),
    }
}

/// Runs one turn of the insistent model for `agent`: its events, the stored turn, and the tools
/// each prompt offered.
async fn insist(agent: &Agent) -> (Vec<TurnEvent>, portal_core::Turn, Vec<Vec<String>>) {
    let storage: Arc<dyn Storage> = Arc::new(SqliteStorage::in_memory().expect("storage"));
    let turns = Turns::new(
        Arc::clone(&storage),
        ToolRegistry::standard(),
        Default::default(),
        Default::default(),
        Default::default(),
        None,
    );
    let id = storage
        .create_conversation(&Owner::new("local", "local"), &agent.id)
        .expect("a conversation");
    let model = Arc::new(Insistent {
        capabilities: ModelCapabilities {
            id: "insistent".into(),
            ..capabilities()
        },
        offered: Mutex::new(Vec::new()),
    });
    let setup = TurnSetup {
        org_id: "local".into(),
        user_id: "local".into(),
        instructions: String::new(),
        project_instructions: String::new(),
        model: model.clone(),
        price: None,
        selected_skills: Vec::new(),
        catalogue: Vec::new(),
        effort: Effort::Medium,
        tools: turns.tools().for_agent(agent),
    };
    let message = Message::new(Role::User, vec![Block::text("Publish a note on herons")]);
    let turn = turns
        .start(&id, NewTurn::chat(message), setup)
        .await
        .expect("opens");
    let events = common::logged_events(&turns, &id, turn).await;
    let stored = storage
        .load_transcript("local", &id)
        .expect("transcript")
        .turns
        .remove(0);
    let offered = model.offered.lock().expect("offered").clone();
    (events, stored, offered)
}

fn result_of<'a>(turn: &'a portal_core::Turn, call: &str) -> Option<(&'a str, bool)> {
    turn.messages
        .iter()
        .flat_map(|m| &m.blocks)
        .find_map(|b| match b {
            Block::ToolResult {
                call_id,
                content,
                is_error,
                ..
            } if call_id == call => Some((content.as_str(), *is_error)),
            _ => None,
        })
}

#[tokio::test]
async fn a_call_to_a_tool_the_agent_is_not_offered_is_answered_as_unknown() {
    let (events, turn, offered) = insist(&agent(&[])).await;
    assert!(
        offered
            .iter()
            .all(|tools| !tools.contains(&"publish_note".into())),
        "no prompt offered publish_note: {offered:?}"
    );
    assert_eq!(
        turn.status,
        TurnStatus::Completed,
        "nothing waited for approval"
    );
    assert!(matches!(
        events.last(),
        Some(TurnEvent::TurnEnd {
            status: TurnStatus::Completed,
            ..
        })
    ));
    assert_eq!(
        result_of(&turn, "call_1_1_0"),
        Some((
            "There is no tool named `publish_note` here; call one of the tools this prompt lists.",
            true
        )),
        "answered as unknown, not run"
    );
    let (portal, _) = result_of(&turn, "call_1_1_1").expect("read_tool_result answered");
    assert!(
        !portal.contains("There is no tool named"),
        "the portal's own tool still runs: {portal}"
    );
}

#[tokio::test]
async fn an_agent_listing_a_demo_tool_is_offered_it_and_its_call_waits_for_approval() {
    let (events, turn, offered) = insist(&agent(&["publish_note"])).await;
    assert_eq!(offered, [vec!["publish_note".to_string()]]);
    assert_eq!(turn.status, TurnStatus::Paused);
    assert!(matches!(
        events.last(),
        Some(TurnEvent::TurnEnd {
            status: TurnStatus::Paused,
            ..
        })
    ));
    assert!(
        turn.messages.iter().flat_map(|m| &m.blocks).any(
            |b| matches!(b, Block::ApprovalRequest { call_id, .. } if call_id == "call_1_1_0")
        )
    );
}

/// A local-mode configuration: organisation `studio` with the agents `publisher` (offered
/// `publish_note`) and `plain` (no `tools`), plus `extra` files.
fn configuration(extra: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let org = dir.path().join("organisations/studio");
    std::fs::create_dir_all(org.join("agents")).expect("folders");
    let files = [
        ("organisation.toml", "name = \"Studio\"\n"),
        (
            "agents/publisher.toml",
            "name = \"Publisher\"\ntools = [\"publish_note\"]\n",
        ),
        ("agents/plain.toml", "name = \"Plain\"\n"),
    ];
    for (path, text) in files.iter().chain(extra) {
        std::fs::write(org.join(path), text).expect("written");
    }
    dir
}

fn config(dir: &std::path::Path, data: &std::path::Path) -> portal_server::Config {
    portal_server::Config {
        identity: Some(Identity::load(dir).expect("the configuration loads")),
        ..portal_server::Config::local(data)
    }
}

#[tokio::test]
async fn the_demo_model_publishes_only_for_the_agent_whose_file_lists_publish_note() {
    let dir = configuration(&[]);
    let data = tempfile::tempdir().expect("tempdir");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("loopback port");
    let server = common::Server::at(format!(
        "http://{}",
        listener.local_addr().expect("address")
    ));
    let config = config(dir.path(), data.path());
    tokio::spawn(async move { portal_server::serve(listener, config).await });

    for (agent, ends) in [
        ("publisher", TurnStatus::Paused),
        ("plain", TurnStatus::Completed),
    ] {
        let created: serde_json::Value = server
            .client
            .post(server.url("/api/conversations"))
            .json(&json!({ "agent": agent }))
            .send()
            .await
            .expect("created")
            .json()
            .await
            .expect("json");
        let id = created["id"].as_str().expect("id");
        let turn = server.send(id, "Please publish a note on herons").await;
        let events = server.events(id, turn, None).await;
        assert!(
            matches!(events.last(), Some((_, TurnEvent::TurnEnd { status, .. })) if *status == ends),
            "{agent}: {events:?}"
        );
        let calls: Vec<String> = server.transcript(id).await.turns[0]
            .messages
            .iter()
            .flat_map(|m| &m.blocks)
            .filter_map(|b| match b {
                Block::ToolUse { name, .. } => Some(name.clone()),
                _ => None,
            })
            .collect();
        let expected: &[&str] = match ends {
            TurnStatus::Paused => &["publish_note"],
            _ => &[],
        };
        assert_eq!(calls, expected, "{agent}");
    }
}

#[tokio::test]
async fn a_configuration_listing_a_tool_the_server_lacks_is_refused_at_start() {
    let data = tempfile::tempdir().expect("tempdir");
    for (tools, problem) in [
        ("[\"publish-note\"]", "this server has no such tool"),
        ("[\"read_document\"]", "one of the portal's own tools"),
    ] {
        let dir = configuration(&[(
            "agents/typo.toml",
            &format!("name = \"Typo\"\ntools = {tools}\n"),
        )]);
        let error = portal_server::Server::open(&config(dir.path(), data.path()))
            .expect_err("refused")
            .to_string();
        assert!(
            error.contains("organisations/studio/agents/typo.toml lists the tool")
                && error.contains(problem),
            "{error}"
        );
    }
}
