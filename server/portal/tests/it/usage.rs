//! Priced usage (issue 29, docs/usage.md): a conversation with tool calls and an automatic
//! compaction leaves a priced row for every call, the compaction's at the turn's model (rule
//! C11), and the rows add up to the total the usage API shows and `portal usage` prints.

use crate::common;

use common::Server;
use portal_core::usage::{CallPurpose, ConversationUsage, Price, Tally};
use portal_core::{Block, Transcript};
use portal_identity::LOCAL_ORGANISATION;
use portal_model::ModelRegistry;
use portal_store::{ConversationId, Storage, UsageRecord};
use portal_store_sqlite::SqliteStorage;

/// The demo model with a window small enough for a few long messages to reach 85 % of it, priced.
const MODELS: &str = r#"
[[models]]
name = "demo"
kind = "demo"
price = { currency = "USD", input = 3.0, cached_input = 0.3, output = 15.0 }
[models.capabilities]
context_window = 6000
"#;

fn long_message(i: usize) -> String {
    format!(
        "Message {i}: please review the budget. {}",
        "The Lisbon office needs its budget for desks, screens, rent and travel checked line by line. "
            .repeat(14)
    )
}

fn compacted(t: &Transcript) -> bool {
    t.turns.iter().any(|turn| {
        turn.messages
            .iter()
            .flat_map(|m| &m.blocks)
            .any(|b| matches!(b, Block::Compaction { .. }))
    })
}

fn rows(data: &std::path::Path, id: &str) -> Vec<UsageRecord> {
    SqliteStorage::open(data)
        .expect("the same store")
        .usage(LOCAL_ORGANISATION, &ConversationId::new(id))
        .expect("usage rows")
}

#[tokio::test]
async fn a_conversation_with_tool_calls_and_a_compaction_leaves_priced_rows_adding_up_to_its_total()
{
    let data = tempfile::tempdir().expect("a temporary folder");
    let models = ModelRegistry::from_toml(MODELS, 0.0, |_| None).expect("the models file");
    let server: Server = common::start_with(data.path(), 0.0, Some(models)).await;
    let id = server.conversation().await;
    // The demo answers this with a tool call (`count_characters`) and then its reply.
    let turn = server.send(&id, "Tell me about scripts").await;
    server.events(&id, turn, None).await;
    for i in 1..=8 {
        let turn = server.send(&id, &long_message(i)).await;
        server.events(&id, turn, None).await;
        if compacted(&server.transcript(&id).await) {
            break;
        }
    }
    assert!(
        compacted(&server.transcript(&id).await),
        "the long messages compact"
    );

    let rows = rows(data.path(), &id);
    let price = Price::per_million("USD", 3.0, Some(0.3), 15.0).expect("price");
    assert!(
        rows.iter()
            .all(|r| r.usage.price.as_ref() == Some(&price) && r.usage.model == "demo"),
        "every row priced at the turn's model: {rows:#?}"
    );
    let first_turn = rows.iter().filter(|r| r.turn == 1).count();
    assert!(
        first_turn >= 2,
        "the tool call's turn made two calls: {first_turn}"
    );
    assert!(
        rows.iter()
            .any(|r| r.usage.purpose == CallPurpose::Compaction),
        "the compaction left its own row"
    );

    let mut summed = Tally::default();
    for row in &rows {
        summed.add(&row.usage);
    }
    let answered: ConversationUsage = server
        .client
        .get(server.url(&format!("/api/conversations/{id}/usage")))
        .send()
        .await
        .expect("sent")
        .json()
        .await
        .expect("the usage");
    assert_eq!(answered.total, summed, "the API's total is the rows' sum");
    let calls: u64 = answered.turns.iter().map(|t| t.tally.calls).sum();
    assert_eq!(calls, rows.len() as u64, "each row in one turn");
    let nanos: u64 = rows
        .iter()
        .map(|r| r.usage.cost().expect("priced").nanos)
        .sum();
    assert_eq!(answered.total.costs[0].nanos, nanos);
    assert!(nanos > 0);

    // The operator's report says the same.
    let report = std::process::Command::new(env!("CARGO_BIN_EXE_portal"))
        .args(["usage", "--by", "day", "--json", "--data"])
        .arg(data.path())
        .output()
        .expect("portal usage runs");
    assert!(report.status.success(), "{report:?}");
    let report: serde_json::Value = serde_json::from_slice(&report.stdout).expect("JSON");
    let total: Tally = serde_json::from_value(report["total"].clone()).expect("a tally");
    assert_eq!(total, summed, "portal usage's total is the rows' sum");
}
