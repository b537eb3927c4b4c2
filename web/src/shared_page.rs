//! A shared conversation's page (`/s/<token>`, docs/share.md): a read-only snapshot of a
//! conversation's ended turns, for whoever its link lets in, signed in or not. The app draws the
//! turns as the conversation does, read only (the shared state's `read_only`: no Edit,
//! Regenerate, Retry or inspector); `share.js` loads the page's words (web/shared/, outside the
//! app's bundle and its size budget) on first need, which read the link and draw around the turns
//! the title, who shared it and when, and "Continue this conversation" for a reader of the same
//! organisation, or why the link shows nothing. A link for an organisation asks someone signed out
//! to sign in: the app shows the sign-in page, then this page again.

use leptos::html;
use leptos::prelude::*;
use leptos::task::spawn_local;
use portal_core::Transcript;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen_futures::JsFuture;
use web_sys::Element;

use crate::state::{SignIn, portal};
use crate::theme::ThemeToggle;
use crate::turn::turns;
use crate::turn_view::TurnView;

#[wasm_bindgen(module = "/src/share.js")]
extern "C" {
    /// Reads the shared conversation the link `token` names and draws the page's words in `page`
    /// around its turns; resolves to the snapshot's transcript as JSON, to `null` when the link
    /// needs the reader signed in, and to nothing when the link shows nothing.
    #[wasm_bindgen(js_name = showShared)]
    fn show_shared(page: &Element, token: &str) -> js_sys::Promise;
}

#[component]
pub fn SharedPage(token: String) -> impl IntoView {
    let portal = portal();
    let page = NodeRef::<html::Main>::new();
    Effect::new(move || {
        let Some(page) = page.get() else {
            return;
        };
        let shown = JsFuture::from(show_shared(&page, &token));
        spawn_local(async move {
            let Ok(answer) = shown.await else {
                return;
            };
            if answer.is_null() {
                portal.sign_in.set(SignIn::Needed { ended: None });
            } else if let Some(Ok(transcript)) = answer
                .as_string()
                .map(|text| serde_json::from_str::<Transcript>(&text))
            {
                portal
                    .turns
                    .set(transcript.turns.iter().map(TurnView::stored).collect());
            }
        });
    });
    view! {
        <main class="portal shared" data-testid="shared" node_ref=page>
            <header class="portal-header">
                <a class="brand" href="/">"Portal"</a>
                <ThemeToggle />
            </header>
            <section class="conversation" aria-label="Conversation">{turns()}</section>
        </main>
    }
}
