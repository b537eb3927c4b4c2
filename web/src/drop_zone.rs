//! Files dragged over the conversation page: while they are over it the page shows where they
//! go, and dropped anywhere on it they are attached the way the Attach button attaches them.

use leptos::prelude::*;

use crate::attach::{attach, files_of};
use crate::state::Portal;

/// Whether files are being dragged over the page. Every element the drag enters counts, and a
/// leave from it counts down, so moving between the page's own elements never hides the target.
#[derive(Debug, Clone, Copy)]
pub struct DropZone {
    entered: RwSignal<u32>,
}

impl DropZone {
    pub fn new() -> Self {
        DropZone {
            entered: RwSignal::new(0),
        }
    }

    pub fn dragging(&self) -> bool {
        self.entered.get() > 0
    }

    pub fn enter(&self, ev: &web_sys::DragEvent) {
        if carries_files(ev) {
            ev.prevent_default();
            self.entered.update(|n| *n += 1);
        }
    }

    /// Lets the files be dropped here, as a copy.
    pub fn over(&self, ev: &web_sys::DragEvent) {
        if carries_files(ev) {
            ev.prevent_default();
            if let Some(data) = ev.data_transfer() {
                data.set_drop_effect("copy");
            }
        }
    }

    pub fn leave(&self, ev: &web_sys::DragEvent) {
        if carries_files(ev) {
            self.entered.update(|n| *n = n.saturating_sub(1));
        }
    }

    /// Attaches the dropped files instead of letting the browser open them.
    pub fn drop(&self, portal: Portal, ev: &web_sys::DragEvent) {
        self.entered.set(0);
        if carries_files(ev) {
            ev.prevent_default();
            attach(portal, files_of(ev.data_transfer().and_then(|d| d.files())));
        }
    }
}

/// Whether a drag carries files, rather than text or a link dragged within the page.
fn carries_files(ev: &web_sys::DragEvent) -> bool {
    ev.data_transfer()
        .is_some_and(|data| data.types().includes(&"Files".into(), 0))
}

/// The target shown over the page while files are dragged over it.
#[component]
pub fn DropTarget(zone: DropZone) -> impl IntoView {
    move || {
        zone.dragging().then(|| {
            view! {
                <div class="drop-target" data-testid="drop-target">
                    <p>"Drop files to attach them to your message"</p>
                </div>
            }
        })
    }
}
