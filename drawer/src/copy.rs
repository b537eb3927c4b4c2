//! A code block's Copy button, drawn with the block (`describe.rs`): whoever draws a reply gets
//! a button that copies its code. The listener is `js/copy.js`.

use wasm_bindgen::prelude::wasm_bindgen;
use web_sys::Element;

#[wasm_bindgen(module = "/js/copy.js")]
extern "C" {
    /// Makes the Copy buttons drawn under `body` copy their code.
    #[wasm_bindgen(js_name = listenForCopy)]
    pub fn listen(body: &Element);
}
