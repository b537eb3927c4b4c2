//! Conversions for `ReplyView`: its options.

use wasm_bindgen::{JsCast, JsValue};

use super::{describe, input_error};

/// A `ReplyViewOptions` object read field by field.
#[derive(Default)]
pub struct ViewOptions {
    /// `reducedMotion`: `None` follows `prefers-reduced-motion`.
    pub reduced_motion: Option<bool>,
    /// `highlightCode`, called with the reply's element once it settled.
    pub highlight_code: Option<js_sys::Function>,
    /// `diagrams`: its languages (`["mermaid"]` unless given) and its `draw`.
    pub diagrams: Option<(Vec<String>, js_sys::Function)>,
}

/// The options' fields, named in the message for one that is not.
const FIELDS: &str = "the options are reducedMotion, highlightCode and diagrams";

/// Reads `ReplyViewOptions`: missing, `undefined` or `null` options are the defaults, as is a
/// field that is `undefined` (or, for the two functions' fields, `null`). Unknown fields and
/// values of the wrong type are refused with an `InputError` naming the field, so a misspelt
/// option is not silently ignored.
pub fn options(options: Option<&JsValue>) -> Result<ViewOptions, JsValue> {
    let mut read = ViewOptions::default();
    let Some(options) = options.filter(|o| !o.is_undefined() && !o.is_null()) else {
        return Ok(read);
    };
    for key in fields(options, "options", "{ reducedMotion: true }")? {
        let name = key.as_string().unwrap_or_default();
        let value = js_sys::Reflect::get(options, &key).unwrap_or(JsValue::UNDEFINED);
        let field = format!("options.{name}");
        if !["reducedMotion", "highlightCode", "diagrams"].contains(&name.as_str()) {
            return Err(input_error(
                &field,
                &format!("is not a ReplyView option; {FIELDS}"),
            ));
        }
        if value.is_undefined() || (value.is_null() && name != "reducedMotion") {
            continue;
        }
        match name.as_str() {
            "reducedMotion" => {
                read.reduced_motion = Some(value.as_bool().ok_or_else(|| {
                    input_error(
                        &field,
                        &format!("must be true or false, not {}", describe(&value)),
                    )
                })?);
            }
            "highlightCode" => {
                read.highlight_code = Some(function(
                    &field,
                    value,
                    "called with the reply's element once it settled, such as highlightCode \
                     from portal-wasm/highlight",
                )?);
            }
            _ => read.diagrams = Some(diagrams(&value)?),
        }
    }
    Ok(read)
}

/// `options.diagrams`: `{ languages?, draw }`.
fn diagrams(value: &JsValue) -> Result<(Vec<String>, js_sys::Function), JsValue> {
    let example = "{ languages: [\"mermaid\"], draw(element, source, language) { … } }";
    let mut languages = vec!["mermaid".to_string()];
    let mut draw = None;
    for key in fields(value, "options.diagrams", example)? {
        let name = key.as_string().unwrap_or_default();
        let field = format!("options.diagrams.{name}");
        if name != "languages" && name != "draw" {
            return Err(input_error(
                &field,
                "is not a diagrams option; they are languages and draw",
            ));
        }
        let value = js_sys::Reflect::get(value, &key).unwrap_or(JsValue::UNDEFINED);
        if value.is_undefined() {
            continue;
        }
        if name == "languages" {
            languages = names(&field, &value)?;
        } else {
            draw = Some(function(
                &field,
                value,
                "draw(element, source, language), drawing a diagram into the element",
            )?);
        }
    }
    let draw = draw.ok_or_else(|| {
        input_error(
            "options.diagrams.draw",
            "is missing: give the function that draws a diagram, draw(element, source, language)",
        )
    })?;
    Ok((languages, draw))
}

/// `options.diagrams.languages`: an array of strings.
fn names(field: &str, value: &JsValue) -> Result<Vec<String>, JsValue> {
    if !js_sys::Array::is_array(value) {
        return Err(input_error(
            field,
            &format!(
                "must be an array of language names such as [\"mermaid\"], not {}",
                describe(value)
            ),
        ));
    }
    let array: &js_sys::Array = value.unchecked_ref();
    let mut names = Vec::new();
    for index in 0..array.length() {
        let name = array.get(index);
        let Some(name) = name.as_string() else {
            return Err(input_error(
                &format!("{field}[{index}]"),
                &format!(
                    "must be a language name (a string) such as \"mermaid\", not {}",
                    describe(&name)
                ),
            ));
        };
        names.push(name);
    }
    Ok(names)
}

/// A plain object's own fields' names; anything else is refused, with an example of what is
/// wanted.
fn fields(value: &JsValue, field: &str, example: &str) -> Result<js_sys::Array, JsValue> {
    if !value.is_object() || js_sys::Array::is_array(value) || value.is_function() {
        return Err(input_error(
            field,
            &format!(
                "must be an object such as {example}, not {}",
                describe(value)
            ),
        ));
    }
    Ok(js_sys::Object::keys(
        value.unchecked_ref::<js_sys::Object>(),
    ))
}

/// A function, or an error saying what the field's function is for.
fn function(field: &str, value: JsValue, what: &str) -> Result<js_sys::Function, JsValue> {
    value.dyn_into().map_err(|value| {
        input_error(
            field,
            &format!("must be a function {what}, not {}", describe(&value)),
        )
    })
}
