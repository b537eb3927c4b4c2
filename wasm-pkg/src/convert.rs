//! Every conversion between JavaScript values and portal-core types. The `prompt` feature's
//! exports (validateTranscript, parseCommand, rebuildMemory, buildPrompt) read objects field by
//! field (`fields`) and convert in `prompt`; `Playout` converts in `playout`; the `markdown`
//! feature's exports (StreamingMarkdown, renderMarkdown) convert in `markdown`, and ReplyView in
//! `reply_view`.
//!
//! Values cross the boundary as JSON text: `JSON.stringify` on the way in, `JSON.parse` on the
//! way out, with serde_json on the Rust side. The transcript needs serde_json's reader anyway,
//! and a second way of converting (serde-wasm-bindgen) cost some 6.5 KB gzipped.

#[cfg(feature = "prompt")]
mod fields;
#[cfg(feature = "markdown")]
pub mod markdown;
pub mod playout;
#[cfg(feature = "prompt")]
pub mod prompt;
#[cfg(feature = "reply-view")]
pub mod reply_view;

#[cfg(feature = "prompt")]
pub use fields::{FieldError, from_object, object_fields};

use serde::Serialize;
use wasm_bindgen::JsValue;

/// Turns a Rust value into a plain JavaScript value (objects, not maps), through its JSON text.
pub fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, JsValue> {
    let text = serde_json::to_string(value).map_err(|e| {
        // Only a bug gets here (every value the package returns is plain data), so this one is
        // a plain `Error`, not one of the classes callers tell apart.
        let error = js_sys::Error::new(&e.to_string());
        error.set_name("SerializeError");
        JsValue::from(error)
    })?;
    js_sys::JSON::parse(&text)
}

/// A JavaScript `Error` named `InputError` for an argument that is not what the function takes;
/// `field` names the argument or the field of it that is wrong.
#[cfg(any(feature = "prompt", feature = "markdown"))]
pub fn input_error(field: &str, message: &str) -> JsValue {
    let error = crate::errors::input(&format!("{field}: {message}"));
    let _ = js_sys::Reflect::set(&error, &JsValue::from_str("field"), &field.into());
    error.into()
}

/// How many UTF-16 code units `text` takes in JavaScript.
pub fn utf16_length(text: &str) -> usize {
    text.chars().map(char::len_utf16).sum()
}

/// A value as JavaScript would write it in a message: numbers and strings as themselves, other
/// values by their type. Numbers are written by JavaScript, which keeps Rust's float formatting
/// out of the playout-only package (some 10 KB gzipped).
pub fn describe(value: &JsValue) -> String {
    if let Some(number) = value.as_f64() {
        return js_sys::Number::from(number)
            .to_string_with_radix(10)
            .map_or_else(|_| "a number".to_string(), String::from);
    }
    if let Some(text) = value.as_string() {
        return format!("{text:?}");
    }
    if value.is_null() {
        return "null".to_string();
    }
    if js_sys::Array::is_array(value) {
        return "an array".to_string();
    }
    format!(
        "a value of type {}",
        value.js_typeof().as_string().unwrap_or_default()
    )
}
