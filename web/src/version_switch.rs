//! `‹ 2/3 ›` under an answer whose message was answered more than once (Regenerate, an edited
//! latest message): the person steps through the versions; the transcript keeps every turn.

use leptos::prelude::*;
use portal_drawer::page::document;
use wasm_bindgen::JsCast;
use web_sys::HtmlElement;

use crate::state::portal;

/// The version switch of turn `index`, when it has versions.
#[component]
pub fn VersionSwitch(index: u32) -> impl IntoView {
    let versions = portal().versions;
    // The switch moves with the version shown: the focus goes with it, to the button pressed,
    // or the other one where the pressed one is at an end and disabled.
    let step = move |by: isize, button: &'static str| {
        if let Some(shown) = versions.step(index, by) {
            request_animation_frame(move || {
                let switch = format!("[data-turn=\"{shown}\"] .versions");
                let found = |selector: String| {
                    document()
                        .query_selector(&selector)
                        .ok()
                        .flatten()
                        .and_then(|e| e.dyn_into::<HtmlElement>().ok())
                };
                if let Some(button) = found(format!("{switch} [data-testid={button}]:enabled"))
                    .or_else(|| found(format!("{switch} button:enabled")))
                {
                    let _ = button.focus();
                }
            });
        }
    };
    move || {
        versions.of(index).map(|v| {
            view! {
                <nav class="versions" aria-label="Versions of this answer">
                    <button
                        type="button"
                        data-testid="version-before"
                        aria-label="Version before"
                        disabled=v.number == 1
                        on:click=move |_| step(-1, "version-before")
                    >
                        "‹"
                    </button>
                    <span data-testid="version">{format!("{}/{}", v.number, v.of)}</span>
                    <button
                        type="button"
                        data-testid="version-after"
                        aria-label="Version after"
                        disabled=v.number == v.of
                        on:click=move |_| step(1, "version-after")
                    >
                        "›"
                    </button>
                </nav>
            }
        })
    }
}
