//! Portal's browser UI.
//!
//! Architecture invariant: the UI holds no logic that core could hold; it turns browser events and
//! animation-frame timestamps into calls on portal-core and draws what core answers.

mod api;
mod app;
mod bench;
mod block;
mod compaction;
mod composer;
mod controls;
mod conversation_link;
mod conversation_list;
mod delete_dialog;
mod drafts;
mod header;
mod live;
mod relative_time;
mod route;
mod session;
mod sidebar;
mod sign_in;
mod sign_in_page;
mod state;
mod stream;
mod turn;
mod turn_view;
mod unknown_conversation;

fn main() {
    console_error_panic_hook_lite();
    match bench::rate_in_url() {
        Some(cps) => leptos::mount::mount_to_body(move || leptos::view! { <bench::Bench cps /> }),
        None => leptos::mount::mount_to_body(app::App),
    }
}

/// Sends Rust panics to the browser console instead of an opaque `unreachable` trap.
fn console_error_panic_hook_lite() {
    std::panic::set_hook(Box::new(|info| {
        web_sys::console::error_1(&info.to_string().into());
    }));
}
