//! Drafts kept in the tab's `sessionStorage`, one for each conversation and one for a new chat,
//! so a draft survives a reload and a session that ended under the person. Each is kept under its
//! owner (organisation and user), so someone else signing in on the same tab never sees it.

use crate::api::Person;

/// The draft `person` left in `conversation` (`None`: a new chat), or an empty one.
pub fn load(person: &Person, conversation: Option<&str>) -> String {
    storage()
        .and_then(|s| s.get_item(&key(person, conversation)).ok().flatten())
        .unwrap_or_default()
}

/// Keeps `text` as the draft of `conversation`; an empty draft is forgotten.
pub fn save(person: &Person, conversation: Option<&str>, text: &str) {
    let Some(storage) = storage() else { return };
    let key = key(person, conversation);
    let _ = if text.is_empty() {
        storage.remove_item(&key)
    } else {
        storage.set_item(&key, text)
    };
}

/// Forgets every draft of `person`, who signed out.
pub fn forget(person: &Person) {
    let Some(storage) = storage() else { return };
    let prefix = key(person, Some(""));
    let keys: Vec<String> = (0..storage.length().unwrap_or(0))
        .filter_map(|at| storage.key(at).ok().flatten())
        .filter(|key| key.starts_with(&prefix) || *key == self::key(person, None))
        .collect();
    for key in keys {
        let _ = storage.remove_item(&key);
    }
}

fn key(person: &Person, conversation: Option<&str>) -> String {
    let owner = format!("portal-draft/{}/{}", person.organisation, person.user);
    match conversation {
        Some(id) => format!("{owner}/c/{id}"),
        None => format!("{owner}/new"),
    }
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.session_storage().ok().flatten()
}
