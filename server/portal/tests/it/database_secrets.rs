//! Secrets and transport to PostgreSQL (docs/deploy.md, "TLS to PostgreSQL" and "The database
//! password"): `portal serve` connects over TLS, checking the server's certificate against the
//! authority `sslrootcert` names and the host name (`sslmode=verify-full`), and refuses at start,
//! saying what to do, a server whose certificate that authority did not sign or is for another
//! name; the password comes from `PORTAL_DATABASE_PASSWORD` or `--database-password-file`, and
//! one in the URL works with a warning.
//!
//! The test PostgreSQL (`cargo xtask postgres`) has TLS on and a role, `portal_tls`, that signs
//! in with a password over TLS only; `PORTAL_TEST_POSTGRES_TLS` is its URL, password,
//! `sslmode=verify-full` and authority file included. Without it the tests are skipped with a
//! note, unless `PORTAL_REQUIRE_POSTGRES` is set: then they fail.

use crate::common;

use std::path::PathBuf;
use std::time::Duration;

use common::{Server, Spawned, Store, spawn_portal_with_env};
use portal_core::{Block, TurnStatus};

/// The TLS role's database: a schema of its own on the test PostgreSQL, dropped at the end.
struct TlsDatabase {
    /// The superuser's URL, for the harness's own connection.
    admin: String,
    /// `localhost:PORT`.
    address: String,
    password: String,
    /// The authority that signed the server's certificate.
    ca: PathBuf,
    schema: String,
    /// Files the test writes (password files, another authority).
    files: tempfile::TempDir,
}

impl TlsDatabase {
    /// A fresh schema owned by `portal_tls`, or `None` (with a note) without the TLS URL.
    fn new() -> Option<TlsDatabase> {
        let (Ok(tls), Ok(admin)) = (
            std::env::var("PORTAL_TEST_POSTGRES_TLS"),
            std::env::var("PORTAL_TEST_POSTGRES"),
        ) else {
            assert!(
                std::env::var_os("PORTAL_REQUIRE_POSTGRES").is_none(),
                "PORTAL_REQUIRE_POSTGRES is set but PORTAL_TEST_POSTGRES_TLS or PORTAL_TEST_POSTGRES is not; run `cargo xtask test`, or `cargo xtask postgres` and export what it prints"
            );
            eprintln!("PORTAL_TEST_POSTGRES_TLS is not set: this test is skipped");
            return None;
        };
        // postgres://portal_tls:PASSWORD@localhost:PORT/portal_test?sslmode=verify-full&sslrootcert=CA
        let rest = tls
            .strip_prefix("postgres://portal_tls:")
            .expect("the TLS role's URL");
        let (password, rest) = rest.split_once('@').expect("a password");
        let (address, rest) = rest.split_once('/').expect("a database");
        let ca = rest
            .split_once("sslrootcert=")
            .expect("an authority")
            .1
            .split('&')
            .next()
            .expect("its path");
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).expect("randomness");
        let schema = format!(
            "tls_{}",
            bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
        );
        admin_sql(
            &admin,
            &format!("CREATE SCHEMA {schema} AUTHORIZATION portal_tls"),
        );
        Some(TlsDatabase {
            admin,
            address: address.to_string(),
            password: password.to_string(),
            ca: PathBuf::from(ca),
            schema,
            files: tempfile::tempdir().expect("a folder"),
        })
    }

    /// The URL of the TLS role on host `host` (the real one is `localhost`), without its
    /// password, with `tls` as its TLS settings.
    fn url(&self, host: &str, tls: &str) -> String {
        let port = self.address.rsplit_once(':').expect("a port").1;
        format!(
            "postgres://portal_tls@{host}:{port}/portal_test?{tls}&options=-c%20search_path%3D{}",
            self.schema
        )
    }

    /// [`TlsDatabase::url`] on `localhost` with `sslmode=verify-full` and the right authority.
    fn verified_url(&self) -> String {
        self.url(
            "localhost",
            &format!("sslmode=verify-full&sslrootcert={}", self.ca.display()),
        )
    }

    /// A file holding `text` with mode `mode`.
    fn file(&self, name: &str, text: &str, mode: u32) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = self.files.path().join(name);
        std::fs::write(&path, text).expect("written");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).expect("mode");
        path
    }

    /// How many of the TLS role's connections are encrypted, and how many are not; and whether
    /// one of them listens (a replica's listening connection).
    fn connections(&self) -> (i64, i64, bool) {
        let row = admin_query(
            &self.admin,
            "SELECT count(*) FILTER (WHERE s.ssl), count(*) FILTER (WHERE NOT s.ssl),
                    bool_or(a.query LIKE 'LISTEN%' AND s.ssl)
             FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
             WHERE a.usename = 'portal_tls'",
        );
        (row.0, row.1, row.2.unwrap_or(false))
    }
}

impl Drop for TlsDatabase {
    fn drop(&mut self) {
        admin_sql(
            &self.admin,
            &format!("DROP SCHEMA IF EXISTS {} CASCADE", self.schema),
        );
    }
}

/// Runs `sql` as the superuser, on a thread of its own (the blocking client may not run on an
/// async test's thread).
fn admin_sql(admin: &str, sql: &str) {
    let (admin, sql) = (admin.to_string(), sql.to_string());
    std::thread::spawn(move || {
        postgres::Client::connect(&admin, postgres::NoTls)
            .expect("the test PostgreSQL answers")
            .batch_execute(&sql)
            .expect("the statement runs")
    })
    .join()
    .expect("no panic");
}

fn admin_query(admin: &str, sql: &str) -> (i64, i64, Option<bool>) {
    let (admin, sql) = (admin.to_string(), sql.to_string());
    std::thread::spawn(move || {
        let row = postgres::Client::connect(&admin, postgres::NoTls)
            .expect("the test PostgreSQL answers")
            .query_one(&sql, &[])
            .expect("the query runs");
        (row.get(0), row.get(1), row.get(2))
    })
    .join()
    .expect("no panic")
}

/// `portal serve --database url` with `env` and `more` flags: serving, or what it wrote when
/// it stopped.
fn start(url: &str, more: &[&str], env: &[(&str, &str)]) -> Result<Spawned, String> {
    spawn_portal_with_env(Store::Database(url), "0", more, env)
}

fn refused(url: &str, more: &[&str], env: &[(&str, &str)]) -> String {
    match start(url, more, env) {
        Ok(mut spawned) => {
            let _ = spawned.child.kill();
            let _ = spawned.child.wait();
            panic!("portal serve started on {url}:\n{}", spawned.output.text());
        }
        Err(output) => output,
    }
}

/// What a start with verify-full, `authority` as its sslrootcert and the right password says.
fn refused_verifying_with(db: &TlsDatabase, authority: &std::path::Path) -> String {
    let tls = format!("sslmode=verify-full&sslrootcert={}", authority.display());
    refused(
        &db.url("localhost", &tls),
        &[],
        &[("PORTAL_DATABASE_PASSWORD", &db.password)],
    )
}

/// Stores a conversation through `spawned` and reads it back: the demo's answer to "hello".
async fn stores_and_reads_a_conversation(spawned: &Spawned) {
    let server = Server::at(spawned.base.clone());
    let id = server.conversation().await;
    let turn = server.send(&id, "hello over TLS").await;
    let events = server.events(&id, turn, None).await;
    assert!(!events.is_empty());
    let transcript = server.transcript(&id).await;
    let stored = transcript.turn(turn).expect("the turn is stored");
    assert_eq!(stored.status, TurnStatus::Completed);
    assert_eq!(
        stored.messages[0].blocks,
        vec![Block::text("hello over TLS")]
    );
    assert!(stored.messages.len() > 1, "the demo answered");
}

fn stop(mut spawned: Spawned) {
    let _ = spawned.child.kill();
    let _ = spawned.child.wait();
}

// The role can connect only over TLS, so a replica that serves connected its pool with TLS; the
// database also shows every one of its connections encrypted, the listening one included.
#[tokio::test]
async fn with_verify_full_and_the_servers_authority_a_replica_stores_and_reads_over_tls() {
    let Some(db) = TlsDatabase::new() else {
        return;
    };
    let spawned = start(
        &db.verified_url(),
        &[],
        &[("PORTAL_DATABASE_PASSWORD", &db.password)],
    )
    .unwrap_or_else(|output| panic!("portal serve did not start over TLS: {output}"));
    stores_and_reads_a_conversation(&spawned).await;
    let (encrypted, plain, listening) = common::until(
        "the listening connection",
        Duration::from_secs(30),
        || async {
            let counts = db.connections();
            counts.2.then_some(counts)
        },
    )
    .await
    .0;
    assert!(encrypted >= 2, "{encrypted} encrypted connections");
    assert_eq!(plain, 0, "no connection without TLS");
    assert!(listening);
    let output = spawned.output.text();
    assert!(!output.contains("Warning"), "{output}");
    assert!(!output.contains(&db.password), "{output}");
    stop(spawned);
}

#[test]
fn a_server_whose_certificate_another_authority_signed_is_refused_at_start_naming_the_file() {
    let Some(db) = TlsDatabase::new() else {
        return;
    };
    let stranger =
        rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).expect("a certificate");
    let other_ca = db.file("other-ca.pem", &stranger.cert.pem(), 0o644);
    let output = refused_verifying_with(&db, &other_ca);
    assert!(
        output.contains(&format!(
            "presented a certificate that the certificate authority in {} did not sign",
            other_ca.display()
        )),
        "{output}"
    );
    assert!(
        output.contains("give sslrootcert the authority that signed the server's certificate"),
        "{output}"
    );
    assert_no_secret(&output, &db);

    let missing = db.files.path().join("missing.pem");
    let output = refused_verifying_with(&db, &missing);
    assert!(
        output.contains(&format!(
            "cannot use {} as the certificate authority of the PostgreSQL server (sslrootcert)",
            missing.display()
        )),
        "{output}"
    );
}

// The certificate is for localhost and 127.0.0.1; `hostaddr` reaches the server while the URL
// names another host, as a wrong DNS name or a server in its place would. verify-ca checks only
// the authority and accepts it.
#[tokio::test]
async fn a_certificate_for_another_host_is_refused_by_verify_full_naming_the_host_and_passes_verify_ca()
 {
    let Some(db) = TlsDatabase::new() else {
        return;
    };
    let elsewhere = |mode: &str| {
        db.url(
            "db.invalid",
            &format!(
                "sslmode={mode}&sslrootcert={}&hostaddr=127.0.0.1",
                db.ca.display()
            ),
        )
    };
    let env = [("PORTAL_DATABASE_PASSWORD", db.password.as_str())];
    let output = refused(&elsewhere("verify-full"), &[], &env);
    assert!(
        output.contains(
            "the PostgreSQL server's certificate is not for db.invalid, the host --database connects to"
        ),
        "{output}"
    );
    assert!(
        output.contains("connect by a name the certificate holds"),
        "{output}"
    );
    assert_no_secret(&output, &db);

    let spawned = start(&elsewhere("verify-ca"), &[], &env)
        .unwrap_or_else(|output| panic!("verify-ca did not accept the authority: {output}"));
    stores_and_reads_a_conversation(&spawned).await;
    stop(spawned);
}

#[test]
fn an_unencrypted_connection_to_a_server_taking_only_tls_is_refused_saying_what_to_add() {
    let Some(db) = TlsDatabase::new() else {
        return;
    };
    for tls in ["sslmode=disable", "application_name=x"] {
        let output = refused(
            &db.url("localhost", tls),
            &[],
            &[("PORTAL_DATABASE_PASSWORD", &db.password)],
        );
        assert!(
            output.contains("refused an unencrypted connection"),
            "{tls}: {output}"
        );
        assert!(
            output.contains("add sslmode=verify-full&sslrootcert=CA.pem to --database"),
            "{output}"
        );
    }
}

#[tokio::test]
async fn the_password_from_a_file_is_used_and_a_wrong_one_is_refused_naming_the_user() {
    let Some(db) = TlsDatabase::new() else {
        return;
    };
    let file = db.file("password", &format!("{}\n", db.password), 0o600);
    let file_flag = file.to_str().expect("a path");
    let spawned = start(
        &db.verified_url(),
        &["--database-password-file", file_flag],
        &[],
    )
    .unwrap_or_else(|output| panic!("the password file was not used: {output}"));
    stores_and_reads_a_conversation(&spawned).await;
    assert!(
        !spawned.output.text().contains("Warning"),
        "{}",
        spawned.output.text()
    );
    stop(spawned);

    let wrong = db.file("wrong", "not the password\n", 0o600);
    let output = refused(
        &db.verified_url(),
        &["--database-password-file", wrong.to_str().expect("a path")],
        &[],
    );
    assert!(
        output.contains("refused the password of user `portal_tls`"),
        "{output}"
    );
    let output = refused(
        &db.verified_url(),
        &[],
        &[("PORTAL_DATABASE_PASSWORD", "not the password")],
    );
    assert!(
        output.contains("refused the password of user `portal_tls`"),
        "{output}"
    );
}

#[test]
fn a_password_file_others_may_read_starts_with_a_warning_and_two_passwords_are_refused() {
    let Some(db) = TlsDatabase::new() else {
        return;
    };
    let file = db.file("shared", &db.password, 0o644);
    let file_flag = file.to_str().expect("a path");
    let spawned = start(
        &db.verified_url(),
        &["--database-password-file", file_flag],
        &[],
    )
    .unwrap_or_else(|output| panic!("the password file was not used: {output}"));
    let output = spawned.output.text();
    assert!(
        output.contains(&format!(
            "Warning: the database password file {} may be read by users other than its owner (mode 0644); make it its owner's alone: chmod 600",
            file.display()
        )),
        "{output}"
    );
    stop(spawned);

    let output = refused(
        &db.verified_url(),
        &["--database-password-file", file_flag],
        &[("PORTAL_DATABASE_PASSWORD", &db.password)],
    );
    assert!(
        output.contains("the database password is given twice, in PORTAL_DATABASE_PASSWORD and in --database-password-file; give it one way"),
        "{output}"
    );
    assert_no_secret(&output, &db);
}

#[test]
fn a_password_in_the_url_still_works_with_a_warning_that_ps_shows_it() {
    let Some(db) = TlsDatabase::new() else {
        return;
    };
    let url = db
        .verified_url()
        .replacen("portal_tls@", &format!("portal_tls:{}@", db.password), 1);
    let spawned =
        start(&url, &[], &[]).unwrap_or_else(|output| panic!("the URL's password: {output}"));
    let output = spawned.output.text();
    assert!(
        output.contains("Warning: the --database URL holds the database password, which every user of this machine can read (`ps`); give it in PORTAL_DATABASE_PASSWORD or in a file named by --database-password-file instead"),
        "{output}"
    );
    assert_no_secret(&output, &db);
    stop(spawned);
}

/// Fails the test if `output` shows the password.
fn assert_no_secret(output: &str, db: &TlsDatabase) {
    assert!(
        !output.contains(&db.password),
        "the password was written: {output}"
    );
}
