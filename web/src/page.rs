//! The page the portal runs in: its document and its clock.

use web_sys::Document;

/// The page's document.
pub fn document() -> Document {
    web_sys::window()
        .and_then(|w| w.document())
        .expect("the portal runs in a page with a document")
}

/// The milliseconds since the page opened: the clock the playout, the divider's elapsed time and
/// the silence note are read from.
pub fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}
