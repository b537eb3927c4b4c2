//! The sidebar's "Knowledge" button: `knowledge.js` loads the panel (web/knowledge/, outside the
//! app's bundle and its size budget) on first need, where the person lists the collections of
//! documents their agents may search, makes one, adds and deletes its documents and deletes it
//! (docs/knowledge.md), through `/api/collections`.

use leptos::prelude::*;
use wasm_bindgen::prelude::wasm_bindgen;
use web_sys::Element;

use crate::icon::Icon;

#[wasm_bindgen(module = "/src/knowledge.js")]
extern "C" {
    /// Opens the panel; focus goes back to `opener` on close.
    #[wasm_bindgen(js_name = openKnowledge)]
    fn open_knowledge(opener: &Element);
}

/// The button that opens the panel, beside New chat: an open book, named for screen readers by
/// its hidden words and for the pointer by its title.
#[component]
pub fn KnowledgeButton() -> impl IntoView {
    let button = NodeRef::<leptos::html::Button>::new();
    let open = move |_| {
        if let Some(button) = button.get() {
            open_knowledge(&button);
        }
    };
    view! {
        <button type="button" class="knowledge-open" title="Knowledge" data-testid="knowledge-open" node_ref=button on:click=open>
            <Icon path="M10 6v10M10 6c-1.5-1.2-3.5-1.5-6.5-1.5v10c3 0 5 .3 6.5 1.5c1.5-1.2 3.5-1.5 6.5-1.5v-10c-3 0-5 .3-6.5 1.5" />
            <span class="visually-hidden">"Knowledge"</span>
        </button>
    }
}
