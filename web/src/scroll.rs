//! Following the reply: while the reader is at the bottom of the page, the page stays there as
//! the conversation grows; scrolling up stops that; "Jump to latest" shows while new content
//! lands below, and brings the reader back to the end, following again.
//!
//! The conversation's growth is noticed by a `ResizeObserver`, which the browser calls after
//! layout when the conversation's height changed (a new line, a new block), never per frame of
//! the playout, so the live text path does no more work than before.

use crate::icon::Icon;
use leptos::ev;
use leptos::html;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

/// How close to the bottom, in CSS pixels, still counts as at the bottom.
const AT_BOTTOM_PX: f64 = 32.0;

/// Whether the page follows the conversation's end, and whether something landed below while it
/// did not.
#[derive(Debug, Clone, Copy)]
pub struct Follow {
    pub following: RwSignal<bool>,
    pub unseen: RwSignal<bool>,
}

impl Follow {
    pub fn new() -> Self {
        Follow {
            following: RwSignal::new(true),
            unseen: RwSignal::new(false),
        }
    }

    /// Shows the conversation's end once it is drawn, and follows it from there.
    pub fn to_end(self) {
        self.following.set(true);
        self.unseen.set(false);
        request_animation_frame(scroll_to_end);
    }
}

/// Keeps the page at the conversation's end while it follows, and offers "Jump to latest" while
/// it does not and more arrived below. `conversation` is the element the turns are drawn in.
#[component]
pub fn FollowReply(follow: Follow, conversation: NodeRef<html::Section>) -> impl IntoView {
    let last_y = StoredValue::new(scroll_y());
    let scroll = window_event_listener(ev::scroll, move |_| {
        let y = scroll_y();
        if at_bottom() {
            follow.following.set(true);
            follow.unseen.set(false);
        } else if y < last_y.get_value() {
            // The reader scrolled up: the page no longer pulls them down.
            follow.following.set(false);
        }
        last_y.set_value(y);
    });
    // A wheel or a key turned upward stops following before the page has even moved, so growth
    // arriving in the same frame does not pull the reader back.
    let wheel = window_event_listener(ev::wheel, move |ev| {
        if ev.delta_y() < 0.0 && scroll_y() > 0.0 {
            follow.following.set(false);
        }
    });
    let keys = window_event_listener(ev::keydown, move |ev| {
        if matches!(ev.key().as_str(), "PageUp" | "Home") && !typing(&ev) {
            follow.following.set(false);
        }
    });
    let last_height = StoredValue::new(0.0_f64);
    let grew = Closure::<dyn FnMut()>::new(move || {
        let height = scroll_height();
        let taller = height > last_height.get_value();
        last_height.set_value(height);
        if follow.following.get_untracked() {
            scroll_to_end();
        } else if taller {
            follow.unseen.set(true);
        }
    });
    let observer = web_sys::ResizeObserver::new(grew.as_ref().unchecked_ref()).ok();
    let watched = observer.clone();
    Effect::new(move || {
        if let (Some(section), Some(observer)) = (conversation.get(), watched.as_ref()) {
            observer.observe(&section);
        }
    });
    let kept = StoredValue::new_local((grew, observer));
    on_cleanup(move || {
        scroll.remove();
        wheel.remove();
        keys.remove();
        kept.with_value(|(_, observer)| {
            if let Some(observer) = observer {
                observer.disconnect();
            }
        });
    });
    move || {
        (follow.unseen.get() && !follow.following.get()).then(|| {
            view! {
                <button type="button" class="jump-to-latest" data-testid="jump-to-latest" on:click=move |_| follow.to_end()>
                    <Icon path="M10 4v11M5 10l5 5 5-5" />
                    "Jump to latest"
                </button>
            }
        })
    }
}

/// Scrolls an element that needs the person into view, and gives it the focus.
pub fn bring_to(element: &web_sys::HtmlElement) {
    let options = web_sys::ScrollIntoViewOptions::new();
    options.set_block(web_sys::ScrollLogicalPosition::Nearest);
    element.scroll_into_view_with_scroll_into_view_options(&options);
    let focus = web_sys::FocusOptions::new();
    focus.set_prevent_scroll(true);
    let _ = element.focus_with_options(&focus);
}

/// Whether a key went to a text field, where Home and PageUp move the cursor, not the page.
fn typing(ev: &web_sys::KeyboardEvent) -> bool {
    ev.target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|e| matches!(e.tag_name().as_str(), "TEXTAREA" | "INPUT" | "SELECT"))
}

fn scroll_to_end() {
    if let Some(window) = web_sys::window() {
        window.scroll_to_with_x_and_y(0.0, scroll_height());
    }
}

fn at_bottom() -> bool {
    let viewport = web_sys::window()
        .and_then(|w| w.inner_height().ok())
        .and_then(|h| h.as_f64())
        .unwrap_or(0.0);
    scroll_y() + viewport >= scroll_height() - AT_BOTTOM_PX
}

fn scroll_y() -> f64 {
    web_sys::window()
        .and_then(|w| w.scroll_y().ok())
        .unwrap_or(0.0)
}

fn scroll_height() -> f64 {
    web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
        .map_or(0.0, |e| f64::from(e.scroll_height()))
}
