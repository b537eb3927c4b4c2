//! The dialog that asks before a conversation is deleted, naming it and saying that deleting
//! cannot be undone, and deletes it once the person confirms.

use leptos::html;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::api::{self, Listed};
use crate::conversation_link::shown_title;
use crate::opening;
use crate::route::Route;
use crate::state::{Portal, portal};

/// The dialog, while the person is asked to confirm a deletion.
#[component]
pub fn DeleteDialog() -> impl IntoView {
    let deleting = portal().list.deleting;
    move || deleting.get().map(|listed| view! { <Confirm listed /> })
}

#[component]
fn Confirm(listed: Listed) -> impl IntoView {
    let portal = portal();
    let dialog = NodeRef::<html::Dialog>::new();
    let busy = RwSignal::new(false);
    let problem = RwSignal::new(None::<String>);
    Effect::new(move || {
        if let Some(dialog) = dialog.get()
            && !dialog.open()
        {
            let _ = dialog.show_modal();
        }
    });
    // The dialog may be gone already: Esc closed it while the deletion was on its way.
    let close = move || {
        if let Some(dialog) = dialog.try_get_untracked().flatten() {
            dialog.close();
        }
    };
    let id = listed.id.clone();
    let delete = move |_| {
        busy.set(true);
        problem.set(None);
        let id = id.clone();
        spawn_local(async move {
            match delete_conversation(portal, &id).await {
                Ok(()) => close(),
                Err(error) => {
                    problem.try_set(Some(error));
                    busy.try_set(false);
                }
            }
        });
    };
    view! {
        <dialog
            node_ref=dialog
            class="confirm"
            data-testid="delete-dialog"
            aria-labelledby="delete-title"
            aria-describedby="delete-warning"
            on:close=move |_| portal.list.deleting.set(None)
        >
            <h2 id="delete-title">"Delete “" {shown_title(&listed)} "”?"</h2>
            <p id="delete-warning">
                "Its messages and attached files are deleted with it. This cannot be undone."
            </p>
            {move || problem.get().map(|p| view! { <p class="problem" role="alert">{p}</p> })}
            <div class="dialog-buttons">
                <button type="button" autofocus on:click=move |_| close()>"Cancel"</button>
                <button type="button" class="danger" disabled=busy on:click=delete>"Delete"</button>
            </div>
        </dialog>
    }
}

/// Deletes conversation `id` for good. Deleting the open conversation opens a new chat.
async fn delete_conversation(portal: Portal, id: &str) -> Result<(), String> {
    if let Err(error) = api::delete_conversation(id).await {
        if error.signed_out() {
            portal.ended();
        }
        return Err(error.message);
    }
    portal
        .list
        .items
        .update(|items| items.retain(|c| c.id != id));
    if portal.conversation.get_untracked().as_deref() == Some(id) {
        Route::NewChat.replace();
        opening::new_chat(portal);
    }
    Ok(())
}
