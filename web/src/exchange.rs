//! The sidebar's "Export and import" button: `exchange.js` loads the panel (web/exchange/,
//! outside the app's bundle and its size budget) on first need, where the person downloads the
//! open conversation as Markdown or JSON and imports conversations from a file (docs/export.md).
//! The list is read again after an import.

use leptos::prelude::*;
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::{Closure, wasm_bindgen};
use web_sys::Element;

use crate::icon::Icon;
use crate::listing;
use crate::state::portal;

#[wasm_bindgen(module = "/src/exchange.js")]
extern "C" {
    /// Opens the panel; `imported` is called after each import, and focus goes back to `opener`
    /// on close.
    #[wasm_bindgen(js_name = openExchange)]
    fn open_exchange(opener: &Element, imported: &JsValue);
}

/// The button that opens the panel, beside New chat.
#[component]
pub fn ExchangeButton() -> impl IntoView {
    let portal = portal();
    let button = NodeRef::<leptos::html::Button>::new();
    let open = move |_| {
        if let Some(button) = button.get() {
            let imported = Closure::<dyn Fn()>::new(move || listing::refresh(portal));
            open_exchange(&button, &imported.into_js_value());
        }
    };
    view! {
        <button type="button" class="exchange-open" title="Export and import" data-testid="exchange-open" node_ref=button on:click=open>
            <Icon path="M6 16V4M3 7l3-3 3 3M14 4v12M11 13l3 3 3-3" />
            <span class="visually-hidden">"Export and import"</span>
        </button>
    }
}
