//! Portal's browser UI.
//!
//! Architecture invariant: the UI holds no logic that core could hold; it turns browser events and
//! animation-frame timestamps into calls on portal-core and draws what core answers.

mod activity;
mod api;
mod app;
mod attach;
mod attachment_chip;
mod bench;
mod block;
mod chip;
mod compaction;
mod composer;
mod controls;
mod conversation_link;
mod conversation_list;
mod decision;
mod delete_dialog;
mod drafts;
mod drop_zone;
mod edit_bar;
mod editing;
mod exchange;
mod focus;
mod greeting;
mod header;
mod highlight;
mod icon;
mod inspector;
mod keys;
mod knowledge;
mod listing;
mod opening;
mod projects;
mod relative_time;
mod request;
mod route;
mod scroll;
mod session;
mod share;
mod shared_page;
mod sidebar;
mod sign_in;
mod sign_in_page;
mod sources;
mod state;
mod stream;
mod tabs;
mod theme;
mod tool_card;
mod turn;
mod turn_actions;
mod turn_failure;
mod turn_view;
mod unknown_conversation;
mod version_switch;
mod versions;
mod wait;
mod waiting;

fn main() {
    console_error_panic_hook_lite();
    match bench::run_in_url() {
        Some(run) => leptos::mount::mount_to_body(move || leptos::view! { <bench::Bench run /> }),
        None => {
            theme::apply_saved();
            leptos::mount::mount_to_body(app::App)
        }
    }
    // After the page's first tasks, before any reply can have started.
    leptos::prelude::set_timeout(portal_drawer::warm_up, std::time::Duration::ZERO);
}

/// Sends Rust panics to the browser console instead of an opaque `unreachable` trap.
fn console_error_panic_hook_lite() {
    std::panic::set_hook(Box::new(|info| {
        web_sys::console::error_1(&info.to_string().into());
    }));
}
