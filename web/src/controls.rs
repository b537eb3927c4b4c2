//! The buttons of an open turn: stop it while it runs; approve, decline or answer while it is
//! paused, sending exactly what core says the turn waits on. Each resumes following the turn
//! after the last event read.

use leptos::prelude::*;
use leptos::task::spawn_local;
use portal_core::TurnStatus;

use crate::state::portal;
use crate::turn_view::TurnView;
use crate::{api, session};

/// What the person did to an open turn.
#[derive(Debug, Clone, PartialEq)]
enum Action {
    Cancel,
    /// Approve or decline these calls, the ones the turn waits on.
    Decide(Vec<String>, bool),
    Answer(String),
}

#[component]
pub fn TurnControls(turn: TurnView) -> impl IntoView {
    let portal = portal();
    let reply = RwSignal::new(String::new());
    let act = move |action: Action| {
        let Some(id) = portal.conversation.get_untracked() else {
            return;
        };
        let index = turn.index;
        let shown = portal.shown.get_value();
        spawn_local(async move {
            let done = match &action {
                Action::Cancel => api::cancel_turn(&id, index).await,
                Action::Decide(calls, approve) => api::decide(&id, index, calls, *approve).await,
                Action::Answer(text) => api::answer(&id, index, text).await,
            };
            if !portal.still_shows(shown) {
                return;
            }
            match done {
                Ok(()) if action != Action::Cancel => {
                    turn.state.update(|s| s.status = TurnStatus::Running);
                    if let Err(error) = session::follow(portal, turn) {
                        portal.problem.set(Some(error));
                    }
                }
                Ok(()) => {}
                Err(error) => portal.report(error),
            }
        });
    };
    move || {
        let (status, awaiting) = turn.state.with(|s| (s.status, s.awaiting()));
        if !status.is_open() {
            return ().into_any();
        }
        let approvals = awaiting.approvals;
        let requests = if !approvals.is_empty() {
            let declined = approvals.clone();
            view! {
                <button type="button" data-testid="approve" on:click=move |_| act(Action::Decide(approvals.clone(), true))>
                    "Approve"
                </button>
                <button type="button" data-testid="decline" on:click=move |_| act(Action::Decide(declined.clone(), false))>
                    "Decline"
                </button>
            }
            .into_any()
        } else if awaiting.question {
            view! {
                <form
                    class="answer"
                    on:submit=move |ev| {
                        ev.prevent_default();
                        let text = reply.get_untracked().trim().to_string();
                        if !text.is_empty() {
                            reply.set(String::new());
                            act(Action::Answer(text));
                        }
                    }
                >
                    <input
                        aria-label="Answer"
                        prop:value=move || reply.get()
                        on:input=move |ev| reply.set(event_target_value(&ev))
                    />
                    <button type="submit" data-testid="answer">"Answer"</button>
                </form>
            }
            .into_any()
        } else {
            ().into_any()
        };
        view! {
            <div class="turn-controls">
                {requests}
                <button type="button" class="cancel" data-testid="cancel" on:click=move |_| act(Action::Cancel)>
                    "Stop"
                </button>
            </div>
        }
        .into_any()
    }
}
