//! One conversation in the list: its title (or "New chat"), how long ago it was active, a mark
//! while it answers or waits and one while it is pinned, and buttons to rename it in place, to
//! move or pin it (web/src/projects.rs) and to delete it.

use leptos::html;
use leptos::prelude::*;
use portal_core::TurnStatus;

use crate::api::Listed;
use crate::icon::Icon;
use crate::listing;
use crate::opening;
use crate::projects;
use crate::relative_time::{ago, iso};
use crate::route::Route;
use crate::state::portal;

/// What a conversation with no title yet is called.
const UNTITLED: &str = "New chat";

/// The title the list shows for `listed`.
pub fn shown_title(listed: &Listed) -> String {
    if listed.title.trim().is_empty() {
        UNTITLED.to_string()
    } else {
        listed.title.clone()
    }
}

/// Conversation `id` of the list; `now` is the list's clock.
#[component]
pub fn ConversationLink(id: String, now: Signal<f64>) -> impl IntoView {
    let portal = portal();
    let list = portal.list;
    let listed = {
        let id = id.clone();
        Memo::new(move |_| {
            list.items
                .with(|items| items.iter().find(|c| c.id == id).cloned())
        })
    };
    let current = {
        let id = id.clone();
        Memo::new(move |_| portal.conversation.get().as_deref() == Some(id.as_str()))
    };
    let editing = RwSignal::new(false);
    move || {
        let listed = listed.get()?;
        Some(if editing.get() {
            view! { <Rename listed editing /> }.into_any()
        } else {
            view! { <Shown listed current=current.into() editing now /> }.into_any()
        })
    }
}

/// The conversation as a link, with its rename and delete buttons.
#[component]
fn Shown(
    listed: Listed,
    current: Signal<bool>,
    editing: RwSignal<bool>,
    now: Signal<f64>,
) -> impl IntoView {
    let portal = portal();
    let title = shown_title(&listed);
    let route = Route::Conversation(listed.id.clone());
    let href = route.path();
    let open = move |ev: leptos::ev::MouseEvent| {
        // A click meant for a new tab or window is the browser's.
        if ev.ctrl_key() || ev.meta_key() || ev.shift_key() || ev.alt_key() || ev.button() != 0 {
            return;
        }
        ev.prevent_default();
        opening::go(portal, route.clone());
    };
    let mark = match listed.status {
        Some(TurnStatus::Running) => Some(("answering", "running")),
        Some(TurnStatus::Paused) => Some(("waiting for you", "paused")),
        _ => None,
    };
    let pin = listed
        .pinned
        .then(|| view! { <span class="mark pinned" role="img" aria-label="pinned" title="pinned"></span> });
    let active = listed.last_activity;
    let deleting = listed.clone();
    let moving = NodeRef::<leptos::html::Button>::new();
    let moved = listed.clone();
    let move_it = move |_| {
        if let Some(button) = moving.get() {
            projects::open(portal, &button, Some(&moved));
        }
    };
    view! {
        <li class="conversation-item" class:current=current data-testid="conversation" data-id=listed.id.clone()>
            <a href=href aria-current=move || current.get().then_some("page") on:click=open>
                <span class="title">{title.clone()}</span>
                <span class="meta">
                    {pin}
                    {mark.map(|(label, class)| view! { <span class=format!("mark {class}") role="img" aria-label=label title=label></span> })}
                    <time datetime=iso(active)>{move || ago(active, now.get())}</time>
                </span>
            </a>
            <span class="actions">
                // The buttons are named by hidden text rather than aria-label, so a title never
                // passes for a label of the page's fields ("Message").
                <button type="button" class="icon" title="Rename" on:click=move |_| editing.set(true)>
                    <span class="visually-hidden">{format!("Rename {title}")}</span>
                    <Icon path="M4 16l1-4 8-8 3 3-8 8-4 1zM11.5 5.5l3 3" />
                </button>
                <button type="button" class="icon" title="Move or pin" node_ref=moving on:click=move_it>
                    <span class="visually-hidden">{format!("Move or pin {title}")}</span>
                    <Icon path="M3 5.5h5l1.5 2H17V15H3z" />
                </button>
                <button
                    type="button"
                    class="icon"
                    title="Delete"
                    on:click=move |_| portal.list.deleting.set(Some(deleting.clone()))
                >
                    <span class="visually-hidden">{format!("Delete {title}")}</span>
                    <Icon path="M4 6h12M8 6V4h4v2M6 6l1 10h6l1-10" />
                </button>
            </span>
        </li>
    }
}

/// The title being edited in place: Enter (or leaving the box) saves it, Esc keeps the old one.
#[component]
fn Rename(listed: Listed, editing: RwSignal<bool>) -> impl IntoView {
    let portal = portal();
    let input = NodeRef::<html::Input>::new();
    Effect::new(move || {
        if let Some(input) = input.get() {
            let _ = input.focus();
            input.select();
        }
    });
    let id = listed.id.clone();
    let old = listed.title.clone();
    let save = move || {
        // Leaving the box after Enter or Esc has nothing more to do.
        if !editing.get_untracked() {
            return;
        }
        editing.set(false);
        let Some(input) = input.get_untracked() else {
            return;
        };
        let title = input.value();
        if title.trim() != old.trim() {
            listing::rename(portal, id.clone(), title);
        }
    };
    let on_keydown = {
        let save = save.clone();
        move |ev: leptos::ev::KeyboardEvent| match ev.key().as_str() {
            "Enter" => {
                ev.prevent_default();
                save();
            }
            "Escape" => {
                // Esc ends the editing here, not the drawer around it.
                ev.prevent_default();
                ev.stop_propagation();
                editing.set(false);
            }
            _ => {}
        }
    };
    view! {
        <li class="conversation-item editing" data-testid="conversation" data-id=listed.id.clone()>
            <input
                node_ref=input
                class="rename"
                aria-label="Conversation title"
                maxlength="200"
                value=listed.title.clone()
                on:keydown=on_keydown
                on:blur=move |_| save()
            />
        </li>
    }
}
