//! Putting the cursor where the person writes next: in the message box, once it is drawn.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// Puts the cursor in the message box once it is drawn.
pub fn composer() {
    request_animation_frame(|| {
        let composer = document()
            .query_selector(".composer textarea")
            .ok()
            .flatten()
            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
        if let Some(composer) = composer {
            let _ = composer.focus();
        }
    });
}
