//! What the composer says while the latest turn waits on the person: a line announced to screen
//! readers, and the first stop after the message box, leading to the decision in the approval
//! card or to the answer box under the question. Nothing
//! takes the focus on its own, so typing goes on into the message box and a key pressed as a card
//! appears approves nothing.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::scroll::bring_to;
use crate::state::portal;

/// The id of what turn `turn` waits on the person for, which [`Waiting`] leads to: the decision
/// in its approval card, or the controls with its answer box.
pub fn controls_id(turn: u32) -> String {
    format!("turn-{turn}-controls")
}

#[component]
pub fn Waiting() -> impl IntoView {
    let portal = portal();
    let waits = Memo::new(move |_| {
        portal.turns.with(|turns| {
            let turn = turns.last()?;
            let awaiting = turn.state.with(|s| s.awaiting());
            let says = if !awaiting.approvals.is_empty() {
                "The reply waits for your approval"
            } else if awaiting.question {
                "The reply asks you a question"
            } else {
                return None;
            };
            Some((turn.index, says))
        })
    });
    view! {
        <div class="waiting" aria-live="polite">
            {move || {
                waits.get().map(|(index, says)| {
                    view! {
                        <button
                            type="button"
                            class="to-request"
                            data-testid="to-request"
                            on:click=move |_| go_to(index)
                        >
                            {says}
                            <span class="to-request-hint">" · Go to it"</span>
                        </button>
                    }
                })
            }}
        </div>
    }
}

/// Brings what turn `turn` waits for into view with the focus on its group, so the next Tab
/// reaches Approve or the answer box: a decision always takes a press of its own.
fn go_to(turn: u32) {
    let controls = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(&controls_id(turn)))
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
    if let Some(controls) = controls {
        bring_to(&controls);
    }
}
