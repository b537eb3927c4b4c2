//! The turn loop: runs each turn on the [`Storage`] trait, writing blocks as they stream and
//! publishing them as numbered events.
//!
//! Before every model call the prompt is rebuilt with core from the stored transcript (memory
//! included, rule M1). Tools run through the [`ToolRegistry`]. A call that needs approval, or
//! that asks the user a question, pauses the turn until the user answers through the API
//! ([`Turns::decide`], [`Turns::answer`]); a running or paused turn can be cancelled
//! ([`Turns::cancel`]) and is recorded cut off. A turn that ends is recorded completed, failed or
//! cut off.

mod coalesce;
mod live;
mod run;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use portal_core::effort::Effort;
use portal_core::prompt::PromptConfig;
use portal_core::skills::{CatalogueEntry, Skill};
use portal_core::stream::TurnEvent;
use portal_core::turn_run::Start;
use portal_core::usage::Price;
use portal_core::{Turn, TurnStatus};

use crate::lifecycle::Lifecycle;
use crate::replicas::Replica;
use crate::turn_log::{StreamLimits, TurnLog};
use portal_attachments::ModelPictures;
use portal_model::Model;
use portal_store::{
    AsyncStorage, ConversationId, NewTurn, PausedClaim, Storage, StorageError, TurnRef,
};
use portal_tools::ToolRegistry;
use tokio_util::task::TaskTracker;

use live::LiveTurns;

/// What a turn is run with: whose it is, the agent's instructions, model and tools, the skills and
/// the effort the turn recorded. The host builds one when the turn opens and again when it resumes
/// (rules E2, S4: the recorded effort and skill ids, visibility re-checked by the host).
#[derive(Debug, Clone)]
pub struct TurnSetup {
    pub org_id: String,
    /// The conversation's owner, whose attachments the pictures its tools answer with become.
    pub user_id: String,
    /// Layer 2 of the prompt.
    pub instructions: String,
    /// Layer 3: the instructions of the conversation's project, empty outside a project.
    pub project_instructions: String,
    pub model: Arc<dyn Model>,
    /// The model's price, which every usage row of the turn is priced at (rule C11).
    pub price: Option<Price>,
    /// Layer 4: the skills the message selected.
    pub selected_skills: Vec<Skill>,
    /// Layer 5: the agent's other skills.
    pub catalogue: Vec<CatalogueEntry>,
    pub effort: Effort,
    /// The tools the agent is offered ([`ToolRegistry::for_agent`]); a call to any other is
    /// answered as unknown.
    pub tools: ToolRegistry,
}

/// Why the turn loop refused a request. Each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error(
        "turn {turn} is running, not waiting for an answer or a decision: it was already answered or decided, or has not paused yet; read its events to see what it asks"
    )]
    Running { turn: u32 },
    #[error(
        "turn {turn} has ended ({status}) and takes no answer or decision; send a new message instead"
    )]
    NotPaused { turn: u32, status: TurnStatus },
    #[error(
        "turn {turn} is waiting for a decision on call `{call_id}`, not for an answer; approve or decline it"
    )]
    AwaitsDecision { turn: u32, call_id: String },
    #[error(
        "turn {turn} is waiting for an answer to its question, not for a decision; answer it with text"
    )]
    AwaitsAnswer { turn: u32 },
    #[error("turn {turn} asks for no approval of call `{call_id}`; decide on a call it names")]
    NoSuchApproval { turn: u32, call_id: String },
    #[error(
        "call `{call_id}` of turn {turn} was already decided; read the conversation to see what followed"
    )]
    AlreadyDecided { turn: u32, call_id: String },
    #[error("turn {turn} has ended ({status}); there is nothing to cancel")]
    Ended { turn: u32, status: TurnStatus },
    #[error("the answer is empty; write something before sending")]
    EmptyAnswer,
    #[error(
        "this server is stopping for a restart and starts no more turns; send it again in a moment, and another server (or this one, restarted) will take it"
    )]
    Stopping,
}

/// Runs turns: opens them, streams them, pauses, resumes and cancels them.
#[derive(Debug)]
pub struct Turns {
    storage: AsyncStorage,
    tools: ToolRegistry,
    prompt: PromptConfig,
    live: LiveTurns,
    streams: StreamLimits,
    pictures: ModelPictures,
    /// This server as a replica, when it shares its database with others.
    replica: Option<Arc<Replica>>,
    /// The runs of this process.
    runs: TaskTracker,
    /// Set when the server starts stopping: no run starts after.
    stopping: AtomicBool,
    /// The server's phase, which ends event streams when it closes.
    lifecycle: Lifecycle,
}

/// How the runs of a stopping server ended ([`Turns::stop`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped {
    /// Runs still going when the server began to stop.
    pub running: usize,
    /// Of those, the ones still running at the grace's end, recorded cut off.
    pub cut_off: usize,
}

/// How long runs cut off at the grace's end have to record it.
const CUT_OFF_WRITES: Duration = Duration::from_secs(10);

/// This server as one replica of several: itself, and the cancels others ask of it.
pub type ReplicaRole = (Arc<Replica>, tokio::sync::mpsc::UnboundedReceiver<TurnRef>);

impl Turns {
    /// Turns on `storage`; with `replica`, as one of several servers on one database, whose
    /// logs are published and followed through it (and no log lingers here once its turn stops:
    /// a later reader follows the published one, which another replica may continue).
    pub fn new(
        storage: Arc<dyn Storage>,
        tools: ToolRegistry,
        streams: StreamLimits,
        pictures: ModelPictures,
        lifecycle: Lifecycle,
        replica: Option<ReplicaRole>,
    ) -> Arc<Self> {
        let linger = if replica.is_some() {
            std::time::Duration::ZERO
        } else {
            streams.linger
        };
        let (replica, cancels) = replica.unzip();
        let turns = Arc::new(Turns {
            storage: AsyncStorage::new(storage),
            tools,
            prompt: PromptConfig::default(),
            live: LiveTurns::new(linger),
            streams,
            pictures,
            replica,
            runs: TaskTracker::new(),
            stopping: AtomicBool::new(false),
            lifecycle,
        });
        if let Some(mut cancels) = cancels {
            let live = turns.live.clone();
            tokio::spawn(async move {
                while let Some(at) = cancels.recv().await {
                    live.cancel(&at);
                }
            });
        }
        turns
    }

    /// How pictures are encoded for model calls; its decode places are the uploads' too.
    pub fn pictures(&self) -> &ModelPictures {
        &self.pictures
    }

    /// How event streams are kept.
    pub fn streams(&self) -> &StreamLimits {
        &self.streams
    }

    /// The server's phase: event streams end, asking their readers to reconnect, once it
    /// closes.
    pub fn lifecycle(&self) -> &Lifecycle {
        &self.lifecycle
    }

    /// The storage turns are written to.
    pub fn storage(&self) -> &AsyncStorage {
        &self.storage
    }

    /// Every tool this server runs; a turn runs its agent's ([`TurnSetup::tools`]).
    pub fn tools(&self) -> &ToolRegistry {
        &self.tools
    }

    /// Stops the server's runs (rule D1): no run starts from now on ([`TurnError::Stopping`]);
    /// those running get `grace` to end, then are cut off with the reason in words (rule D2),
    /// and on a replica every change of their logs is published before this returns.
    pub async fn stop(&self, grace: Duration) -> Stopped {
        self.stopping.store(true, Ordering::SeqCst);
        self.runs.close();
        let running = self.runs.len();
        let cut_off = if tokio::time::timeout(grace, self.runs.wait()).await.is_err() {
            let cut_off = self.live.cut_off_all();
            // A run cut off records its end in a few writes; one that cannot is left to the
            // next start's recovery or another replica's sweep.
            if tokio::time::timeout(CUT_OFF_WRITES, self.runs.wait())
                .await
                .is_err()
            {
                tracing::warn!(
                    "{} turn(s) did not record their end within {CUT_OFF_WRITES:?}; they will be cut off at the next start or by another replica",
                    self.runs.len()
                );
            }
            cut_off
        } else {
            0
        };
        if let Some(replica) = &self.replica {
            replica.flush().await;
        }
        Stopped { running, cut_off }
    }

    /// Refuses to start a run once the server is stopping.
    fn accepting(&self) -> Result<(), TurnError> {
        if self.stopping.load(Ordering::SeqCst) {
            return Err(TurnError::Stopping);
        }
        Ok(())
    }

    /// Records `turn` (already checked by the host, e.g. with `portal_core::new_turn`) and
    /// starts running it. Returns its index.
    pub async fn start(
        self: &Arc<Self>,
        conversation: &ConversationId,
        turn: NewTurn,
        setup: TurnSetup,
    ) -> Result<u32, TurnError> {
        self.accepting()?;
        let index = self.storage.open_turn(conversation, turn).await?;
        let at = TurnRef {
            conversation: conversation.clone(),
            turn: index,
        };
        self.spawn(at, setup, Start::Fresh, None).await?;
        Ok(index)
    }

    /// The event log of turn `turn`: the one this process keeps while the turn runs and for a
    /// while after, else one rebuilt from storage with the same numbering. A replica reads the
    /// log it keeps only while its run writes it, and else follows the published one (see
    /// [`Replica::follow`]), so that a read never misses a run of the turn another replica
    /// resumed.
    pub async fn log(
        &self,
        org_id: &str,
        conversation: &ConversationId,
        turn: u32,
    ) -> Result<Arc<TurnLog>, TurnError> {
        let at = TurnRef {
            conversation: conversation.clone(),
            turn,
        };
        if let Some(log) = self.own_log(&at) {
            return Ok(log);
        }
        let stored = self.stored(org_id, conversation, turn).await?;
        // A run may have started while the turn was read; its log is the one to follow.
        if let Some(log) = self.own_log(&at) {
            return Ok(log);
        }
        if let Some(replica) = &self.replica
            && let Some(log) = replica.follow(&at, stored.status).await?
        {
            return Ok(log);
        }
        Ok(TurnLog::rebuilt(&stored))
    }

    /// The log this process keeps of the turn, to be read: on a replica, only while a run of
    /// this process writes it. A log whose run stopped is this replica's until it is released,
    /// a moment later, and would not learn that another replica resumed the turn.
    fn own_log(&self, at: &TurnRef) -> Option<Arc<TurnLog>> {
        self.live
            .log(at)
            .filter(|log| self.replica.is_none() || log.is_running())
    }

    /// Cancels a running or paused turn: it is recorded cut off (memory replays what it wrote,
    /// rule M10).
    pub async fn cancel(
        &self,
        org_id: &str,
        conversation: &ConversationId,
        turn: u32,
    ) -> Result<(), TurnError> {
        let stored = self.stored(org_id, conversation, turn).await?;
        let at = TurnRef {
            conversation: conversation.clone(),
            turn,
        };
        match stored.status {
            TurnStatus::Running if self.live.cancel(&at) => Ok(()),
            TurnStatus::Running
                if match &self.replica {
                    Some(replica) => replica.ask_to_cancel(&at).await?,
                    None => false,
                } =>
            {
                Ok(())
            }
            TurnStatus::Running | TurnStatus::Paused => {
                if stored.status == TurnStatus::Paused {
                    // Claimed like a resume, so of a cancel and an answer or decision at once
                    // exactly one moves the turn on.
                    self.storage
                        .claim_paused(
                            conversation,
                            turn,
                            stored.messages.len(),
                            PausedClaim::CutOff,
                        )
                        .await?;
                } else {
                    // Running in no task of any live process: record it cut off here.
                    self.storage
                        .set_turn_status(conversation, turn, TurnStatus::CutOff)
                        .await?;
                }
                let log = match &self.replica {
                    Some(replica) => replica.own_log(&at, &stored).await?,
                    None => self.live.log_or_rebuilt(&at, &stored),
                };
                log.push(TurnEvent::TurnEnd {
                    status: TurnStatus::CutOff,
                    reason: None,
                });
                self.live.stopped(&at);
                Ok(())
            }
            ended => Err(TurnError::Ended {
                turn,
                status: ended,
            }),
        }
    }

    /// Records the user's decision on an approval request of a paused turn, once: a second
    /// decision on the same call is refused. Once every request of its last message is decided,
    /// the turn is claimed in storage and resumes, exactly once however many decisions arrive at
    /// once: approved calls run, declined ones are answered as declined.
    pub async fn decide(
        self: &Arc<Self>,
        conversation: &ConversationId,
        turn: u32,
        call_id: &str,
        approve: bool,
        setup: TurnSetup,
    ) -> Result<(), TurnError> {
        self.accepting()?;
        let paused = self.paused(&setup.org_id, conversation, turn).await?;
        let awaiting = paused.awaiting();
        if awaiting.question {
            return Err(TurnError::AwaitsAnswer { turn });
        }
        if !awaiting.approvals.iter().any(|id| id == call_id) {
            return Err(TurnError::NoSuchApproval {
                turn,
                call_id: call_id.to_string(),
            });
        }
        let at = TurnRef {
            conversation: conversation.clone(),
            turn,
        };
        let messages = paused.messages.len();
        let decisions = match &self.replica {
            Some(replica) => replica.decide(&at, messages, call_id, approve).await?,
            None => self.live.decide(&at, messages, call_id, approve),
        }
        .ok_or_else(|| TurnError::AlreadyDecided {
            turn,
            call_id: call_id.to_string(),
        })?;
        if awaiting
            .approvals
            .iter()
            .all(|id| decisions.contains_key(id))
        {
            let _starting = self.live.starting(&at);
            match self
                .storage
                .claim_paused(conversation, turn, messages, PausedClaim::Resume)
                .await
            {
                Ok(()) => {}
                // Replicas that took the last decisions at once both see them all; the one
                // that claimed the turn runs it with this decision among them.
                Err(StorageError::AlreadyResumed { .. }) if self.replica.is_some() => {
                    return Ok(());
                }
                Err(error) => {
                    match &self.replica {
                        Some(replica) => {
                            replica.withdraw_decision(&at, messages, call_id).await?;
                        }
                        None => self.live.withdraw(&at, messages, call_id),
                    }
                    return Err(error.into());
                }
            }
            self.spawn(at, setup, Start::Decided(decisions), Some(&paused))
                .await?;
        }
        Ok(())
    }

    /// Answers a paused turn's clarification question: the turn is claimed in storage, so of
    /// answers sent at once exactly one is taken, and resumes with the answer recorded as the
    /// user's message in the same turn.
    pub async fn answer(
        self: &Arc<Self>,
        conversation: &ConversationId,
        turn: u32,
        text: &str,
        setup: TurnSetup,
    ) -> Result<(), TurnError> {
        if text.trim().is_empty() {
            return Err(TurnError::EmptyAnswer);
        }
        self.accepting()?;
        let paused = self.paused(&setup.org_id, conversation, turn).await?;
        let awaiting = paused.awaiting();
        if !awaiting.question {
            return Err(TurnError::AwaitsDecision {
                turn,
                call_id: awaiting.approvals.first().cloned().unwrap_or_default(),
            });
        }
        let at = TurnRef {
            conversation: conversation.clone(),
            turn,
        };
        let _starting = self.live.starting(&at);
        self.storage
            .claim_paused(
                conversation,
                turn,
                paused.messages.len(),
                PausedClaim::Resume,
            )
            .await?;
        self.spawn(at, setup, Start::Answered(text.to_string()), Some(&paused))
            .await?;
        Ok(())
    }

    /// Runs the turn in a task of its own; `stored` is the turn as stored when it resumes, whose
    /// log is rebuilt when this process keeps none. A replica takes the turn's lease first, and
    /// continues the log the turn published so far.
    async fn spawn(
        self: &Arc<Self>,
        at: TurnRef,
        setup: TurnSetup,
        start: Start,
        stored: Option<&Turn>,
    ) -> Result<(), TurnError> {
        let given = match &self.replica {
            Some(replica) => {
                replica.hold(&at).await?;
                Some(match stored {
                    Some(stored) => replica.own_log(&at, stored).await?,
                    None => replica.fresh_log(&at),
                })
            }
            None => None,
        };
        let (log, cancel) = self.live.running(&at, given, stored);
        self.runs
            .spawn(run::run(Arc::clone(self), at, setup, log, cancel, start));
        Ok(())
    }

    /// Turn `turn` of the conversation as stored, or why there is none (turn 0 included).
    async fn stored(
        &self,
        org_id: &str,
        conversation: &ConversationId,
        turn: u32,
    ) -> Result<Turn, TurnError> {
        let transcript = self.storage.load_transcript(org_id, conversation).await?;
        transcript.turn(turn).cloned().ok_or_else(|| {
            TurnError::Storage(StorageError::TurnNotFound {
                conversation: conversation.clone(),
                turn,
            })
        })
    }

    /// The paused turn `turn`, or why it is not one.
    async fn paused(
        &self,
        org_id: &str,
        conversation: &ConversationId,
        turn: u32,
    ) -> Result<Turn, TurnError> {
        let stored = self.stored(org_id, conversation, turn).await?;
        match stored.status {
            TurnStatus::Paused => Ok(stored),
            TurnStatus::Running => Err(TurnError::Running { turn }),
            status => Err(TurnError::NotPaused { turn, status }),
        }
    }
}
