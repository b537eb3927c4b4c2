//! The usage report over a million usage rows (issue 29): `portal usage --by user` for an
//! organisation whose 1,000 users made 1,000,000 model calls (next to another organisation's
//! 100,000), on SQLite and on PostgreSQL. Prints the report query's time through `Storage` (first
//! run, then p50 and max of the next runs) and the whole command's (the real binary, from start
//! to its last line). It must answer in under a second.
//!
//! Rows are written by one `INSERT … SELECT` per organisation, straight into the database.
//! PostgreSQL needs `PORTAL_TEST_POSTGRES` (`cargo xtask bench` gives it a throwaway PostgreSQL)
//! and gets a schema of its own there, dropped at the end; without it only SQLite is measured.
//!
//! `cargo bench -p portal-server --bench usage_report [-- --rows N --rounds N]`; run by `cargo
//! xtask bench`, never by CI.

use std::time::{Duration, Instant};

#[path = "../tests/it/databases/mod.rs"]
mod databases;

use databases::Database;
use portal_store::{UsageGrouping, UsageQuery};

const USERS: usize = 1_000;

fn option(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let rows = option("--rows", 1_000_000);
    let rounds = option("--rounds", 10);
    println!(
        "{:<11} {:>9} {:>9} {:>9} {:>12}",
        "database", "first ms", "p50 ms", "max ms", "command ms"
    );
    measure(&Database::sqlite(), rows, rounds);
    match Database::postgres() {
        Some(db) => measure(&db, rows, rounds),
        None => println!("PostgreSQL: skipped (PORTAL_TEST_POSTGRES is not set)"),
    }
}

fn measure(db: &Database, rows: usize, rounds: usize) {
    drop(db.open());
    let filled = Instant::now();
    db.execute(&seed(db, "acme", rows));
    db.execute(&seed(db, "globex", rows / 10));
    if let Database::Postgres { .. } = db {
        db.execute("ANALYZE usage");
    }
    eprintln!(
        "{}: {} usage rows written in {:.1} s",
        db.name(),
        rows + rows / 10,
        filled.elapsed().as_secs_f64()
    );
    let storage = db.open();
    let query = UsageQuery {
        org_id: Some("acme".into()),
        user_id: None,
        since_ms: None,
        until_ms: None,
        by: UsageGrouping::User,
    };
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds.max(2) {
        let started = Instant::now();
        let lines = storage.usage_report(&query).expect("the report");
        times.push(started.elapsed());
        assert_eq!(lines.len(), USERS.min(rows));
        assert_eq!(
            lines.iter().map(|l| l.spent.calls).sum::<u64>(),
            rows as u64
        );
    }
    drop(storage);
    let first = times.remove(0);
    times.sort();
    let started = Instant::now();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_portal"))
        .args([
            "usage",
            "--database",
            &db.url(),
            "--org",
            "acme",
            "--by",
            "user",
        ])
        .output()
        .expect("portal usage runs");
    let command = started.elapsed();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    println!(
        "{:<11} {:>9.1} {:>9.1} {:>9.1} {:>12.1}",
        db.name(),
        ms(first),
        ms(times[times.len() / 2]),
        ms(*times.last().expect("a time")),
        ms(command)
    );
}

/// One statement writing `rows` usage rows of organisation `org`: its 1,000 users' calls on 10
/// models through 5 agents over 90 days, a tenth unpriced and a hundredth estimated.
fn seed(db: &Database, org: &str, rows: usize) -> String {
    let last = rows.saturating_sub(1);
    let step = 90 * 86_400_000 / rows.max(1);
    let numbers = match db {
        Database::Sqlite(_) => format!(
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {last})"
        ),
        Database::Postgres { .. } => {
            format!("WITH n(i) AS (SELECT generate_series(0, {last})::BIGINT)")
        }
    };
    format!(
        "{numbers}
         INSERT INTO usage (org_id, user_id, agent_id, conversation_id, turn, purpose, model,
                            input_tokens, cached_input_tokens, output_tokens, reasoning_tokens,
                            estimated, currency, input_price, cached_input_price, output_price,
                            cost_nanos, recorded_at)
         SELECT '{org}', 'user-' || (i % {USERS}), 'agent-' || (i % 5), 'c' || (i / 10),
                1 + i % 10, 'turn', 'model-' || (i % 10), 1000 + i % 3000, (i % 7) * 100,
                100 + i % 500, i % 50, i % 100 = 0,
                CASE WHEN i % 10 = 9 THEN NULL ELSE 'USD' END,
                CASE WHEN i % 10 = 9 THEN NULL ELSE 2500000 END,
                CASE WHEN i % 10 = 9 THEN NULL ELSE 1250000 END,
                CASE WHEN i % 10 = 9 THEN NULL ELSE 10000000 END,
                CASE WHEN i % 10 = 9 THEN NULL ELSE 2500 + i % 20000 END,
                1788000000000 + i * {step}
         FROM n"
    )
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
