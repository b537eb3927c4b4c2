//! The light and dark themes: the system's preference (`prefers-color-scheme`) until the person
//! picks one with the header's toggle, which the browser then remembers (`localStorage`). The
//! colours themselves are style.css's, chosen by `color-scheme` on the root element.

use crate::icon::Icon;
use leptos::prelude::*;

/// Where the person's choice is kept.
const KEY: &str = "portal-theme";

/// Puts the person's remembered theme on the page, before anything is drawn.
pub fn apply_saved() {
    apply(saved());
}

/// A button switching between the light and the dark theme, pressed while the page is dark.
#[component]
pub fn ThemeToggle() -> impl IntoView {
    let dark = RwSignal::new(saved().unwrap_or_else(system_dark));
    let toggle = move |_| {
        let now_dark = !dark.get_untracked();
        dark.set(now_dark);
        if let Some(storage) = storage() {
            let _ = storage.set_item(KEY, if now_dark { "dark" } else { "light" });
        }
        apply(Some(now_dark));
    };
    view! {
        <button
            type="button"
            class="theme-toggle"
            aria-pressed=move || dark.get().to_string()
            title="Dark theme"
            data-testid="theme-toggle"
            on:click=toggle
        >
            <Icon path="M15.5 12.5A6 6 0 0 1 7.5 4.5a6 6 0 1 0 8 8z" />
            <span class="visually-hidden">"Dark theme"</span>
        </button>
    }
}

/// The remembered choice: `Some(true)` for dark, `None` when the person never chose.
fn saved() -> Option<bool> {
    match storage()?.get_item(KEY).ok()??.as_str() {
        "dark" => Some(true),
        "light" => Some(false),
        _ => None,
    }
}

/// Marks the page light or dark, or leaves it to the system's preference.
fn apply(dark: Option<bool>) {
    let Some(root) = document().document_element() else {
        return;
    };
    let _ = match dark {
        Some(true) => root.set_attribute("data-theme", "dark"),
        Some(false) => root.set_attribute("data-theme", "light"),
        None => root.remove_attribute("data-theme"),
    };
}

fn system_dark() -> bool {
    web_sys::window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .is_some_and(|query| query.matches())
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}
