//! Why a turn failed, or why the server cut it off, under it, in the server's words for the
//! person, and Retry: the same message, attachments and effort again as a new turn (the turn
//! stays as it was); no Retry in a shared conversation, which is only read.

use leptos::prelude::*;

use crate::session;
use crate::state::portal;
use crate::turn_view::TurnView;

/// What a failed turn says when its reason is unknown.
const UNKNOWN: &str = "The reply failed before it finished.";

#[component]
pub fn TurnFailure(turn: TurnView) -> impl IntoView {
    let portal = portal();
    let failure = Memo::new(move |_| {
        turn.state.with(|s| {
            s.retry_reason()
                .map(|reason| reason.unwrap_or(UNKNOWN).to_string())
        })
    });
    let retry = move |_| session::resend(portal, turn, turn.effort.get_untracked());
    move || {
        failure.get().map(|reason| {
            // A failure that happens while the person watches is announced; a reloaded one is not.
            let role = turn.announces.then_some("alert");
            let retry = (!portal.read_only && portal.is_latest(&turn)).then(|| {
                view! {
                    <button
                        type="button"
                        class="retry"
                        data-testid="retry"
                        disabled=move || portal.running() || portal.sending.get()
                        on:click=retry
                    >
                        "Retry"
                    </button>
                }
            });
            view! {
                <div class="failure" role=role data-testid="failure">
                    <p>{reason}</p>
                    {retry}
                </div>
            }
        })
    }
}
