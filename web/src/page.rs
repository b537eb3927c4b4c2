//! The page the portal runs in: its document, new elements in it, and its clock.

use web_sys::{Document, Element};

/// The page's document.
pub fn document() -> Document {
    web_sys::window()
        .and_then(|w| w.document())
        .expect("the portal runs in a page with a document")
}

/// A new, empty element of `tag`.
pub fn element(document: &Document, tag: &str) -> Element {
    document
        .create_element(tag)
        .expect("creating a plain HTML element succeeds")
}

/// The milliseconds since the page opened: the clock the playout, the divider's elapsed time and
/// the silence note are read from.
pub fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}
