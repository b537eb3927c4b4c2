//! Code blocks coloured by their language once their reply settled, never while it plays out:
//! `highlight.js` loads the highlighter (web/highlight/, outside the app's bundle and its size
//! budget) on first need, and colours by naming ranges of the code's text (CSS Custom Highlight
//! API), so the settled reply's DOM stays what a reloaded reply draws (R10).

use std::rc::Rc;

use portal_drawer::Options;
use wasm_bindgen::prelude::wasm_bindgen;
use web_sys::Element;

/// How the app draws replies: motion as the reader's settings ask, code coloured once settled.
pub fn drawing() -> Options {
    Options {
        reduced_motion: None,
        on_code: Some(Rc::new(highlight_code)),
        ..Options::default()
    }
}

#[wasm_bindgen(module = "/src/highlight.js")]
extern "C" {
    /// Colours the code blocks under `root` whose language the highlighter knows.
    #[wasm_bindgen(js_name = highlightCode)]
    pub fn highlight_code(root: &Element);
}
