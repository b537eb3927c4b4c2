//! What the page shows for an address naming a conversation this person does not have: it was
//! deleted, never existed or is someone else's (the server says the same for all three).

use leptos::prelude::*;

use crate::opening;
use crate::route::Route;
use crate::state::portal;

#[component]
pub fn UnknownConversation() -> impl IntoView {
    let portal = portal();
    view! {
        <section class="unknown-conversation" data-testid="unknown-conversation">
            <h2>"This conversation was deleted or never existed"</h2>
            <p>"Pick one from your conversations, or start a new one."</p>
            <button type="button" on:click=move |_| opening::go(portal, Route::NewChat)>
                "New chat"
            </button>
        </section>
    }
}
