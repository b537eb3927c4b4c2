//! The decision an approval card asks for: Approve and Decline, in the card of the call the
//! paused turn waits on (the last card, when one reply asks for several calls at once, and the
//! decision is then on them all). It never takes the focus on its own; the composer's line leads
//! to it ([`crate::waiting`]), and a decision shows at once.

use leptos::prelude::*;

use crate::session::{self, Resume};
use crate::state::portal;
use crate::turn_view::TurnView;
use crate::waiting::controls_id;

#[component]
pub fn Decision(turn: TurnView, calls: Vec<String>) -> impl IntoView {
    let portal = portal();
    let acting = RwSignal::new(false);
    let decide = move |approve| {
        let calls = calls.clone();
        move |_: leptos::ev::MouseEvent| {
            session::resume(portal, turn, Resume::Decide(calls.clone(), approve), acting)
        }
    };
    view! {
        <div class="decision" id=controls_id(turn.index) tabindex="-1" role="group" aria-label="Your decision">
            <button type="button" data-testid="approve" disabled=move || acting.get() on:click=decide(true)>
                "Approve"
            </button>
            <button type="button" data-testid="decline" disabled=move || acting.get() on:click=decide(false)>
                "Decline"
            </button>
        </div>
    }
}
