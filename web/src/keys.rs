//! The header's "API keys" button: `keys.js` loads the panel (web/keys/, outside the app's bundle
//! and its size budget) on first need, where the person lists, makes and revokes the keys their
//! programs use for the OpenAI-compatible API (docs/api.md), through `/api/keys`.

use crate::icon::Icon;
use leptos::prelude::*;
use wasm_bindgen::prelude::wasm_bindgen;
use web_sys::Element;

#[wasm_bindgen(module = "/src/keys.js")]
extern "C" {
    /// Opens the panel; focus goes back to `opener` on close.
    #[wasm_bindgen(js_name = openKeys)]
    fn open_keys(opener: &Element);
}

/// The button that opens the panel: a key beside the person's name, named for screen readers by
/// its hidden words and for the pointer by its title.
#[component]
pub fn KeysButton() -> impl IntoView {
    let button = NodeRef::<leptos::html::Button>::new();
    let open = move |_| {
        if let Some(button) = button.get() {
            open_keys(&button);
        }
    };
    view! {
        <button type="button" class="keys-open" title="API keys" data-testid="keys-open" node_ref=button on:click=open>
            <Icon path="M2.75 13.5a3.75 3.75 0 1 0 7.5 0a3.75 3.75 0 1 0-7.5 0M9.2 10.8L17 3M14.2 5.8l2.2 2.2M11.9 8.1l1.7 1.7" />
            <span class="visually-hidden">"API keys"</span>
        </button>
    }
}
