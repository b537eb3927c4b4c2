//! Conversions for `ReplyView`: its options.

use wasm_bindgen::{JsCast, JsValue};

use super::{describe, input_error};

/// The `ReplyViewOptions` object's `reducedMotion`: `None` (follow `prefers-reduced-motion`) when
/// it or the options are missing, `undefined` or `null`. Unknown fields and values that are not
/// booleans are refused with an `InputError` naming the field, so a misspelt option is not
/// silently ignored.
pub fn reduced_motion(options: Option<&JsValue>) -> Result<Option<bool>, JsValue> {
    let Some(options) = options.filter(|o| !o.is_undefined() && !o.is_null()) else {
        return Ok(None);
    };
    if !options.is_object() || js_sys::Array::is_array(options) {
        return Err(input_error(
            "options",
            &format!(
                "must be an object such as {{ reducedMotion: true }}, not {}",
                describe(options)
            ),
        ));
    }
    let mut reduced_motion = None;
    let object: &js_sys::Object = options.unchecked_ref();
    for key in js_sys::Object::keys(object).iter() {
        let name = key.as_string().unwrap_or_default();
        let field = format!("options.{name}");
        if name != "reducedMotion" {
            return Err(input_error(
                &field,
                "is not a ReplyView option; the one option is reducedMotion",
            ));
        }
        let value = js_sys::Reflect::get(options, &key).unwrap_or(JsValue::UNDEFINED);
        if value.is_undefined() {
            continue;
        }
        reduced_motion = Some(value.as_bool().ok_or_else(|| {
            input_error(
                &field,
                &format!("must be true or false, not {}", describe(&value)),
            )
        })?);
    }
    Ok(reduced_motion)
}
