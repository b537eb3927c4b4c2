//! The databases the storage suite runs on: SQLite in a temporary folder, and PostgreSQL in a
//! schema of its own on the server `PORTAL_TEST_POSTGRES` names (`cargo xtask test` starts one).
//! Without that variable the PostgreSQL half is skipped with a note, unless
//! `PORTAL_REQUIRE_POSTGRES` is set, as `cargo xtask test` sets it: then it fails.

#![allow(dead_code)]

use portal_store_postgres::PostgresStorage;

use portal_store_sqlite::SqliteStorage;

use portal_store::Storage;
use tempfile::TempDir;

/// One database, empty when made; [`Database::open`] may be called again to reopen it, as a
/// restarted server would.
pub enum Database {
    Sqlite(TempDir),
    Postgres {
        /// The server's URL, for the harness's own connection.
        server: String,
        /// The URL of this database's schema.
        url: String,
        schema: String,
    },
}

impl Database {
    pub fn sqlite() -> Database {
        Database::Sqlite(TempDir::new().expect("a temporary folder"))
    }

    /// A fresh schema on the test PostgreSQL, or `None` (with a note) when there is none.
    pub fn postgres() -> Option<Database> {
        let Ok(server) = std::env::var("PORTAL_TEST_POSTGRES") else {
            assert!(
                std::env::var_os("PORTAL_REQUIRE_POSTGRES").is_none(),
                "PORTAL_REQUIRE_POSTGRES is set but PORTAL_TEST_POSTGRES is not; run `cargo xtask test`, or `cargo xtask postgres` and export what it prints"
            );
            eprintln!(
                "PORTAL_TEST_POSTGRES is not set: the PostgreSQL half of this test is skipped"
            );
            return None;
        };
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).expect("randomness");
        let schema = format!(
            "test_{}",
            bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
        );
        with_client(&server, |client| {
            client
                .batch_execute(&format!("CREATE SCHEMA {schema}"))
                .expect("the test schema is made")
        });
        let separator = if server.contains('?') { '&' } else { '?' };
        let url = format!("{server}{separator}options=-c%20search_path%3D{schema}");
        Some(Database::Postgres {
            server,
            url,
            schema,
        })
    }

    /// The URL `portal serve --database` takes for this database.
    pub fn url(&self) -> String {
        match self {
            Database::Sqlite(dir) => format!("sqlite://{}", dir.path().display()),
            Database::Postgres { url, .. } => url.clone(),
        }
    }

    /// Which database this is, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Database::Sqlite(_) => "SQLite",
            Database::Postgres { .. } => "PostgreSQL",
        }
    }

    /// Opens the database, migrating it as a server does when it starts.
    pub fn open(&self) -> Box<dyn Storage> {
        match self {
            Database::Sqlite(dir) => {
                Box::new(SqliteStorage::open(dir.path()).expect("the database opens"))
            }
            Database::Postgres { url, .. } => {
                Box::new(PostgresStorage::connect(url).expect("the database opens"))
            }
        }
    }

    /// Runs one statement that answers one integer, straight on the database.
    pub fn count(&self, sql: &str) -> i64 {
        match self {
            Database::Sqlite(dir) => {
                let connection =
                    rusqlite::Connection::open(dir.path().join(portal_store_sqlite::DATABASE_FILE))
                        .expect("the database opens");
                connection
                    .query_row(sql, [], |row| row.get(0))
                    .expect("the count")
            }
            Database::Postgres { server, schema, .. } => with_client(server, |client| {
                client
                    .batch_execute(&format!("SET search_path = {schema}"))
                    .expect("search path");
                client.query_one(sql, &[]).expect("the count").get(0)
            }),
        }
    }

    /// Runs statements that answer nothing, straight on the database.
    pub fn execute(&self, sql: &str) {
        match self {
            Database::Sqlite(dir) => {
                rusqlite::Connection::open(dir.path().join(portal_store_sqlite::DATABASE_FILE))
                    .expect("the database opens")
                    .execute_batch(sql)
                    .expect("the statements run");
            }
            Database::Postgres { server, schema, .. } => with_client(server, |client| {
                client
                    .batch_execute(&format!("SET search_path = {schema}; {sql}"))
                    .expect("the statements run")
            }),
        }
    }

    /// The schema version stored in the database.
    pub fn schema_version(&self) -> i64 {
        match self {
            Database::Sqlite(_) => self.count("PRAGMA user_version"),
            Database::Postgres { .. } => self.count("SELECT version FROM portal_schema"),
        }
    }

    /// Writes a schema version into the database, as a newer build would.
    pub fn set_schema_version(&self, version: u32) {
        match self {
            Database::Sqlite(dir) => {
                rusqlite::Connection::open(dir.path().join(portal_store_sqlite::DATABASE_FILE))
                    .expect("the database opens")
                    .pragma_update(None, "user_version", version)
                    .expect("the version is set");
            }
            Database::Postgres { server, schema, .. } => with_client(server, |client| {
                client
                    .batch_execute(&format!(
                        "UPDATE {schema}.portal_schema SET version = {version}"
                    ))
                    .expect("the version is set")
            }),
        }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        if let Database::Postgres { server, schema, .. } = self {
            let _ = std::thread::scope(|scope| {
                scope
                    .spawn(|| {
                        postgres::Client::connect(server, postgres::NoTls)?
                            .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
                    })
                    .join()
            });
        }
    }
}

/// A lock the test holds on PostgreSQL, on a connection of its own, until dropped (which closes
/// the connection, releasing it).
pub struct HeldLock {
    release: Option<std::sync::mpsc::Sender<()>>,
    holder: Option<std::thread::JoinHandle<()>>,
}

impl Database {
    /// Takes the lock PostgreSQL replicas take to migrate the database: a replica starting
    /// meanwhile waits, as it would behind another that migrates. PostgreSQL only.
    pub fn hold_migration_lock(&self) -> HeldLock {
        self.hold(&format!(
            "SELECT pg_advisory_lock({})",
            portal_store_postgres::MIGRATION_LOCK
        ))
    }

    /// Holds off every write to `table` of this database's schema (an `EXCLUSIVE` lock, which
    /// lets reads go on): a replica's write to it waits, as if it were slow to arrive.
    /// PostgreSQL only.
    pub fn hold_writes(&self, table: &str) -> HeldLock {
        let Database::Postgres { schema, .. } = self else {
            panic!("only PostgreSQL locks a table for the test");
        };
        self.hold(&format!(
            "BEGIN; LOCK TABLE {schema}.{table} IN EXCLUSIVE MODE"
        ))
    }

    /// Runs `statements`, which take a lock, on a connection of the test's own, kept open until
    /// the lock is dropped. Returns once they ran.
    fn hold(&self, statements: &str) -> HeldLock {
        let Database::Postgres { server, .. } = self else {
            panic!("only PostgreSQL has locks for the test to hold");
        };
        let (server, statements) = (server.clone(), statements.to_string());
        let (held, taken) = std::sync::mpsc::channel();
        let (release, released) = std::sync::mpsc::channel::<()>();
        // The synchronous client keeps off the test's async threads.
        let holder = std::thread::spawn(move || {
            let mut client =
                postgres::Client::connect(&server, postgres::NoTls).expect("the test PostgreSQL");
            client
                .batch_execute(&statements)
                .expect("the lock is taken");
            held.send(()).expect("the test waits");
            let _ = released.recv();
        });
        taken.recv().expect("the lock is held");
        HeldLock {
            release: Some(release),
            holder: Some(holder),
        }
    }
}

impl Drop for HeldLock {
    fn drop(&mut self) {
        drop(self.release.take());
        if let Some(holder) = self.holder.take() {
            let _ = holder.join();
        }
    }
}

/// Runs `work` with a connection of the harness's own to the server at `url`. The blocking
/// client runs a runtime of its own, which may not start on an async test's thread, so `work`
/// runs on a thread of its own.
fn with_client<T: Send>(url: &str, work: impl FnOnce(&mut postgres::Client) -> T + Send) -> T {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let mut client = postgres::Client::connect(url, postgres::NoTls)
                    .expect("the test PostgreSQL answers");
                work(&mut client)
            })
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// Makes each named test function (`fn name(db: &Database)`) a test on SQLite (`sqlite::name`)
/// and on PostgreSQL (`postgres::name`).
#[macro_export]
macro_rules! on_every_database {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[test]
                fn $name() {
                    super::$name(&super::databases::Database::sqlite());
                }
            )*
        }
        mod postgres {
            $(
                #[test]
                fn $name() {
                    if let Some(db) = super::databases::Database::postgres() {
                        super::$name(&db);
                    }
                }
            )*
        }
    };
}
