//! The error classes JavaScript catches. `js/errors.js` defines them as real subclasses of
//! `Error`; the package re-exports them, so `error instanceof TranscriptError` holds. Each one's
//! TypeScript declaration stands beside the export that throws it, and `convert` fills in the
//! fields it carries.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/js/errors.js")]
extern "C" {
    /// A new `PlayoutOptionsError` saying `message`.
    #[wasm_bindgen(js_name = PlayoutOptionsError, reexport, skip_typescript)]
    pub fn playout_options(message: &str) -> js_sys::Error;
}

#[cfg(any(feature = "prompt", feature = "markdown"))]
#[wasm_bindgen(module = "/js/errors.js")]
extern "C" {
    /// A new `InputError` saying `message`.
    #[wasm_bindgen(js_name = InputError, reexport, skip_typescript)]
    pub fn input(message: &str) -> js_sys::Error;
}

#[cfg(feature = "prompt")]
#[wasm_bindgen(module = "/js/errors.js")]
extern "C" {
    /// A new `TranscriptError` saying `message`.
    #[wasm_bindgen(js_name = TranscriptError, reexport, skip_typescript)]
    pub fn transcript(message: &str) -> js_sys::Error;

    /// A new `AttachmentError` saying `message`.
    #[wasm_bindgen(js_name = AttachmentError, reexport, skip_typescript)]
    pub fn attachment(message: &str) -> js_sys::Error;
}
