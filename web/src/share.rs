//! The header's "Share" button, while a conversation is open: `share.js` loads the panel
//! (web/share/, outside the app's bundle and its size budget) on first need, where the person
//! makes a link to a read-only snapshot of the conversation, copies it, and revokes the links made
//! before (docs/share.md), through `/api/conversations/<id>/shares` and `/api/shares`.

use leptos::prelude::*;
use wasm_bindgen::prelude::wasm_bindgen;
use web_sys::Element;

use crate::icon::Icon;
use crate::state::portal;

#[wasm_bindgen(module = "/src/share.js")]
extern "C" {
    /// Opens the panel for `conversation`; focus goes back to `opener` on close.
    #[wasm_bindgen(js_name = openShare)]
    fn open_share(opener: &Element, conversation: &str);
}

/// The button that opens the panel. It holds its place in a new chat, unseen, so that the header
/// does not move when the first message opens the conversation.
#[component]
pub fn ShareButton() -> impl IntoView {
    let portal = portal();
    let button = NodeRef::<leptos::html::Button>::new();
    let open = move |_| {
        if let (Some(button), Some(id)) = (button.get(), portal.conversation.get_untracked()) {
            open_share(&button, &id);
        }
    };
    view! {
        <button
            type="button"
            class="share-open"
            class:absent=move || portal.conversation.get().is_none() || portal.missing.get()
            title="Share this conversation"
            data-testid="share-open"
            node_ref=button
            on:click=open
        >
            <Icon path="M10 13V3M6.5 6.5L10 3l3.5 3.5M5 10H4v7h12v-7h-1" />
            <span class="share-label">"Share"</span>
        </button>
    }
}
