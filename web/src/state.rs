//! The portal's shared state, provided by the shell as context: who is signed in, the open
//! conversation, its turns, the draft, the conversation list and what the server said about
//! itself. Components read it with [`portal`].

use leptos::prelude::*;
use portal_core::TurnStatus;
use portal_core::compaction::compact_pill;
use portal_core::effort::Effort;
use portal_core::skills::CatalogueEntry;
use portal_core::usage::ConversationUsage;

use crate::api;
use crate::chip::Chip;
use crate::conversation_list::ConversationList;
use crate::scroll::Follow;
use crate::stream::Following;
use crate::turn_view::TurnView;
use crate::versions::Versions;

/// Whether someone is signed in, as the server last said.
#[derive(Debug, Clone, PartialEq)]
pub enum SignIn {
    /// The page is asking the server.
    Asking,
    /// The server could not say; the page offers to ask again.
    Unknown(String),
    /// Nobody is signed in. `ended` names who was, when their session ended under them (it
    /// expired or was revoked), so the page can say so and offer to sign them in again.
    Needed {
        ended: Option<api::Person>,
    },
    SignedIn(api::Person),
}

/// Everything more than one component reads or changes.
#[derive(Debug, Clone, Copy)]
pub struct Portal {
    pub sign_in: RwSignal<SignIn>,
    /// The open conversation's id; `None` until the first message opens one.
    pub conversation: RwSignal<Option<String>>,
    /// Whether the conversation the address names does not exist for this person.
    pub missing: RwSignal<bool>,
    /// Counts the conversations shown in this tab, so an answer that arrives after the person
    /// moved on to another one is dropped.
    pub shown: StoredValue<u32>,
    /// The open conversation's running turn, while the page follows its events.
    pub following: StoredValue<Option<Following>, LocalStorage>,
    pub turns: RwSignal<Vec<TurnView>>,
    pub draft: RwSignal<String>,
    /// The effort the next message asks for; `None` keeps the agent's (rule E1). It is for
    /// that message alone: sending it, or opening a conversation, sets `None` again.
    pub effort: RwSignal<Option<Effort>>,
    /// The agent a new conversation opens with (`None`: the first), or the one a stored
    /// conversation talks to.
    pub agent: RwSignal<Option<String>>,
    pub attachments: RwSignal<Vec<Chip>>,
    /// Whether a message is on its way to the server, so it is not sent twice.
    pub sending: RwSignal<bool>,
    /// What went wrong last, in words for the person.
    pub problem: RwSignal<Option<String>>,
    /// When the followed reply's stream dropped (a time of day), while the browser reconnects.
    pub connection_lost: RwSignal<Option<String>>,
    /// The conversation's context in use, in tokens, for the meter.
    pub in_use: RwSignal<Option<u64>>,
    /// What the conversation's turns spent, for the header's total and each reply's.
    pub usage: RwSignal<Option<ConversationUsage>>,
    pub agents: Signal<Vec<api::Agent>>,
    pub skills: Signal<Vec<CatalogueEntry>>,
    pub list: ConversationList,
    /// Whether the conversation list is open as a drawer, on a narrow screen.
    pub drawer: RwSignal<bool>,
    /// The newest divider, as (turn, block place): what is above it is dimmed until hovered (R12).
    pub newest_divider: Memo<Option<(u32, usize)>>,
    /// Whether the page follows the conversation's end.
    pub follow: Follow,
    /// Which turns are versions of one message, and the one of each looked at.
    pub versions: Versions,
    /// A message of the person's in the composer to be edited, until it is sent or the edit is
    /// cancelled.
    pub editing: RwSignal<Option<Editing>>,
    /// Whether the page shows a shared conversation (web/src/shared_page.rs): its turns are read,
    /// never edited, answered again or inspected.
    pub read_only: bool,
}

/// A message taken into the composer to be edited (web/src/editing.rs), and what the composer
/// held before, given back when the edit is cancelled or sent.
#[derive(Debug, Clone)]
pub struct Editing {
    /// The latest turn, whose message the edit answers again: sent, it is a version of it.
    /// `None` for an earlier message, sent as a new one.
    pub again: Option<u32>,
    pub draft: String,
    pub attachments: Vec<Chip>,
    pub effort: Option<Effort>,
}

/// The shared state the shell provided.
pub fn portal() -> Portal {
    expect_context::<Portal>()
}

impl Portal {
    /// Fresh state, with the server's answers read through `agents` and `skills`; `read_only` for
    /// a shared conversation's page.
    pub fn new(
        sign_in: RwSignal<SignIn>,
        agents: Signal<Vec<api::Agent>>,
        skills: Signal<Vec<CatalogueEntry>>,
        read_only: bool,
    ) -> Self {
        let turns = RwSignal::new(Vec::<TurnView>::new());
        Portal {
            sign_in,
            conversation: RwSignal::new(None),
            missing: RwSignal::new(false),
            shown: StoredValue::new(0),
            following: StoredValue::new_local(None),
            turns,
            draft: RwSignal::new(String::new()),
            effort: RwSignal::new(None),
            agent: RwSignal::new(None),
            attachments: RwSignal::new(Vec::new()),
            sending: RwSignal::new(false),
            problem: RwSignal::new(None),
            connection_lost: RwSignal::new(None),
            in_use: RwSignal::new(None),
            usage: RwSignal::new(None),
            agents,
            skills,
            list: ConversationList::default(),
            drawer: RwSignal::new(false),
            newest_divider: Memo::new(move |_| {
                turns
                    .get()
                    .iter()
                    .rev()
                    .find_map(|t| t.state.with(|s| s.newest_divider()).map(|at| (t.index, at)))
            }),
            follow: Follow::new(),
            versions: Versions::new(turns),
            editing: RwSignal::new(None),
            read_only,
        }
    }

    /// Who is signed in, if anyone.
    pub fn person(&self) -> Option<api::Person> {
        match self.sign_in.get_untracked() {
            SignIn::SignedIn(person) => Some(person),
            _ => None,
        }
    }

    /// Says what went wrong; a session that ended brings the person back to the sign-in page,
    /// with the draft and the open conversation kept for when they are back.
    pub fn report(&self, error: api::Error) {
        if error.signed_out() {
            self.ended();
        } else {
            self.problem.set(Some(error.message));
        }
    }

    /// The session ended under the person: the page stops following the conversation and asks
    /// them to sign in again.
    pub fn ended(&self) {
        self.following.set_value(None);
        let ended = self.person();
        if ended.is_some() {
            self.sign_in.set(SignIn::Needed { ended });
        }
    }

    /// Whether the page still shows what it showed when `shown` was read.
    pub fn still_shows(&self, shown: u32) -> bool {
        self.shown.get_value() == shown
    }

    /// The status of the conversation's latest turn.
    pub fn latest_status(&self) -> Option<TurnStatus> {
        self.turns.read().last().map(|t| t.state.with(|s| s.status))
    }

    /// Whether the latest turn is running or paused, so no message can be sent.
    pub fn running(&self) -> bool {
        self.latest_status().is_some_and(TurnStatus::is_open)
    }

    /// The latest turn, until its reply has settled on screen: running, paused, or ended with
    /// its last words still playing out.
    pub fn unsettled_turn(&self) -> Option<TurnView> {
        self.turns
            .read_untracked()
            .last()
            .copied()
            .filter(|t| untrack(|| !t.settled()))
    }

    /// Whether `turn` is the conversation's latest.
    pub fn is_latest(&self, turn: &TurnView) -> bool {
        self.latest_turn() == Some(turn.index)
    }

    /// The number of the conversation's latest turn, if it has one.
    pub fn latest_turn(&self) -> Option<u32> {
        self.turns.with(|t| t.last().map(|l| l.index))
    }

    /// `turn`'s number when a message can answer its message again: the latest turn, a chat
    /// turn (`/compact` turns have no versions).
    pub fn answerable_again(&self, turn: &TurnView) -> Option<u32> {
        let chat = turn
            .state
            .with_untracked(|s| compact_pill(&s.user_text).is_none());
        (chat && self.is_latest(turn)).then_some(turn.index)
    }

    /// The agent as the header shows it: the chosen or stored one, else the organisation's first.
    pub fn shown_agent(&self) -> Option<api::Agent> {
        let agents = self.agents.get();
        match self.agent.get() {
            Some(id) => agents.into_iter().find(|a| a.id == id),
            None => agents.into_iter().next(),
        }
    }
}
