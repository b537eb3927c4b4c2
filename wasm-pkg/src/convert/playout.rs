//! Conversions for `Playout`: its options, its frames and the UTF-16 text it is fed.

use portal_core::playout::{Frame, PlayoutConfig, PlayoutConfigError};
use serde::Serialize;
use wasm_bindgen::{JsCast, JsValue};

use super::{describe, to_js};
use crate::errors;

/// The `PlayoutOptions` object as a configuration: missing fields (and `undefined` or `null`
/// options) take the defaults. Unknown fields and values that are not numbers are refused, so a
/// misspelt option is not silently ignored.
pub fn config(options: Option<&JsValue>) -> Result<PlayoutConfig, JsValue> {
    let mut config = PlayoutConfig::default();
    let Some(options) = options.filter(|o| !o.is_undefined() && !o.is_null()) else {
        return Ok(config);
    };
    if !options.is_object() || js_sys::Array::is_array(options) {
        return Err(playout_options_error(
            None,
            &format!(
                "Playout options must be an object such as {{ lagMs: 600 }}, not {}",
                describe(options)
            ),
        ));
    }
    let object: &js_sys::Object = options.unchecked_ref();
    for key in js_sys::Object::keys(object).iter() {
        let name = key.as_string().unwrap_or_default();
        let field = match name.as_str() {
            "lagMs" => &mut config.lag_ms,
            "minCps" => &mut config.min_cps,
            "easeMs" => &mut config.ease_ms,
            _ => {
                return Err(playout_options_error(
                    Some(&name),
                    &format!(
                        "unknown Playout option {name:?}; the options are lagMs, minCps and easeMs"
                    ),
                ));
            }
        };
        let value = js_sys::Reflect::get(options, &key).unwrap_or(JsValue::UNDEFINED);
        if value.is_undefined() {
            continue;
        }
        *field = value.as_f64().ok_or_else(|| {
            playout_options_error(
                Some(&name),
                &format!(
                    "Playout option {name} is {}; give a number",
                    describe(&value)
                ),
            )
        })?;
    }
    Ok(config)
}

/// A configuration core refused, as a `PlayoutOptionsError` naming the option in its JavaScript
/// spelling.
pub fn config_error(error: &PlayoutConfigError) -> JsValue {
    let (option, value, wanted) = match error {
        PlayoutConfigError::Lag(value) => (
            "lagMs",
            *value,
            "a finite number of milliseconds, zero or more",
        ),
        PlayoutConfigError::MinCps(value) => (
            "minCps",
            *value,
            "a finite number of characters a second above zero",
        ),
        PlayoutConfigError::Ease(value) => (
            "easeMs",
            *value,
            "a finite number of milliseconds, zero or more",
        ),
        // Not reachable from JavaScript, whose options leave the frame growth at core's default.
        // Written here rather than by core's message, which would bring Rust's float formatting.
        PlayoutConfigError::FrameGrowth { factor, extra } => {
            return playout_options_error(
                None,
                &format!("the playout's frame growth ({factor}x plus {extra}) cannot work"),
            );
        }
    };
    playout_options_error(
        Some(option),
        &format!(
            "Playout option {option} is {}; give {wanted}",
            describe(&JsValue::from_f64(value))
        ),
    )
}

/// A playout frame as a `PlayoutFrame` object, its byte ranges turned into the strings they
/// cover in `text`.
pub fn frame(frame: &Frame, text: &str, visible_length: usize) -> Result<JsValue, JsValue> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct PlayoutFrame<'a> {
        visible_clusters: usize,
        new_text: &'a str,
        words: Vec<&'a str>,
        caret: bool,
        done: bool,
        next_wake_ms: Option<f64>,
        visible_length: usize,
    }
    let slice = |range: &std::ops::Range<usize>| text.get(range.clone()).unwrap_or_default();
    to_js(&PlayoutFrame {
        visible_clusters: frame.visible_clusters,
        new_text: slice(&frame.revealed),
        words: frame.words.iter().map(slice).collect(),
        caret: frame.caret,
        done: frame.done,
        next_wake_ms: frame.next_wake_ms,
        visible_length,
    })
}

/// JavaScript strings as Rust text, one chunk after another: a chunk may end between the two
/// halves of a surrogate pair, whose first half then waits for the next chunk.
#[derive(Debug, Default)]
pub struct Utf16Tail {
    high_surrogate: Option<u16>,
}

impl Utf16Tail {
    /// The text of `chunk`, completed by a waiting half from the previous chunk; a trailing high
    /// surrogate is kept back. Lone surrogates elsewhere become U+FFFD.
    pub fn decode(&mut self, chunk: &js_sys::JsString) -> String {
        let length = chunk.length();
        let unit = |index: u32| chunk.char_code_at(index) as u16;
        let mut text = String::new();
        let mut start = 0;
        if let Some(high) = self.high_surrogate.take() {
            let first = if length > 0 { Some(unit(0)) } else { None };
            match first {
                Some(low) if (0xDC00..0xE000).contains(&low) => {
                    text.extend(char::decode_utf16([high, low]).map(|c| c.unwrap_or('\u{FFFD}')));
                    start = 1;
                }
                Some(_) => text.push('\u{FFFD}'),
                None => {
                    self.high_surrogate = Some(high);
                    return text;
                }
            }
        }
        let mut end = length;
        if end > start && (0xD800..0xDC00).contains(&unit(end - 1)) {
            self.high_surrogate = Some(unit(end - 1));
            end -= 1;
        }
        if end > start {
            text.push_str(&String::from(chunk.slice(start, end)));
        }
        text
    }

    /// The waiting half, if any, as U+FFFD: the text ended without its other half.
    pub fn flush(&mut self) -> Option<&'static str> {
        self.high_surrogate.take().map(|_| "\u{FFFD}")
    }
}

/// A `PlayoutOptionsError`, with the option it is about when there is one.
fn playout_options_error(option: Option<&str>, message: &str) -> JsValue {
    let error = errors::playout_options(message);
    if let Some(option) = option {
        let _ = js_sys::Reflect::set(&error, &JsValue::from_str("option"), &option.into());
    }
    error.into()
}
