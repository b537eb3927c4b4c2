//! The schema version a build knows: `portal --version` names it for each database, and a server
//! started on a database that a newer build migrated further exits at once, saying what it found,
//! what it knows and what to do (docs/deploy.md, "Upgrades").

use crate::common;
use crate::databases;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{Store, spawn_portal_with};
use databases::Database;
use portal_server::SCHEMA_VERSIONS;

#[test]
fn portal_version_names_the_build_and_the_schema_version_of_each_database() {
    let output = Command::new(env!("CARGO_BIN_EXE_portal"))
        .arg("--version")
        .output()
        .expect("portal runs");
    assert!(output.status.success(), "{output:?}");
    let printed = String::from_utf8(output.stdout).expect("text");
    assert_eq!(
        printed,
        format!(
            "portal {} (schema versions: SQLite {}, PostgreSQL {})\n",
            env!("CARGO_PKG_VERSION"),
            portal_store_sqlite::SCHEMA_VERSION,
            portal_store_postgres::SCHEMA_VERSION
        )
    );
    assert_eq!(SCHEMA_VERSIONS.sqlite, portal_store_sqlite::SCHEMA_VERSION);
    assert_eq!(
        SCHEMA_VERSIONS.postgres,
        portal_store_postgres::SCHEMA_VERSION
    );
}

/// Migrates `db`, writes a version one past what this build knows into it, as a newer build's
/// migration would, and starts `portal serve` on it: it must exit before serving, with the
/// sentence naming both versions and what to do.
fn a_start_on_a_database_a_newer_build_migrated_is_refused_with_what_to_do(db: &Database) {
    drop(db.open());
    let url = db.url();
    let location: portal_store::Location = url.parse().expect("a database URL");
    let known = SCHEMA_VERSIONS.of(&location);
    db.set_schema_version(known + 1);
    let refused = match spawn_portal_with(Store::Database(&url), "0", &[]) {
        Ok(mut spawned) => {
            let _ = spawned.child.kill();
            panic!(
                "portal serve started on a database of schema version {}",
                known + 1
            );
        }
        Err(output) => output,
    };
    let expected = format!(
        "the {} database has schema version {}, but this build (Portal {}) knows versions up to {known}",
        db.name(),
        known + 1,
        env!("CARGO_PKG_VERSION"),
    );
    assert!(refused.contains(&expected), "{refused}");
    assert!(
        refused.contains("run that newer build (on every replica), or restore the backup"),
        "{refused}"
    );
    assert!(!refused.contains("panicked"), "{refused}");
    assert!(
        !refused.contains("pick another"),
        "another folder is not what to do: {refused}"
    );
    assert_eq!(
        db.schema_version(),
        i64::from(known + 1),
        "the refused start changed nothing"
    );
}

/// Serves on `db`, then moves its schema version one past this build's, as a newer build
/// started on it would (rule D4): `/readyz` says so within its second of caching, naming both
/// versions, while `/healthz` stays up.
fn d4_readiness_fails_once_a_newer_build_migrated_the_database_under_a_running_replica(
    db: &Database,
) {
    drop(db.open());
    let url = db.url();
    let location: portal_store::Location = url.parse().expect("a database URL");
    let known = SCHEMA_VERSIONS.of(&location);
    let mut spawned = spawn_portal_with(Store::Database(&url), "0", &[]).expect("serves");
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let probe = |path: &str| {
        let url = format!("{}{path}", spawned.base);
        runtime.block_on(async move {
            let answer = reqwest::get(url).await.expect("answered");
            let status = answer.status().as_u16();
            let body: serde_json::Value = answer.json().await.expect("json");
            (status, body)
        })
    };
    let (status, ready) = probe("/readyz");
    assert_eq!(
        (status, &ready["status"]),
        (200, &"ready".into()),
        "{ready}"
    );
    assert_eq!(ready["schema"], known);
    db.set_schema_version(known + 1);
    let started = Instant::now();
    let refused = loop {
        let (status, ready) = probe("/readyz");
        if status == 503 {
            break ready;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "still ready on a database migrated past it: {ready}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(
        refused["status"],
        format!(
            "database migrated past this build (schema {}, this build knows {known})",
            known + 1
        )
    );
    assert_eq!(probe("/healthz").0, 200);
    let _ = spawned.child.kill();
    let _ = spawned.child.wait();
}

on_every_database!(
    a_start_on_a_database_a_newer_build_migrated_is_refused_with_what_to_do,
    d4_readiness_fails_once_a_newer_build_migrated_the_database_under_a_running_replica,
);
