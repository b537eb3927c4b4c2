//! The sidebar: New chat, projects, knowledge, the search box and the person's conversations (all of them or
//! one project's), pinned ones first, then newest activity first, a page at a time. On a narrow screen it is a drawer the header's button opens; Esc or a click
//! beside it closes it.

use std::time::Duration;

use leptos::html;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::conversation_link::ConversationLink;
use crate::delete_dialog::DeleteDialog;
use crate::exchange::ExchangeButton;
use crate::icon::Icon;
use crate::knowledge::KnowledgeButton;
use crate::listing;
use crate::opening;
use crate::projects::{ProjectsButton, ShownProjectBar};
use crate::route::Route;
use crate::state::{Portal, portal};

/// How long the search waits for typing to pause before it asks the server.
const SEARCH_PAUSE: Duration = Duration::from_millis(250);

/// How often the list's times ("5 min ago") are brought up to date.
const CLOCK_TICK: Duration = Duration::from_secs(30);

#[component]
pub fn Sidebar() -> impl IntoView {
    let portal = portal();
    let list = portal.list;
    let now = RwSignal::new(js_sys::Date::now());
    if let Ok(handle) = set_interval_with_handle(move || now.set(js_sys::Date::now()), CLOCK_TICK) {
        on_cleanup(move || handle.clear());
    }
    let typed = RwSignal::new(list.search.get_untracked());
    let waiting = StoredValue::new(None::<TimeoutHandle>);
    let on_search = move |ev: leptos::ev::Event| {
        let text = event_target_value(&ev);
        typed.set(text.clone());
        if let Some(handle) = waiting.get_value() {
            handle.clear();
        }
        let handle = set_timeout_with_handle(
            move || listing::search(portal, text.trim().to_string()),
            SEARCH_PAUSE,
        );
        waiting.set_value(handle.ok());
    };
    let new_chat = NodeRef::<html::Button>::new();
    // The drawer takes the focus when it opens, so the keyboard starts in it.
    Effect::new(move || {
        if portal.drawer.get()
            && let Some(button) = new_chat.get_untracked()
        {
            let _ = button.focus();
        }
    });
    let empty = move || {
        let searched = list.search.get();
        let note = if !searched.is_empty() {
            format!("No conversation mentions “{searched}”.")
        } else if list.project.with(Option::is_some) {
            "No conversations in this project yet.".to_string()
        } else {
            "No conversations yet.".to_string()
        };
        (list.loaded.get() && list.items.with(Vec::is_empty))
            .then(|| view! { <p class="list-note">{note}</p> })
    };
    let on_keydown = move |ev: leptos::ev::KeyboardEvent| {
        if ev.key() == "Escape" && portal.drawer.get_untracked() {
            close_drawer(portal);
        }
    };
    view! {
        <nav
            id="conversations"
            class="sidebar"
            class:open=move || portal.drawer.get()
            aria-label="Conversations"
            on:keydown=on_keydown
        >
            <div class="sidebar-top">
                <div class="sidebar-actions">
                    <button
                        type="button"
                        class="new-chat"
                        node_ref=new_chat
                        title=format!("New chat ({})", shortcut())
                        aria-keyshortcuts="Control+Shift+O Meta+Shift+O"
                        on:click=move |_| opening::go(portal, Route::NewChat)
                    >
                        <Icon path="M10 4v12M4 10h12" />
                        "New chat"
                    </button>
                    <ProjectsButton />
                    <KnowledgeButton />
                    <ExchangeButton />
                </div>
                <input
                    type="search"
                    class="search"
                    aria-label="Search conversations"
                    placeholder="Search"
                    prop:value=move || typed.get()
                    on:input=on_search
                />
            </div>
            <ShownProjectBar />
            {move || list.problem.get().map(|p| view! { <p class="problem" role="alert">{p}</p> })}
            <ul class="conversation-list" aria-busy=move || list.loading.get().to_string()>
                <For each=move || list.items.get() key=|listed| listed.id.clone() let(listed)>
                    <ConversationLink id=listed.id now=now.into() />
                </For>
            </ul>
            {empty}
            {move || {
                list.next
                    .with(Option::is_some)
                    .then(|| {
                        view! {
                            <button
                                type="button"
                                class="show-more"
                                disabled=move || list.loading.get()
                                on:click=move |_| listing::more(portal)
                            >
                                "Show more"
                            </button>
                        }
                    })
            }}
        </nav>
        <div
            class="drawer-backdrop"
            class:open=move || portal.drawer.get()
            aria-hidden="true"
            on:click=move |_| close_drawer(portal)
        ></div>
        <DeleteDialog />
    }
}

/// Closes the drawer and gives the focus back to the button that opens it.
fn close_drawer(portal: Portal) {
    portal.drawer.set(false);
    if let Some(toggle) = document().get_element_by_id("drawer-toggle") {
        let _ = toggle.unchecked_into::<web_sys::HtmlElement>().focus();
    }
}

/// The New chat shortcut as this computer's keyboard names it.
fn shortcut() -> &'static str {
    let mac = web_sys::window()
        .and_then(|w| w.navigator().platform().ok())
        .is_some_and(|p| p.starts_with("Mac"));
    if mac { "⌘⇧O" } else { "Ctrl+Shift+O" }
}
