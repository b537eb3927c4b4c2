//! The pool's connections, each keeping the statements it prepared, and [`Tx`], a transaction
//! on one that prepares each statement once per connection: a query then costs one round trip,
//! not two (prepare, then run).

use std::collections::HashMap;

use postgres::types::ToSql;
use postgres::{Client, CopyInWriter, Row, Statement, Transaction};
use tokio_postgres_rustls::MakeRustlsConnect;

/// A connection with the statements it prepared, by their SQL.
pub(super) struct Connection {
    client: Client,
    statements: HashMap<String, Statement>,
}

/// Makes and checks the pool's connections.
pub(super) struct Manager {
    pub config: postgres::Config,
    /// Each connection's TLS, as the URL's `sslmode` asks (`target.rs`).
    pub tls: MakeRustlsConnect,
}

impl std::fmt::Debug for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Manager").finish_non_exhaustive()
    }
}

impl r2d2::ManageConnection for Manager {
    type Connection = Connection;
    type Error = postgres::Error;

    fn connect(&self) -> Result<Connection, postgres::Error> {
        Ok(Connection {
            client: self.config.connect(self.tls.clone())?,
            statements: HashMap::new(),
        })
    }

    fn is_valid(&self, connection: &mut Connection) -> Result<(), postgres::Error> {
        connection.client.simple_query("").map(|_| ())
    }

    fn has_broken(&self, connection: &mut Connection) -> bool {
        connection.client.is_closed()
    }
}

impl Connection {
    /// Starts a transaction, read-only with one snapshot when `read_only`.
    pub fn transaction(&mut self, read_only: bool) -> Result<Tx<'_>, postgres::Error> {
        let transaction = if read_only {
            self.client
                .build_transaction()
                .isolation_level(postgres::IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()?
        } else {
            self.client.transaction()?
        };
        Ok(Tx {
            transaction,
            statements: &mut self.statements,
        })
    }

    /// Runs one statement in a transaction of its own.
    pub fn execute(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, postgres::Error> {
        let statement = prepared(&mut self.statements, sql, |sql| self.client.prepare(sql))?;
        self.client.execute(&statement, params)
    }
}

/// A transaction whose statements are prepared once per connection.
pub(super) struct Tx<'c> {
    transaction: Transaction<'c>,
    statements: &'c mut HashMap<String, Statement>,
}

impl Tx<'_> {
    pub fn commit(self) -> Result<(), postgres::Error> {
        self.transaction.commit()
    }

    pub fn execute(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, postgres::Error> {
        let statement = self.statement(sql)?;
        self.transaction.execute(&statement, params)
    }

    pub fn query(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, postgres::Error> {
        let statement = self.statement(sql)?;
        self.transaction.query(&statement, params)
    }

    pub fn query_opt(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, postgres::Error> {
        let statement = self.statement(sql)?;
        self.transaction.query_opt(&statement, params)
    }

    pub fn query_one(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Row, postgres::Error> {
        let statement = self.statement(sql)?;
        self.transaction.query_one(&statement, params)
    }

    /// Starts `COPY … FROM STDIN`: what is written to the writer goes to the server in pieces,
    /// and its `finish` ends the copy.
    pub fn copy_in(&mut self, sql: &str) -> Result<CopyInWriter<'_>, postgres::Error> {
        self.transaction.copy_in(sql)
    }

    /// Runs statements without parameters, unprepared (migrations).
    pub fn batch_execute(&mut self, sql: &str) -> Result<(), postgres::Error> {
        self.transaction.batch_execute(sql)
    }

    fn statement(&mut self, sql: &str) -> Result<Statement, postgres::Error> {
        let transaction = &mut self.transaction;
        prepared(self.statements, sql, |sql| transaction.prepare(sql))
    }
}

/// The statement prepared for `sql` on this connection, prepared now when it is new.
fn prepared(
    statements: &mut HashMap<String, Statement>,
    sql: &str,
    prepare: impl FnOnce(&str) -> Result<Statement, postgres::Error>,
) -> Result<Statement, postgres::Error> {
    if let Some(statement) = statements.get(sql) {
        return Ok(statement.clone());
    }
    let statement = prepare(sql)?;
    statements.insert(sql.to_string(), statement.clone());
    Ok(statement)
}
