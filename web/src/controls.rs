//! The controls under a turn until its reply has settled on screen: Stop (which, once the stream
//! has ended, shows the last words at once, web/src/session.rs), and the answer to a question
//! the paused turn asks. An approval's decision is in its card (web/src/decision.rs). Controls
//! that need the person never take the focus on their own: the composer says the turn waits and
//! leads to them ([`crate::waiting`]).

use leptos::prelude::*;

use crate::session::{self, Resume};
use crate::state::portal;
use crate::turn_view::TurnView;

#[component]
pub fn TurnControls(turn: TurnView) -> impl IntoView {
    let portal = portal();
    let reply = RwSignal::new(String::new());
    let acting = RwSignal::new(false);
    // Whether the turn asks a question and whether its reply has settled, read again only when
    // they change (not at each streamed piece).
    let stands = Memo::new(move |_| (turn.state.with(|s| s.awaiting().question), turn.settled()));
    move || {
        let (question, settled) = stands.get();
        if settled {
            return ().into_any();
        }
        let answer = question.then(|| {
            view! {
                <form
                    class="answer"
                    on:submit=move |ev| {
                        ev.prevent_default();
                        let text = reply.get_untracked().trim().to_string();
                        if !text.is_empty() {
                            reply.set(String::new());
                            session::resume(portal, turn, Resume::Answer(text), acting);
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
        });
        view! {
            <div
                class="turn-controls"
                id=question.then(|| crate::waiting::controls_id(turn.index))
                tabindex="-1"
                role="group"
                aria-label="What the reply waits for"
            >
                {answer}
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
