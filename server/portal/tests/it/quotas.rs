//! Usage quotas (issue 29, docs/usage.md): a message that would start a turn past a quota is
//! refused with 429 and a sentence before anything is recorded, and fifty sends at once, on one
//! server or across two replicas of one PostgreSQL database, cannot pass the last of a quota
//! together.
//!
//! Each user's history is ten finished turns of 1,000 tokens, so a turn still running holds
//! 1,000; with 3,000 tokens left, exactly three turns start. The demo model runs slowly, so
//! the three are still running while the fifty sends are decided.

use crate::common;
use crate::databases;

use std::path::Path;

use common::{Server, start_config};
use databases::Database;
use portal_core::usage::{CallPurpose, Tokens, Usage};
use portal_core::{Block, Message, Role, TurnStatus};
use portal_identity::{Identity, TokenDigest};
use portal_store::{Location, NewTurn, Owner, Storage};

/// What the users have spent today, and their daily limit: 3,000 tokens are left.
const SPENT: u64 = 10_000;
const LIMIT: u64 = 13_000;

/// Organisation `acme` where each user may spend `LIMIT` tokens a day, with users `alice` and
/// `bob` signing in with the token that is their name.
fn acme(root: &Path) -> Identity {
    let write = |path: &str, text: String| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write(
        "organisations/acme/organisation.toml",
        format!(
            "name = \"Acme\"\n\n[[quotas]]\napplies_to = \"each_user\"\nperiod = \"day\"\ntokens = {LIMIT}\n"
        ),
    );
    for user in ["alice", "bob"] {
        write(
            &format!("organisations/acme/users/{user}/user.toml"),
            format!(
                "name = \"{user}\"\ntoken_sha256 = \"{}\"\n",
                TokenDigest::of(user).to_hex()
            ),
        );
    }
    Identity::load(root).expect("identity")
}

/// Ten finished turns of 1,000 tokens each for `user`, recorded now.
fn spend(storage: &dyn Storage, user: &str) {
    let owner = Owner {
        org_id: "acme".into(),
        user_id: user.into(),
    };
    for _ in 0..10 {
        let id = storage
            .create_conversation(&owner, "default")
            .expect("conversation");
        let message = Message {
            role: Role::User,
            blocks: vec![Block::text("earlier")],
            attachments: Vec::new(),
        };
        let turn = storage
            .open_turn(&id, NewTurn::chat(message))
            .expect("turn");
        let usage = Usage {
            purpose: CallPurpose::Turn,
            model: "demo".into(),
            tokens: Tokens::reported(SPENT / 10 - 100, 100),
            price: None,
        };
        storage.record_usage(&id, turn, &usage).expect("usage");
        storage
            .set_turn_status(&id, turn, TurnStatus::Completed)
            .expect("ended");
    }
}

async fn new_conversation(server: &Server, user: &str) -> String {
    let response = server
        .client
        .post(server.url("/api/conversations"))
        .bearer_auth(user)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), 201);
    let body: serde_json::Value = response.json().await.expect("json");
    body["id"].as_str().expect("id").to_string()
}

/// Sends a message to each conversation at once, the `n`th through `servers[n % len]`; the
/// answers' statuses and bodies.
async fn send_all(servers: &[&Server], user: &str, ids: &[String]) -> Vec<(u16, String)> {
    let sends = ids.iter().enumerate().map(|(n, id)| {
        let server = servers[n % servers.len()];
        async move {
            let response = server
                .client
                .post(server.url(&format!("/api/conversations/{id}/messages")))
                .bearer_auth(user)
                .json(&serde_json::json!({ "text": "Tell me about scripts" }))
                .send()
                .await
                .expect("sent");
            let status = response.status().as_u16();
            (status, response.text().await.expect("body"))
        }
    });
    futures_util::future::join_all(sends).await
}

/// Fifty sends at once with three turns of quota left: exactly three start, the rest are refused
/// with the sentence, and the turns that started are the only ones recorded. Bob, under the same
/// rule, is not held to what Alice spent.
async fn three_of_fifty_start(db: &Database, servers: &[&Server]) {
    let mut ids = Vec::new();
    for _ in 0..50 {
        ids.push(new_conversation(servers[0], "alice").await);
    }
    let answers = send_all(servers, "alice", &ids).await;
    let started = answers.iter().filter(|(status, _)| *status == 202).count();
    let refused: Vec<&String> = answers
        .iter()
        .filter(|(status, _)| *status == 429)
        .map(|(_, body)| body)
        .collect();
    assert_eq!(
        started,
        3,
        "{} on {}: {answers:?}",
        "turns started",
        db.name()
    );
    assert_eq!(refused.len(), 47, "{answers:?}");
    for body in refused {
        assert!(
            body.contains("You have used 10,000 tokens of your 13,000 tokens for today, and 3 replies still running are expected to spend the rest, so this message was not sent. The limit resets at "),
            "{body}"
        );
    }
    let recorded = tokio::task::block_in_place(|| {
        db.count(
            "SELECT count(*) FROM turns JOIN conversations ON conversations.id = turns.conversation_id
             WHERE conversations.user_id = 'alice'",
        )
    });
    assert_eq!(recorded, 10 + 3, "a refused message records nothing");
    let bob = new_conversation(servers[0], "bob").await;
    let answers = send_all(servers, "bob", &[bob]).await;
    assert_eq!(answers[0].0, 202, "{answers:?}");
}

/// Seeds `db` with both users' history, then runs `servers` (made from the config folder) in a
/// runtime of its own: the databases' test helpers block, so they run outside it or in
/// `block_in_place`.
fn with_history<F: std::future::Future<Output = ()>>(
    db: &Database,
    servers: impl FnOnce(Identity) -> F,
) {
    {
        let storage = db.open();
        spend(&*storage, "alice");
        spend(&*storage, "bob");
    }
    let config = tempfile::tempdir().expect("tempdir");
    let identity = acme(config.path());
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(servers(identity));
}

#[test]
fn fifty_sends_at_once_with_three_turns_of_quota_left_start_exactly_three() {
    let db = Database::sqlite();
    let Database::Sqlite(data) = &db else {
        unreachable!("a SQLite database")
    };
    let db = &db;
    with_history(db, |identity| async move {
        let server = start_config(portal_server::Config {
            identity: Some(identity),
            ..common::config(data.path(), 20.0, None)
        })
        .await;
        three_of_fifty_start(db, &[&server]).await;
    });
}

#[test]
fn fifty_sends_at_once_across_two_replicas_with_three_turns_of_quota_left_start_exactly_three() {
    let Some(db) = Database::postgres() else {
        return;
    };
    let scratch = tempfile::tempdir().expect("tempdir");
    let (db, scratch) = (&db, &scratch);
    with_history(db, |identity| async move {
        let replica = || portal_server::Config {
            database: Location::Postgres(db.url()),
            identity: Some(identity.clone()),
            ..common::config(scratch.path(), 20.0, None)
        };
        let (one, two) = (start_config(replica()).await, start_config(replica()).await);
        three_of_fifty_start(db, &[&one, &two]).await;
    });
}

/// An organisation's monthly quota in dollars counts every user's dollar rows, and nothing
/// priced in another currency or unpriced.
fn an_organisation_quota_in_dollars_counts_every_users_dollars_only(db: &Database) {
    use portal_core::usage::{Cost, Price};
    use portal_store::quota::{Limit, Period, Quota, Spender};

    let storage = db.open();
    let priced =
        |currency: &str| Some(Price::per_million(currency, 1_000.0, None, 0.0).expect("a price"));
    // 1,000 input tokens at 1,000 a million: 1.00 a call.
    for (user, price) in [
        ("alice", priced("USD")),
        ("bob", priced("USD")),
        ("bob", priced("EUR")),
        ("carol", None),
    ] {
        let owner = Owner {
            org_id: "acme".into(),
            user_id: user.into(),
        };
        let id = storage
            .create_conversation(&owner, "default")
            .expect("conversation");
        let message = || Message {
            role: Role::User,
            blocks: vec![Block::text("earlier")],
            attachments: Vec::new(),
        };
        let turn = storage
            .open_turn(&id, NewTurn::chat(message()))
            .expect("turn");
        let usage = Usage {
            purpose: CallPurpose::Turn,
            model: "m".into(),
            tokens: Tokens::reported(1_000, 0),
            price,
        };
        storage.record_usage(&id, turn, &usage).expect("usage");
        storage
            .set_turn_status(&id, turn, TurnStatus::Completed)
            .expect("ended");
    }
    let quota = |dollars: u64| Quota {
        spender: Spender::Organisation {
            org_id: "acme".into(),
        },
        period: Period::Month,
        limit: Limit::Cost(Cost {
            currency: "USD".into(),
            nanos: dollars * 1_000_000_000,
        }),
    };
    let open = |dollars| {
        let owner = Owner {
            org_id: "acme".into(),
            user_id: "dave".into(),
        };
        let id = storage
            .create_conversation(&owner, "default")
            .expect("conversation");
        let mut turn = NewTurn::chat(Message {
            role: Role::User,
            blocks: vec![Block::text("now")],
            attachments: Vec::new(),
        });
        turn.quotas = vec![quota(dollars)];
        storage.open_turn(&id, turn)
    };
    let refused = open(2).expect_err("alice's and bob's dollars reach 2.00");
    assert!(
        refused
            .to_string()
            .starts_with("Your organisation has used 2.00 USD of its 2.00 USD for this month"),
        "{refused}"
    );
    open(3).expect("euros and unpriced rows do not count: 2.00 of 3.00");
}

#[test]
fn an_organisation_quota_in_dollars_counts_every_users_dollars_only_on_sqlite() {
    an_organisation_quota_in_dollars_counts_every_users_dollars_only(&Database::sqlite());
}

#[test]
fn an_organisation_quota_in_dollars_counts_every_users_dollars_only_on_postgres() {
    if let Some(db) = Database::postgres() {
        an_organisation_quota_in_dollars_counts_every_users_dollars_only(&db);
    }
}
