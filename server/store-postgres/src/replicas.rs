//! What replicas sharing one PostgreSQL database keep in it besides conversations: each running
//! turn's lease, the log of its events as published, and the decisions taken on a paused turn.
//! The server's `replicas` module decides what goes in; here is only how it is kept.

use std::collections::HashMap;

use super::statements::Statements;
use super::{PostgresStorage, place, turn_number};
use portal_store::codec::stopped_note;
use portal_store::rules::Statements as _;
use portal_store::{ConversationId, Result, TurnRef};

/// The channel a replica announces a turn's new log entries on; the payload is
/// `<conversation> <turn>`.
pub const LOG_CHANNEL: &str = "portal_log";

/// One entry of a turn's log, as the replica running the turn published it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogOp {
    pub seq: u64,
    /// The entry, as the server encodes it.
    pub op: String,
}

/// Who holds a running turn's lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseHolder {
    /// The replica holding it; `None` before one took it.
    pub replica: Option<String>,
    /// Whether it is still good.
    pub live: bool,
}

impl PostgresStorage {
    /// Takes the lease of a running turn for `replica`, for `lease_ms`.
    pub fn take_lease(&self, at: &TurnRef, replica: &str, lease_ms: i64) -> Result<()> {
        self.write(|t| {
            t.execute(
                "UPDATE turns SET lease_replica = $3, lease_until = portal_now_ms() + $4
                 WHERE conversation_id = $1 AND turn = $2 AND status = 'running'",
                &[
                    &at.conversation.as_str(),
                    &i64::from(at.turn),
                    &replica,
                    &lease_ms,
                ],
            )?;
            Ok(())
        })
    }

    /// Renews, for `lease_ms` from now, the leases `replica` holds on turns still running.
    pub fn renew_leases(&self, replica: &str, lease_ms: i64) -> Result<u64> {
        self.write(|t| {
            Ok(t.execute(
                "UPDATE turns SET lease_until = portal_now_ms() + $2
                 WHERE lease_replica = $1 AND status = 'running'",
                &[&replica, &lease_ms],
            )?)
        })
    }

    /// Who holds the lease of a running turn; `None` when the turn is not running.
    pub fn lease_holder(&self, at: &TurnRef) -> Result<Option<LeaseHolder>> {
        self.read(|t| {
            Ok(t.query_opt(
                "SELECT lease_replica, COALESCE(lease_until >= portal_now_ms(), false)
                 FROM turns WHERE conversation_id = $1 AND turn = $2 AND status = 'running'",
                &[&at.conversation.as_str(), &i64::from(at.turn)],
            )?
            .map(|row| LeaseHolder {
                replica: row.get(0),
                live: row.get(1),
            }))
        })
    }

    /// Records every running turn whose lease ran out cut off (rule M10: its replica stopped),
    /// with its streamed text folded, appends `end_op` to each one's log and announces it.
    pub fn cut_off_expired(&self, end_op: &str) -> Result<Vec<TurnRef>> {
        self.write(|t| {
            let rows = t.query(
                "UPDATE turns SET status = 'cut_off', changed_at = portal_now_ms()
                 WHERE status = 'running' AND lease_until < portal_now_ms()
                 RETURNING conversation_id, turn",
                &[],
            )?;
            let mut cut_off = Vec::new();
            for row in rows {
                cut_off.push(TurnRef {
                    conversation: ConversationId::new(row.get::<_, String>(0)),
                    turn: turn_number(row.get(1))?,
                });
            }
            cut_off.sort_by(|a, b| (&a.conversation, a.turn).cmp(&(&b.conversation, b.turn)));
            for at in &cut_off {
                Statements(t).fold_chunks(&at.conversation, at.turn)?;
                Statements(t).insert_trace(&at.conversation, at.turn, &stopped_note())?;
                let (conversation, turn) = (at.conversation.as_str(), i64::from(at.turn));
                let logged = t
                    .query_one(
                        "SELECT EXISTS (SELECT 1 FROM turn_log
                                        WHERE conversation_id = $1 AND turn = $2)",
                        &[&conversation, &turn],
                    )?
                    .get::<_, bool>(0);
                if logged {
                    t.execute(
                        "INSERT INTO turn_log (conversation_id, turn, seq, op)
                         SELECT $1, $2, MAX(seq) + 1, $3 FROM turn_log
                         WHERE conversation_id = $1 AND turn = $2",
                        &[&conversation, &turn, &end_op],
                    )?;
                    t.execute(
                        "SELECT pg_notify($1, $2)",
                        &[&LOG_CHANNEL, &format!("{conversation} {turn}")],
                    )?;
                }
            }
            Ok(cut_off)
        })
    }

    /// Appends entries to turns' logs, in one transaction, and announces each turn's on
    /// [`LOG_CHANNEL`]. An entry whose place is taken (its turn was cut off meanwhile by another
    /// replica) is left out.
    pub fn append_log(&self, entries: &[(TurnRef, u64, String)]) -> Result<()> {
        self.write(|t| {
            let mut conversations = Vec::with_capacity(entries.len());
            let mut turns = Vec::with_capacity(entries.len());
            let mut seqs = Vec::with_capacity(entries.len());
            let mut ops = Vec::with_capacity(entries.len());
            for (at, seq, op) in entries {
                conversations.push(at.conversation.as_str());
                turns.push(i64::from(at.turn));
                seqs.push(super::integer("log place", *seq)?);
                ops.push(op.as_str());
            }
            t.execute(
                "INSERT INTO turn_log (conversation_id, turn, seq, op)
                 SELECT * FROM unnest($1::TEXT[], $2::BIGINT[], $3::BIGINT[], $4::TEXT[])
                 ON CONFLICT DO NOTHING",
                &[&conversations, &turns, &seqs, &ops],
            )?;
            let mut announced: Vec<&TurnRef> = entries.iter().map(|(at, _, _)| at).collect();
            announced.sort_by(|a, b| (&a.conversation, a.turn).cmp(&(&b.conversation, b.turn)));
            announced.dedup();
            for at in announced {
                t.execute(
                    "SELECT pg_notify($1, $2)",
                    &[&LOG_CHANNEL, &format!("{} {}", at.conversation, at.turn)],
                )?;
            }
            Ok(())
        })
    }

    /// A turn's log entries from place `from` on, in order.
    pub fn read_log(&self, at: &TurnRef, from: u64) -> Result<Vec<LogOp>> {
        self.read(|t| {
            let rows = t.query(
                "SELECT seq, op FROM turn_log
                 WHERE conversation_id = $1 AND turn = $2 AND seq >= $3 ORDER BY seq",
                &[
                    &at.conversation.as_str(),
                    &i64::from(at.turn),
                    &super::integer("log place", from)?,
                ],
            )?;
            rows.iter()
                .map(|row| {
                    Ok(LogOp {
                        seq: place(row.get(0))? as u64,
                        op: row.get(1),
                    })
                })
                .collect()
        })
    }

    /// Forgets the logs and decisions of turns that ended more than `after_ms` ago: readers of
    /// those are served from the stored turn.
    pub fn forget_ended_logs(&self, after_ms: i64) -> Result<u64> {
        self.write(|t| {
            let mut forgotten = 0;
            for table in ["turn_log", "turn_decisions"] {
                forgotten += t.execute(
                    &format!(
                        "DELETE FROM {table} l USING turns t
                         WHERE t.conversation_id = l.conversation_id AND t.turn = l.turn
                           AND t.status IN ('completed', 'cut_off', 'failed')
                           AND t.changed_at < portal_now_ms() - $1"
                    ),
                    &[&after_ms],
                )?;
            }
            Ok(forgotten)
        })
    }

    /// Records a decision on the pause turn `at` has with `messages` messages and returns every
    /// decision taken on that pause so far, from any replica; `None`, recording nothing, when
    /// the call was decided on it already.
    pub fn decide(
        &self,
        at: &TurnRef,
        messages: usize,
        call_id: &str,
        approve: bool,
    ) -> Result<Option<HashMap<String, bool>>> {
        let key = (
            at.conversation.as_str(),
            i64::from(at.turn),
            super::position("message count", messages)?,
        );
        let inserted = self.write(|t| {
            Ok(t.execute(
                "INSERT INTO turn_decisions (conversation_id, turn, messages, call_id, approve)
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
                &[&key.0, &key.1, &key.2, &call_id, &approve],
            )?)
        })?;
        if inserted == 0 {
            return Ok(None);
        }
        // Read after the decision committed, so of two decisions taken at once on two replicas
        // the later reader sees both.
        self.read(|t| {
            let rows = t.query(
                "SELECT call_id, approve FROM turn_decisions
                 WHERE conversation_id = $1 AND turn = $2 AND messages = $3",
                &[&key.0, &key.1, &key.2],
            )?;
            Ok(Some(rows.iter().map(|r| (r.get(0), r.get(1))).collect()))
        })
    }

    /// Takes back a decision whose turn could not be resumed, so the user can decide again.
    pub fn withdraw_decision(&self, at: &TurnRef, messages: usize, call_id: &str) -> Result<()> {
        self.write(|t| {
            t.execute(
                "DELETE FROM turn_decisions
                 WHERE conversation_id = $1 AND turn = $2 AND messages = $3 AND call_id = $4",
                &[
                    &at.conversation.as_str(),
                    &i64::from(at.turn),
                    &super::position("message count", messages)?,
                    &call_id,
                ],
            )?;
            Ok(())
        })
    }

    /// Announces `payload` to every replica on `channel`.
    pub fn announce(&self, channel: &str, payload: &str) -> Result<()> {
        self.write(|t| {
            t.execute("SELECT pg_notify($1, $2)", &[&channel, &payload])?;
            Ok(())
        })
    }

    /// How a replica's listening connection connects: the pool's settings and TLS.
    pub fn listen_config(
        &self,
    ) -> (
        tokio_postgres::Config,
        tokio_postgres_rustls::MakeRustlsConnect,
    ) {
        (self.target.config.clone(), self.target.tls.clone())
    }
}
