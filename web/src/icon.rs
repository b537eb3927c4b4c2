//! The page's line icons: one path in a 20 by 20 box, drawn in the text's colour, hidden from
//! assistive technology (the button around it is named in words). Their size and stroke are the
//! style sheet's (`.icon-line`).

use leptos::prelude::*;

/// An icon drawing `path`.
#[component]
pub fn Icon(path: &'static str) -> impl IntoView {
    view! {
        <svg class="icon-line" viewBox="0 0 20 20" aria-hidden="true">
            <path d=path />
        </svg>
    }
}
