//! The page a drawer draws into: its document, new elements in it, its clock, and whether the
//! reader asked for reduced motion.

use web_sys::{Document, Element};

/// The page's document.
pub fn document() -> Document {
    web_sys::window()
        .and_then(|w| w.document())
        .expect("a drawer runs in a page with a document")
}

/// A new, empty element of `tag`.
pub fn element(document: &Document, tag: &str) -> Element {
    document
        .create_element(tag)
        .expect("creating a plain HTML element succeeds")
}

/// The milliseconds since the page opened, the clock requestAnimationFrame stamps frames by.
pub fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// Whether the reader asked for reduced motion (`prefers-reduced-motion: reduce`).
pub fn prefers_reduced_motion() -> bool {
    web_sys::window()
        .and_then(|w| {
            w.match_media("(prefers-reduced-motion: reduce)")
                .ok()
                .flatten()
        })
        .is_some_and(|query| query.matches())
}
