//! The person's conversations as the sidebar lists them, pinned ones first, then newest activity
//! first, all of them or one project's, and what the list is doing: the sidebar's view model in the shared state, which web/src/listing.rs fills from
//! the server.

use std::collections::HashSet;

use leptos::prelude::*;

use crate::api;

/// The list and what it is doing.
#[derive(Debug, Clone, Copy)]
pub struct ConversationList {
    pub items: RwSignal<Vec<api::Listed>>,
    /// Where the next page starts; `None` when every conversation is listed.
    pub next: RwSignal<Option<String>>,
    /// What the list is searched for; empty lists them all.
    pub search: RwSignal<String>,
    /// The project whose conversations are listed; `None` lists every conversation. A new chat
    /// opens in it.
    pub project: RwSignal<Option<ShownProject>>,
    /// Whether the first page for this search has arrived.
    pub loaded: RwSignal<bool>,
    /// Whether a page is on its way.
    pub loading: RwSignal<bool>,
    /// What went wrong last with the list, in words for the person.
    pub problem: RwSignal<Option<String>>,
    /// The conversation the person asked to delete, while they are asked to confirm it.
    pub deleting: RwSignal<Option<api::Listed>>,
    /// Counts the searches (and sign-ins) asked for, so a page for an older one is dropped.
    pub searched: StoredValue<u32>,
}

impl Default for ConversationList {
    fn default() -> Self {
        ConversationList {
            items: RwSignal::new(Vec::new()),
            next: RwSignal::new(None),
            search: RwSignal::new(String::new()),
            project: RwSignal::new(None),
            loaded: RwSignal::new(false),
            loading: RwSignal::new(false),
            problem: RwSignal::new(None),
            deleting: RwSignal::new(None),
            searched: StoredValue::new(0),
        }
    }
}

/// The project the list shows (web/src/projects.rs).
#[derive(Debug, Clone, PartialEq)]
pub struct ShownProject {
    pub id: String,
    pub name: String,
    /// The agent a new chat in it talks to; `None` for the organisation's first.
    pub agent: Option<String>,
}

impl ConversationList {
    /// Puts `page`, the first page for the current search, on top of what is listed. Listed
    /// conversations the server lists after the page's last stay below it with the next page's
    /// cursor, so a refresh does not take back pages the person already loaded.
    pub fn refreshed(&self, page: api::Page) {
        let fresh: HashSet<String> = page.conversations.iter().map(|c| c.id.clone()).collect();
        let last = page.conversations.last().cloned();
        let older: Vec<api::Listed> = match (last, &page.next) {
            (Some(last), Some(_)) => self.items.with_untracked(|items| {
                items
                    .iter()
                    .filter(|c| !fresh.contains(&c.id) && listed_after(c, &last))
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
    pub fn extended(&self, page: api::Page) {
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

/// Whether the server lists `item` after `last`: pinned conversations first, then the rest, each
/// newest activity first.
fn listed_after(item: &api::Listed, last: &api::Listed) -> bool {
    if item.pinned == last.pinned {
        item.last_activity <= last.last_activity
    } else {
        last.pinned
    }
}
