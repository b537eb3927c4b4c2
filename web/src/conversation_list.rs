//! The person's conversations as the sidebar lists them, newest activity first: read a page at a
//! time, searched and renamed through the server, and read again when a message is sent or a
//! turn ends.

use std::collections::HashSet;

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::api;
use crate::state::Portal;

/// The list and what it is doing.
#[derive(Debug, Clone, Copy)]
pub struct ConversationList {
    pub items: RwSignal<Vec<api::Listed>>,
    /// Where the next page starts; `None` when every conversation is listed.
    pub next: RwSignal<Option<String>>,
    /// What the list is searched for; empty lists them all.
    pub search: RwSignal<String>,
    /// Whether the first page for this search has arrived.
    pub loaded: RwSignal<bool>,
    /// Whether a page is on its way.
    pub loading: RwSignal<bool>,
    /// What went wrong last with the list, in words for the person.
    pub problem: RwSignal<Option<String>>,
    /// The conversation the person asked to delete, while they are asked to confirm it.
    pub deleting: RwSignal<Option<api::Listed>>,
    /// Counts the searches (and sign-ins) asked for, so a page for an older one is dropped.
    searched: StoredValue<u32>,
}

impl Default for ConversationList {
    fn default() -> Self {
        ConversationList {
            items: RwSignal::new(Vec::new()),
            next: RwSignal::new(None),
            search: RwSignal::new(String::new()),
            loaded: RwSignal::new(false),
            loading: RwSignal::new(false),
            problem: RwSignal::new(None),
            deleting: RwSignal::new(None),
            searched: StoredValue::new(0),
        }
    }
}

impl ConversationList {
    /// Puts `page`, the first page for the current search, on top of what is listed. Listed
    /// conversations older than the page's last stay below it with the next page's cursor, so a
    /// refresh does not take back pages the person already loaded.
    fn refreshed(&self, page: api::Page) {
        let fresh: HashSet<String> = page.conversations.iter().map(|c| c.id.clone()).collect();
        let oldest = page.conversations.last().map(|c| c.last_activity);
        let older: Vec<api::Listed> = match (oldest, &page.next) {
            (Some(oldest), Some(_)) => self.items.with_untracked(|items| {
                items
                    .iter()
                    .filter(|c| !fresh.contains(&c.id) && c.last_activity <= oldest)
                    .cloned()
                    .collect()
            }),
            _ => Vec::new(),
        };
        let next = if older.is_empty() {
            page.next
        } else {
            self.next.get_untracked()
        };
        let mut items = page.conversations;
        items.extend(older);
        self.items.set(items);
        self.next.set(next);
        self.loaded.set(true);
        self.problem.set(None);
    }

    /// Adds `page`, the one after what is listed.
    fn extended(&self, page: api::Page) {
        self.items.update(|items| {
            let listed: HashSet<String> = items.iter().map(|c| c.id.clone()).collect();
            items.extend(
                page.conversations
                    .into_iter()
                    .filter(|c| !listed.contains(&c.id)),
            );
        });
        self.next.set(page.next);
        self.problem.set(None);
    }
}

/// Reads the first page again, for the current search.
pub fn refresh(portal: Portal) {
    let list = portal.list;
    let searched = list.searched.get_value();
    let search = list.search.get_untracked();
    list.loading.set(true);
    spawn_local(async move {
        let answer = api::conversations(&search, None).await;
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
    list.searched.update_value(|s| *s += 1);
    list.search.set(search);
    list.items.set(Vec::new());
    list.next.set(None);
    list.loaded.set(false);
    refresh(portal);
}

/// Starts the list over for a person who just signed in.
pub fn restart(portal: Portal) {
    let list = portal.list;
    list.searched.update_value(|s| *s += 1);
    list.search.set(String::new());
    list.items.set(Vec::new());
    list.next.set(None);
    list.loaded.set(false);
    list.deleting.set(None);
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
    list.loading.set(true);
    spawn_local(async move {
        let answer = api::conversations(&search, Some(&cursor)).await;
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
