//! The operator's usage report (issue 29): `Storage::usage_report` on both databases, `portal
//! usage` run as the real binary, and `GET /api/usage` for an organisation's administrators.

use crate::common;
use crate::databases;

use databases::Database;

use portal_core::usage::{Cost, Price, Tokens};
use portal_core::{Block, Message, Role};
use portal_store::{CallPurpose, NewTurn, Owner, Usage, UsageGrouping, UsageLine, UsageQuery};

/// 2026-12-01 00:00 UTC, in milliseconds since the epoch.
const DEC_1: i64 = 20_788 * 86_400_000;
const HOUR: i64 = 3_600_000;

fn usd(input: f64) -> Price {
    Price::per_million("USD", input, Some(0.25), 10.0).expect("price")
}

fn call(model: &str, tokens: Tokens, price: Option<Price>) -> Usage {
    Usage {
        purpose: CallPurpose::Turn,
        model: model.into(),
        tokens,
        price,
    }
}

fn cost(usage: &Usage) -> u64 {
    usage.cost().expect("priced").nanos
}

/// The rows the report tests read, each recorded at `at` (ms) through `record_usage` on a
/// conversation of its owner with its agent.
fn rows() -> Vec<(Owner, &'static str, i64, Usage)> {
    let tokens = Tokens {
        cached_input: 400,
        reasoning: 7,
        ..Tokens::reported(1_000, 50)
    };
    vec![
        // Alice's calls on model-x before and after its price changed.
        (
            Owner::new("acme", "alice"),
            "researcher",
            DEC_1 + 10 * HOUR,
            call("model-x", tokens, Some(usd(2.0))),
        ),
        (
            Owner::new("acme", "alice"),
            "researcher",
            DEC_1 + 24 * HOUR,
            call("model-x", Tokens::estimated(300, 20), Some(usd(4.0))),
        ),
        // Dave's calls: one on a model without a price, one in euros at the day's last moment.
        (
            Owner::new("acme", "dave"),
            "assistant",
            DEC_1 + 30 * HOUR,
            call("model-y", Tokens::reported(100, 10), None),
        ),
        (
            Owner::new("acme", "dave"),
            "assistant",
            DEC_1 + 48 * HOUR - 1,
            call(
                "model-z",
                Tokens::reported(2_000, 100),
                Some(Price::per_million("EUR", 1.0, None, 2.0).expect("price")),
            ),
        ),
        // Another organisation's call, which acme's reports never show.
        (
            Owner::new("globex", "bob"),
            "assistant",
            DEC_1 + HOUR,
            call("model-x", Tokens::reported(5_000, 500), Some(usd(2.0))),
        ),
    ]
}

/// Records [`rows`] in `db`, each at its time.
fn seed(db: &Database) {
    let storage = db.open();
    for (owner, agent, at, usage) in rows() {
        let id = storage
            .create_conversation(&owner, agent)
            .expect("conversation");
        let turn = storage
            .open_turn(
                &id,
                NewTurn::chat(Message::new(Role::User, vec![Block::text("Hello")])),
            )
            .expect("turn");
        storage.record_usage(&id, turn, &usage).expect("usage row");
        db.execute(&format!(
            "UPDATE usage SET recorded_at = {at} WHERE id = (SELECT MAX(id) FROM usage)"
        ));
    }
}

fn query(org: Option<&str>, by: UsageGrouping) -> UsageQuery {
    UsageQuery {
        org_id: org.map(String::from),
        user_id: None,
        since_ms: None,
        until_ms: None,
        by,
    }
}

fn keys(lines: &[UsageLine]) -> Vec<&str> {
    lines.iter().map(|l| l.key.as_str()).collect()
}

fn costs(line: &UsageLine) -> Vec<(String, u64)> {
    line.spent
        .costs
        .iter()
        .map(|Cost { currency, nanos }| (currency.clone(), *nanos))
        .collect()
}

fn usage_report_groups_by_day_user_model_and_agent(db: &Database) {
    seed(db);
    let storage = db.open();
    let all = rows();
    let (alice_1, alice_2, dave_eur) = (cost(&all[0].3), cost(&all[1].3), cost(&all[3].3));

    let days = storage
        .usage_report(&query(Some("acme"), UsageGrouping::Day))
        .expect("by day");
    assert_eq!(keys(&days), ["2026-12-01", "2026-12-02"]);
    assert_eq!(days[0].spent.calls, 1);
    assert_eq!(costs(&days[0]), [("USD".into(), alice_1)]);
    assert_eq!(days[1].spent.calls, 3);
    assert_eq!(
        costs(&days[1]),
        [("EUR".into(), dave_eur), ("USD".into(), alice_2)]
    );
    assert_eq!(days[1].spent.unpriced_calls, 1);
    assert_eq!(days[1].estimated_calls, 1);
    assert!(days[1].spent.tokens.estimated);

    let users = storage
        .usage_report(&query(Some("acme"), UsageGrouping::User))
        .expect("by user");
    assert_eq!(keys(&users), ["alice", "dave"]);
    let alice = &users[0];
    assert_eq!(alice.spent.calls, 2);
    assert_eq!(
        (
            alice.spent.tokens.input,
            alice.spent.tokens.cached_input,
            alice.spent.tokens.output,
            alice.spent.tokens.reasoning
        ),
        (1_300, 400, 70, 7)
    );
    assert_eq!(
        costs(alice),
        [("USD".into(), alice_1 + alice_2)],
        "each row at the price it was written with"
    );
    assert_ne!(alice_1, alice_2, "the price changed between the two rows");

    let everyone = storage
        .usage_report(&query(None, UsageGrouping::User))
        .expect("every organisation");
    assert_eq!(keys(&everyone), ["acme/alice", "acme/dave", "globex/bob"]);

    let models = storage
        .usage_report(&query(Some("acme"), UsageGrouping::Model))
        .expect("by model");
    assert_eq!(keys(&models), ["model-x", "model-y", "model-z"]);
    assert!(models[1].spent.costs.is_empty(), "unpriced, never 0");
    assert_eq!(models[1].spent.unpriced_calls, 1);
    assert_eq!(
        models[0].spent.calls, 2,
        "globex's model-x call is not acme's"
    );

    let agents = storage
        .usage_report(&query(Some("acme"), UsageGrouping::Agent))
        .expect("by agent");
    assert_eq!(keys(&agents), ["assistant", "researcher"]);
    assert_eq!(
        agents.iter().map(|l| l.spent.calls).collect::<Vec<_>>(),
        [2, 2]
    );
}

fn usage_report_counts_only_the_user_and_the_days_asked_for(db: &Database) {
    seed(db);
    let storage = db.open();
    let dec_2 = UsageQuery {
        user_id: Some("dave".into()),
        since_ms: Some(DEC_1 + 24 * HOUR),
        until_ms: Some(DEC_1 + 48 * HOUR),
        ..query(Some("acme"), UsageGrouping::Day)
    };
    let lines = storage.usage_report(&dec_2).expect("dave's 2 December");
    assert_eq!(keys(&lines), ["2026-12-02"]);
    assert_eq!(lines[0].spent.calls, 2);
    let before = UsageQuery {
        until_ms: Some(DEC_1 + 24 * HOUR),
        ..query(Some("acme"), UsageGrouping::User)
    };
    let lines = storage.usage_report(&before).expect("1 December");
    assert_eq!(keys(&lines), ["alice"]);
    assert_eq!(lines[0].spent.calls, 1);
    let nobody = storage
        .usage_report(&query(Some("initech"), UsageGrouping::User))
        .expect("an organisation without rows");
    assert!(nobody.is_empty());
}

/// `portal usage` on `db` with `args`.
fn portal_usage(db: &Database, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_portal"))
        .args(["usage", "--database", &db.url()])
        .args(args)
        .output()
        .expect("the portal binary runs")
}

fn stdout(output: &std::process::Output) -> String {
    assert!(
        output.status.success(),
        "portal usage failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn usage_report_cli_prints_a_table_and_json(db: &Database) {
    seed(db);
    let table = stdout(&portal_usage(db, &["--org", "acme", "--by", "user"]));
    expect_test::expect![[r#"
        user   calls   input  cached  output  reasoning  cost
        alice      2  ~1,300    ~400     ~70         ~7  0.0032 USD
        dave       2   2,100       0     110          0  0.0022 EUR (+1 unpriced)
        --------------------------------------------------------------------------------------
        total      4  ~3,400    ~400    ~180         ~7  0.0022 EUR + 0.0032 USD (+1 unpriced)
        ~ counts include the portal's estimate for calls the provider reported no tokens for
    "#]]
    .assert_eq(&table);
    let days = stdout(&portal_usage(
        db,
        &[
            "--org",
            "acme",
            "--since",
            "2026-12-02",
            "--until",
            "2026-12-02",
        ],
    ));
    assert!(days.contains("2026-12-02"), "{days}");
    assert!(!days.contains("2026-12-01"), "{days}");

    let json: serde_json::Value =
        serde_json::from_str(&stdout(&portal_usage(db, &["--by", "model", "--json"])))
            .expect("JSON");
    assert_eq!(json["by"], "model");
    let keys: Vec<&str> = json["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| l["key"].as_str().expect("key"))
        .collect();
    assert_eq!(keys, ["model-x", "model-y", "model-z"]);
    assert_eq!(json["lines"][1]["costs"], serde_json::json!([]));
    assert_eq!(json["lines"][1]["unpriced_calls"], 1);
    assert_eq!(json["total"]["calls"], 5, "every organisation's calls");
}

fn usage_report_cli_refuses_what_it_cannot_read(db: &Database) {
    for (args, says) in [
        (&["--user", "alice"][..], "--org"),
        (&["--since", "1/12/2026"][..], "YYYY-MM-DD"),
        (&["--until", "2026-02-30"][..], "YYYY-MM-DD"),
        (&["--by", "week"][..], "day, user, model or agent"),
    ] {
        let output = portal_usage(db, args);
        assert!(!output.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

/// `portal usage` reads the database as it is: one of another schema version than this build's
/// is refused in words and left unchanged, since migrating it would move running servers of
/// another version on.
fn usage_report_cli_never_migrates(db: &Database) {
    drop(db.open());
    let location: portal_store::Location = db.url().parse().expect("a database URL");
    let known = portal_server::SCHEMA_VERSIONS.of(&location);
    for (version, says) in [
        (known - 1, "older than this build's"),
        (known + 1, "knows versions up to"),
    ] {
        db.set_schema_version(version);
        let output = portal_usage(db, &[]);
        assert!(!output.status.success(), "schema version {version}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(says), "{version}: {stderr}");
        assert_eq!(db.schema_version(), i64::from(version), "left as it was");
    }
    db.set_schema_version(known);
}

/// A configuration with acme's administrator alice and member dave, and globex's
/// administrator bob, each signing in with a token named after them.
fn configuration() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let users = [
        ("acme", "alice", "admin"),
        ("acme", "dave", "member"),
        ("globex", "bob", "admin"),
    ];
    for (org, user, role) in users {
        let folder = dir.path().join(format!("organisations/{org}/users/{user}"));
        std::fs::create_dir_all(&folder).expect("mkdir");
        std::fs::write(
            dir.path()
                .join(format!("organisations/{org}/organisation.toml")),
            format!("name = \"{org}\"\n"),
        )
        .expect("write");
        let digest = portal_identity::TokenDigest::of(&format!("{user}-token")).to_hex();
        std::fs::write(
            folder.join("user.toml"),
            format!("name = \"{user}\"\ntoken_sha256 = \"{digest}\"\nrole = \"{role}\"\n"),
        )
        .expect("write");
    }
    dir
}

fn usage_report_api_answers_an_organisations_administrators_with_its_rows_alone(db: &Database) {
    seed(db);
    let config_dir = configuration();
    let identity = portal_identity::Identity::load(config_dir.path()).expect("loads");
    let data = tempfile::tempdir().expect("tempdir");
    let config = portal_server::Config {
        database: db.url().parse().expect("a database URL"),
        identity: Some(identity),
        ..common::config(data.path(), 0.0, None)
    };
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async move {
        let server = common::start_config(config).await;
        let get = |user: &str, query: &str| {
            let request = server
                .client
                .get(server.url(&format!("/api/usage{query}")))
                .bearer_auth(format!("{user}-token"));
            async move {
                let response = request.send().await.expect("answer");
                let status = response.status().as_u16();
                let body: serde_json::Value = response.json().await.expect("JSON");
                (status, body)
            }
        };
        let (status, body) = get("dave", "?by=user").await;
        assert_eq!(status, 403, "{body}");
        let error = body["error"].as_str().expect("a sentence");
        assert!(
            error.contains("administrator of acme") && error.contains("role = \"admin\""),
            "{error}"
        );

        let (status, body) = get("alice", "?by=user").await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["by"], "user");
        let keys: Vec<&str> = body["lines"]
            .as_array()
            .expect("lines")
            .iter()
            .map(|l| l["key"].as_str().expect("key"))
            .collect();
        assert_eq!(keys, ["alice", "dave"], "globex's bob is not acme's");
        assert_eq!(body["total"]["calls"], 4);

        let (status, body) = get("bob", "?by=model").await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["lines"].as_array().expect("lines").len(), 1);
        assert_eq!(body["lines"][0]["key"], "model-x");
        assert_eq!(body["total"]["calls"], 1, "acme's calls are not globex's");
        let (_, body) = get("bob", "?user=alice").await;
        assert_eq!(
            body["lines"],
            serde_json::json!([]),
            "another organisation's user"
        );

        let (_, body) = get("alice", "?since=2026-12-02&user=dave").await;
        assert_eq!(body["lines"][0]["key"], "2026-12-02");
        assert_eq!(body["total"]["calls"], 2);

        for (query, says) in [
            ("?since=yesterday", "YYYY-MM-DD"),
            ("?by=week", "day, user, model or agent"),
            ("?org=globex", "`by`, `user`, `since` and `until`"),
            ("?since=2026-12-03&until=2026-12-01", "earlier day first"),
        ] {
            let (status, body) = get("alice", query).await;
            assert_eq!(status, 400, "{query}: {body}");
            let error = body["error"].as_str().expect("a sentence");
            assert!(error.contains(says), "{query}: {error}");
        }
    });
}

on_every_database!(
    usage_report_api_answers_an_organisations_administrators_with_its_rows_alone,
    usage_report_groups_by_day_user_model_and_agent,
    usage_report_counts_only_the_user_and_the_days_asked_for,
    usage_report_cli_prints_a_table_and_json,
    usage_report_cli_refuses_what_it_cannot_read,
    usage_report_cli_never_migrates,
);
