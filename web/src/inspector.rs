//! "What the model saw" under a turn: `inspector.js` loads the panel (web/inspector/, outside
//! the app's bundle and its size budget) on first need; it draws the answers of
//! `GET /api/conversations/{id}/turns/{turn}/calls[/{n}]`, which core took apart on the server,
//! as text nodes only (docs/inspector.md).

use leptos::prelude::*;
use wasm_bindgen::prelude::wasm_bindgen;
use web_sys::Element;

use crate::state::portal;

#[wasm_bindgen(module = "/src/inspector.js")]
extern "C" {
    /// Opens the panel on turn `turn` of `conversation`; focus goes back to `opener` on close.
    #[wasm_bindgen(js_name = openInspector)]
    fn open_inspector(conversation: &str, turn: u32, opener: &Element);
}

/// The button that opens the panel on turn `index`.
#[component]
pub fn InspectButton(index: u32) -> impl IntoView {
    let portal = portal();
    let button = NodeRef::<leptos::html::Button>::new();
    let open = move |_| {
        if let (Some(id), Some(button)) = (portal.conversation.get_untracked(), button.get()) {
            open_inspector(&id, index, &button);
        }
    };
    view! {
        <button type="button" data-testid="inspect" node_ref=button on:click=open>
            "What the model saw"
        </button>
    }
}
