//! The person's projects (docs/projects.md): `projects.js` loads the panel (web/projects/, outside
//! the app's bundle and its size budget) on first need, where the person makes, changes and
//! deletes projects, picks the one the sidebar lists, and moves or pins a conversation. The
//! sidebar says which project it lists, with a way back to every conversation.

use leptos::prelude::*;
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::{Closure, wasm_bindgen};
use web_sys::Element;

use crate::api::Listed;
use crate::conversation_link::shown_title;
use crate::conversation_list::ShownProject;
use crate::icon::Icon;
use crate::listing;
use crate::state::{Portal, portal};

#[wasm_bindgen(module = "/src/projects.js")]
extern "C" {
    /// Opens the panel, for `conversation` (moving or pinning it: titled `title`, in project
    /// `in_project`, `pinned` or not) when given. The list shows
    /// project `shown` (every conversation when `None`); `changed(id, name, agent)` names the
    /// project to show after a change (every conversation for an `id` of `None`). Focus goes back
    /// to `opener` on close.
    #[wasm_bindgen(js_name = openProjects)]
    fn open_projects(
        opener: &Element,
        shown: Option<String>,
        conversation: Option<String>,
        title: Option<String>,
        in_project: Option<String>,
        pinned: bool,
        changed: &JsValue,
    );
}

/// Opens the panel from `opener`, for `conversation` when given.
pub fn open(portal: Portal, opener: &Element, conversation: Option<&Listed>) {
    let changed = Closure::<dyn Fn(Option<String>, Option<String>, Option<String>)>::new(
        move |id: Option<String>, name: Option<String>, agent| {
            let project = id.map(|id| ShownProject {
                id,
                name: name.unwrap_or_default(),
                agent,
            });
            listing::show_project(portal, project);
        },
    );
    open_projects(
        opener,
        portal.list.project.get_untracked().map(|p| p.id),
        conversation.map(|c| c.id.clone()),
        conversation.map(shown_title),
        conversation.and_then(|c| c.project.clone()),
        conversation.is_some_and(|c| c.pinned),
        &changed.into_js_value(),
    );
}

/// The button that opens the panel, beside New chat.
#[component]
pub fn ProjectsButton() -> impl IntoView {
    let portal = portal();
    let button = NodeRef::<leptos::html::Button>::new();
    let on_click = move |_| {
        if let Some(button) = button.get() {
            open(portal, &button, None);
        }
    };
    view! {
        <button type="button" class="projects-open" title="Projects" data-testid="projects-open" node_ref=button on:click=on_click>
            <Icon path="M3 5.5h5l1.5 2H17V15H3z" />
            <span class="visually-hidden">"Projects"</span>
        </button>
    }
}

/// The project the list shows, with the way back to every conversation; nothing when it shows
/// them all.
#[component]
pub fn ShownProjectBar() -> impl IntoView {
    let portal = portal();
    move || {
        portal.list.project.get().map(|project| {
            view! {
                <div class="shown-project" data-testid="shown-project">
                    <h2>{project.name}</h2>
                    <button type="button" class="all-conversations" on:click=move |_| listing::show_project(portal, None)>
                        "All conversations"
                    </button>
                </div>
            }
        })
    }
}
