//! The buttons of an open turn: stop it while it runs; approve, decline or answer while it is
//! paused, sending exactly what core says the turn waits on. Each resumes following the turn
//! after the last event read. Controls that need the person never take the focus on their own:
//! the composer says the turn waits and leads to them ([`crate::waiting`]). A decision or an
//! answer shows at once and the controls go, so a double click sends it once; the focus goes back
//! to the composer.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::state::portal;
use crate::turn_view::TurnView;
use crate::{api, focus, session};

/// What the person did to a paused turn.
#[derive(Debug, Clone, PartialEq)]
enum Action {
    /// Approve or decline these calls, the ones the turn waits on.
    Decide(Vec<String>, bool),
    Answer(String),
}

#[component]
pub fn TurnControls(turn: TurnView) -> impl IntoView {
    let portal = portal();
    let reply = RwSignal::new(String::new());
    let acting = RwSignal::new(false);
    let act = move |action: Action| {
        let Some(id) = portal.conversation.get_untracked() else {
            return;
        };
        if acting.get_untracked() {
            return;
        }
        acting.set(true);
        turn.state.update(|s| match &action {
            Action::Decide(calls, approve) => s.decide(calls, *approve),
            Action::Answer(_) => s.answered(),
        });
        let index = turn.index;
        let shown = portal.shown.get_value();
        spawn_local(async move {
            let done = match &action {
                Action::Decide(calls, approve) => api::decide(&id, index, calls, *approve).await,
                Action::Answer(text) => api::answer(&id, index, text).await,
            };
            if !portal.still_shows(shown) {
                return;
            }
            acting.set(false);
            match done {
                // Answered here or elsewhere (another tab, a second click): the turn goes on.
                Ok(())
                | Err(api::Error {
                    status: Some(409), ..
                }) => {
                    if let Err(error) = session::follow(portal, turn) {
                        portal.problem.set(Some(error));
                    }
                    focus::composer();
                }
                Err(error) => {
                    turn.state.update(|s| s.undecided());
                    portal.report(error);
                }
            }
        });
    };
    // Where the turn stands, read again only when it changes (not at each streamed piece).
    let stands = Memo::new(move |_| turn.state.with(|s| (s.status, s.awaiting())));
    move || {
        let (status, awaiting) = stands.get();
        if !status.is_open() {
            return ().into_any();
        }
        let approvals = awaiting.approvals;
        let requests = if !approvals.is_empty() {
            let declined = approvals.clone();
            view! {
                <button
                    type="button"
                    data-testid="approve"
                    disabled=move || acting.get()
                    on:click=move |_| act(Action::Decide(approvals.clone(), true))
                >
                    "Approve"
                </button>
                <button
                    type="button"
                    data-testid="decline"
                    disabled=move || acting.get()
                    on:click=move |_| act(Action::Decide(declined.clone(), false))
                >
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
                        dir="auto"
                        prop:value=move || reply.get()
                        on:input=move |ev| reply.set(event_target_value(&ev))
                    />
                    <button type="submit" data-testid="answer" disabled=move || acting.get()>"Answer"</button>
                </form>
            }
            .into_any()
        } else {
            ().into_any()
        };
        view! {
            <div
                class="turn-controls"
                id=crate::waiting::controls_id(turn.index)
                tabindex="-1"
                role="group"
                aria-label="What the reply waits for"
            >
                {requests}
                <button
                    type="button"
                    class="cancel"
                    data-testid="cancel"
                    aria-keyshortcuts="Escape"
                    title="Stop (Esc)"
                    on:click=move |_| session::stop(portal, turn)
                >
                    "Stop"
                </button>
            </div>
        }
        .into_any()
    }
}
