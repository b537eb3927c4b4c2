//! Listing the person's conversations through the server: the first page read again when a
//! message is sent or a turn ends, a search, the next page, a rename. What is listed is the
//! shared state's `ConversationList` (web/src/conversation_list.rs).

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::api;
use crate::conversation_list::ShownProject;
use crate::state::Portal;

/// Reads the first page again, for the current search.
pub fn refresh(portal: Portal) {
    let list = portal.list;
    let searched = list.searched.get_value();
    let search = list.search.get_untracked();
    let project = list.project.get_untracked().map(|p| p.id);
    list.loading.set(true);
    spawn_local(async move {
        let answer = api::conversations(&search, project.as_deref(), None).await;
        if list.searched.get_value() != searched {
            return;
        }
        list.loading.set(false);
        match answer {
            Ok(page) => list.refreshed(page),
            Err(error) => failed(portal, error),
        }
    });
}

/// Lists the conversations whose title or messages contain `search`, from the first page.
pub fn search(portal: Portal, search: String) {
    let list = portal.list;
    if list.search.get_untracked() == search && list.loaded.get_untracked() {
        return;
    }
    list.search.set(search);
    start_over(portal);
}

/// Lists `project`'s conversations (every conversation for `None`), for the current search.
pub fn show_project(portal: Portal, project: Option<ShownProject>) {
    let list = portal.list;
    list.project.set(project);
    start_over(portal);
}

/// Starts the list over for a person who just signed in.
pub fn restart(portal: Portal) {
    let list = portal.list;
    list.search.set(String::new());
    list.project.set(None);
    list.deleting.set(None);
    start_over(portal);
}

/// Empties the list and reads its first page again; a page on its way for what was listed
/// before is dropped.
fn start_over(portal: Portal) {
    let list = portal.list;
    list.searched.update_value(|s| *s += 1);
    list.items.set(Vec::new());
    list.next.set(None);
    list.loaded.set(false);
    refresh(portal);
}

/// Reads the next page, if there is one and none is on its way.
pub fn more(portal: Portal) {
    let list = portal.list;
    let Some(cursor) = list.next.get_untracked() else {
        return;
    };
    if list.loading.get_untracked() {
        return;
    }
    let searched = list.searched.get_value();
    let search = list.search.get_untracked();
    let project = list.project.get_untracked().map(|p| p.id);
    list.loading.set(true);
    spawn_local(async move {
        let answer = api::conversations(&search, project.as_deref(), Some(&cursor)).await;
        if list.searched.get_value() != searched {
            return;
        }
        list.loading.set(false);
        match answer {
            Ok(page) => list.extended(page),
            Err(error) => failed(portal, error),
        }
    });
}

/// Gives conversation `id` the title `title`; a title left empty keeps the old one.
pub fn rename(portal: Portal, id: String, title: String) {
    let title = title.trim().to_string();
    if title.is_empty() {
        return;
    }
    let list = portal.list;
    spawn_local(async move {
        match api::rename(&id, &title).await {
            Ok(renamed) => list.items.update(|items| {
                if let Some(item) = items.iter_mut().find(|c| c.id == renamed.id) {
                    *item = renamed;
                }
            }),
            Err(error) => failed(portal, error),
        }
    });
}

/// Says what went wrong with the list, in the sidebar; an ended session signs the person out.
fn failed(portal: Portal, error: api::Error) {
    if error.signed_out() {
        portal.ended();
    } else {
        portal.list.problem.set(Some(error.message));
    }
}
