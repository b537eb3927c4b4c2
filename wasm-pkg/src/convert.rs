//! Every conversion between JavaScript values and portal-core types.

pub mod playout;
pub mod prompt;

use portal_core::TranscriptError;
use serde::Serialize;
use serde::de::DeserializeOwned;
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

/// A JavaScript `Error` named `InputError` for an argument that is not what the function takes;
/// `field` names the argument or the field of it that is wrong.
pub fn input_error(field: &str, message: &str) -> JsValue {
    let error = js_error("InputError", &format!("{field}: {message}"));
    let _ = js_sys::Reflect::set(&error, &JsValue::from_str("field"), &field.into());
    error
}

/// A plain JavaScript value as `T`, through JSON's data model, or an `InputError` naming `field`.
pub fn from_js<T: DeserializeOwned>(value: &JsValue, field: &str) -> Result<T, JsValue> {
    let json: serde_json::Value = serde_wasm_bindgen::from_value(value.clone())
        .map_err(|e| input_error(field, &e.to_string()))?;
    serde_json::from_value(json).map_err(|e| input_error(field, &e.to_string()))
}

/// A value as JavaScript would write it in a message: numbers and strings as themselves, other
/// values by their type.
pub fn describe(value: &JsValue) -> String {
    if let Some(number) = value.as_f64() {
        return js_sys::Number::from(number)
            .to_string_with_radix(10)
            .map(String::from)
            .unwrap_or_else(|_| number.to_string());
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
