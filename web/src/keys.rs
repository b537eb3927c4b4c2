//! The header's "API keys" button: `keys.js` loads the panel (web/keys/, outside the app's bundle
//! and its size budget) on first need, where the person lists, makes and revokes the keys their
//! programs use for the OpenAI-compatible API (docs/api.md), through `/api/keys`.

use leptos::prelude::*;
use wasm_bindgen::prelude::wasm_bindgen;
use web_sys::Element;

#[wasm_bindgen(module = "/src/keys.js")]
extern "C" {
    /// Opens the panel; focus goes back to `opener` on close.
    #[wasm_bindgen(js_name = openKeys)]
    fn open_keys(opener: &Element);
}

/// The button that opens the panel: a key, and its name beside it where there is room.
#[component]
pub fn KeysButton() -> impl IntoView {
    let button = NodeRef::<leptos::html::Button>::new();
    let open = move |_| {
        if let Some(button) = button.get() {
            open_keys(&button);
        }
    };
    view! {
        <button type="button" class="keys-open" data-testid="keys-open" node_ref=button on:click=open>
            <svg viewBox="0 0 20 20" width="16" height="16" aria-hidden="true">
                <circle cx="6" cy="10" r="3.5" fill="none" stroke="currentColor" stroke-width="1.6" />
                <path d="M9.5 10h8M15 10v2.5M17.5 10v3" fill="none" stroke="currentColor" stroke-width="1.6" stroke-linecap="round" />
            </svg>
            <span class="keys-open-label">"API keys"</span>
        </button>
    }
}
