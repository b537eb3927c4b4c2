//! The portal's shared state, provided by the shell as context: the open conversation, its turns,
//! the draft and what the server said about itself. Components read it with [`portal`].

use leptos::prelude::*;
use portal_core::TurnStatus;
use portal_core::effort::Effort;
use portal_core::skills::CatalogueEntry;

use crate::api;
use crate::composer::Chip;
use crate::turn_view::TurnView;

/// Everything more than one component reads or changes.
#[derive(Debug, Clone, Copy)]
pub struct Portal {
    /// The open conversation's id; `None` until the first message opens one.
    pub conversation: RwSignal<Option<String>>,
    pub turns: RwSignal<Vec<TurnView>>,
    pub draft: RwSignal<String>,
    /// The effort the next message asks for; `None` keeps the agent's (rule E1).
    pub effort: RwSignal<Option<Effort>>,
    /// The agent a new conversation opens with (`None`: the first), or the one a stored
    /// conversation talks to.
    pub agent: RwSignal<Option<String>>,
    pub attachments: RwSignal<Vec<Chip>>,
    /// Whether a message is on its way to the server, so it is not sent twice.
    pub sending: RwSignal<bool>,
    /// What went wrong last, in words for the person.
    pub problem: RwSignal<Option<String>>,
    /// The conversation's context in use, in tokens, for the meter.
    pub in_use: RwSignal<Option<u64>>,
    pub info: Signal<Option<api::Info>>,
    pub agents: Signal<Vec<api::Agent>>,
    pub skills: Signal<Vec<CatalogueEntry>>,
    /// The newest divider, as (turn, block place): what is above it is dimmed until hovered (R12).
    pub newest_divider: Memo<Option<(u32, usize)>>,
}

/// The shared state the shell provided.
pub fn portal() -> Portal {
    expect_context::<Portal>()
}

impl Portal {
    /// Fresh state, with the server's answers read through `info`, `agents` and `skills`.
    pub fn new(
        info: Signal<Option<api::Info>>,
        agents: Signal<Vec<api::Agent>>,
        skills: Signal<Vec<CatalogueEntry>>,
    ) -> Self {
        let turns = RwSignal::new(Vec::<TurnView>::new());
        Portal {
            conversation: RwSignal::new(None),
            turns,
            draft: RwSignal::new(String::new()),
            effort: RwSignal::new(None),
            agent: RwSignal::new(None),
            attachments: RwSignal::new(Vec::new()),
            sending: RwSignal::new(false),
            problem: RwSignal::new(None),
            in_use: RwSignal::new(None),
            info,
            agents,
            skills,
            newest_divider: Memo::new(move |_| {
                turns
                    .get()
                    .iter()
                    .rev()
                    .find_map(|t| t.state.with(|s| s.newest_divider()).map(|at| (t.index, at)))
            }),
        }
    }

    /// The status of the conversation's latest turn.
    pub fn latest_status(&self) -> Option<TurnStatus> {
        self.turns.read().last().map(|t| t.state.with(|s| s.status))
    }

    /// Whether the latest turn is running or paused, so no message can be sent.
    pub fn running(&self) -> bool {
        self.latest_status().is_some_and(TurnStatus::is_open)
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
