//! Every conversion between JavaScript values and portal-core types.

use portal_core::TranscriptError;
use serde::Serialize;
use wasm_bindgen::JsValue;

/// Turns a Rust value into a plain JavaScript value (objects, not maps).
pub fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, JsValue> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| js_error("SerializeError", &e.to_string()))
}

/// A JavaScript `Error` with the given name and message.
pub fn js_error(name: &str, message: &str) -> JsValue {
    let error = js_sys::Error::new(message);
    error.set_name(name);
    error.into()
}

/// A `TranscriptError` as a JavaScript `Error` named `TranscriptError`, carrying the invariant's
/// name and the `location` (1-based turn, message and block) where the transcript broke it.
pub fn transcript_error(error: &TranscriptError) -> JsValue {
    let js = js_error("TranscriptError", &error.to_string());
    let set = |key: &str, value: JsValue| {
        let _ = js_sys::Reflect::set(&js, &JsValue::from_str(key), &value);
    };
    match error {
        TranscriptError::Invariant {
            location,
            invariant,
            ..
        } => {
            set("invariant", JsValue::from_str(invariant.name()));
            set("location", location_object(location));
        }
        TranscriptError::Structure { location, .. } => set("location", location_object(location)),
        TranscriptError::Json { line, column, .. } => {
            set("line", JsValue::from(*line as u32));
            set("column", JsValue::from(*column as u32));
        }
        TranscriptError::Version { .. } => {}
    }
    js
}

/// A location as `{ turn, message?, block? }`, all 1-based.
fn location_object(location: &portal_core::Location) -> JsValue {
    let object = js_sys::Object::new();
    let set = |key: &str, value: JsValue| {
        let _ = js_sys::Reflect::set(&object, &JsValue::from_str(key), &value);
    };
    set("turn", JsValue::from(location.turn));
    if let Some(message) = location.message {
        set("message", JsValue::from(message as u32));
    }
    if let Some(block) = location.block {
        set("block", JsValue::from(block as u32));
    }
    object.into()
}
