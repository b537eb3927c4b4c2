//! The bar over the message box while a message is edited: what Send does with the edit, and
//! Cancel (Esc in the message box), which gives the composer back what it held before. It is
//! always drawn, hidden while nothing is edited.

use leptos::prelude::*;

use crate::state::portal;
use crate::{editing, focus};

/// The bar's id, which the message box names as its description while a message is edited.
pub const EDIT_BAR: &str = "edit-bar";

#[component]
pub fn EditBar() -> impl IntoView {
    let portal = portal();
    // Whether the edit is a version of the latest turn's message; `None` while nothing is edited.
    let version = move || {
        portal
            .editing
            .with(|e| e.as_ref().map(|e| e.again.is_some()))
    };
    view! {
        <div class="edit-bar" id=EDIT_BAR data-testid="edit-bar" hidden=move || version().is_none()>
            <span>
                {move || {
                    if version() == Some(true) {
                        "Editing your message: Send makes a new version of it"
                    } else {
                        "Editing an earlier message: Send sends it as a new message"
                    }
                }}
            </span>
            <button
                type="button"
                aria-keyshortcuts="Escape"
                on:click=move |_| {
                    editing::end(portal);
                    focus::composer();
                }
            >
                "Cancel"
            </button>
        </div>
    }
}
