//! `Playout`: live text revealed one whole grapheme cluster at a time, about a lag behind its
//! arrival (rules R3–R10).

use portal_core::playout;
use wasm_bindgen::prelude::*;

use crate::convert::playout::{self as convert, Utf16Tail};

#[wasm_bindgen(typescript_custom_section)]
const PLAYOUT_TYPES: &'static str = r#"
/**
 * The numbers a playout runs on. Every field is optional; a missing one takes the product's
 * default. Any other field, a value that is not a number, or a number that cannot work throws a
 * `PlayoutOptionsError` naming the option.
 */
export interface PlayoutOptions {
  /** How far behind its arrival each character appears, in milliseconds, zero or more (600). */
  lagMs?: number;
  /** The slowest speed while anything waits, in characters a second, above zero (40). */
  minCps?: number;
  /** The time constant with which the speed eases toward its target, in ms, zero or more (300). */
  easeMs?: number;
}
/** What one `Playout.tick` shows. "Character" means a whole grapheme cluster throughout. */
export interface PlayoutFrame {
  /** Whole characters visible after this tick, in total. */
  visibleClusters: number;
  /** The text newly revealed by this tick: append it to what is shown. `""` when none. */
  newText: string;
  /**
   * The UAX #29 word segments of `newText`, in order, spaces and punctuation included, so
   * `words.join("") === newText`. Wrap each in an element that resolves from a blur (R7). A word
   * cut by the frame's edge ends there and its rest opens the next frame's `words`.
   */
  words: string[];
  /** The caret breathes: more is coming (the stream has not finished, or text still waits). */
  caret: boolean;
  /** The stream finished and everything is shown: draw the reply as settled plain text (R10). */
  done: boolean;
  /**
   * When a tick can next reveal something, on the same clock as `nowMs`; `null` when there is
   * nothing to do until the next `push` or `finish` (or ever, once `done`).
   */
  nextWakeMs: number | null;
  /**
   * The UTF-16 length of the visible text (`visibleText().length`), so the caller can take the
   * visible prefix of its own copy of the reply with `reply.slice(0, visibleLength)`.
   */
  visibleLength: number;
}
/**
 * Thrown by `new Playout` for options that cannot drive a playout; `option` names the field. A
 * real subclass of `Error`: `error instanceof PlayoutOptionsError` holds.
 */
export class PlayoutOptionsError extends Error {
  name: "PlayoutOptionsError";
  option?: "lagMs" | "minCps" | "easeMs" | string;
}
"#;

/// A live reply's playout: feed it the reply as it streams and call `tick` once per animation
/// frame. It never reads a clock: every time is an argument in milliseconds on one clock of the
/// caller's choosing (`requestAnimationFrame`'s timestamp, `performance.now()`, or a virtual
/// clock in tests). Times that run backwards or are not finite count as the last time seen.
#[wasm_bindgen]
#[derive(Debug)]
pub struct Playout {
    inner: playout::Playout,
    /// A high surrogate that ended the last pushed string, waiting for its other half.
    utf16: Utf16Tail,
    /// The UTF-16 length of the visible text.
    visible_length: usize,
}

#[wasm_bindgen]
impl Playout {
    /// A playout with the product's numbers (600 ms lag, 40 characters a second floor, 300 ms
    /// easing), or with the given overrides. Throws a `PlayoutOptionsError` naming the option
    /// when one is unknown, not a number, or cannot work (negative, not finite, a zero floor).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_optional_param_type = "PlayoutOptions")] options: Option<JsValue>,
    ) -> Result<Playout, JsValue> {
        let config = convert::config(options.as_ref())?;
        let inner = playout::Playout::new(config).map_err(|e| convert::config_error(&e))?;
        Ok(Playout {
            inner,
            utf16: Utf16Tail::default(),
            visible_length: 0,
        })
    }

    /// A chunk of the reply arrived at `nowMs`. It may end anywhere, even between the two
    /// halves of a surrogate pair or inside a grapheme cluster: the unfinished character waits
    /// for the next chunk or for `finish`, and is never shown in part. Text pushed after
    /// `finish` is appended and plays out as whole characters at once.
    pub fn push(&mut self, text: &js_sys::JsString, #[wasm_bindgen(js_name = nowMs)] now_ms: f64) {
        let text = self.utf16.decode(text);
        self.inner.push(&text, now_ms);
    }

    /// Like `push` for raw UTF-8 bytes (a `fetch` body read without a `TextDecoder`): a chunk
    /// may also end inside a character's bytes. Invalid bytes show as U+FFFD.
    #[wasm_bindgen(js_name = pushBytes)]
    pub fn push_bytes(&mut self, bytes: &[u8], #[wasm_bindgen(js_name = nowMs)] now_ms: f64) {
        if let Some(lone) = self.utf16.flush() {
            self.inner.push(lone, now_ms);
        }
        self.inner.push_bytes(bytes, now_ms);
    }

    /// The stream ended at `nowMs`. The last character is now whole, and what still waits plays
    /// out at the eased speed (R9) until a frame reports `done`. A lone surrogate or incomplete
    /// UTF-8 left at the end shows as one U+FFFD.
    pub fn finish(&mut self, #[wasm_bindgen(js_name = nowMs)] now_ms: f64) {
        if let Some(lone) = self.utf16.flush() {
            self.inner.push(lone, now_ms);
        }
        self.inner.finish(now_ms);
    }

    /// A frame at `nowMs`: reveals the characters that are due and says what changed. Call it
    /// once per animation frame while `nextWakeMs` is not `null`, and again after a `push` or
    /// `finish`. A tick at or before the previous tick's time reveals nothing.
    #[wasm_bindgen(unchecked_return_type = "PlayoutFrame")]
    pub fn tick(
        &mut self,
        #[wasm_bindgen(js_name = nowMs)] now_ms: f64,
    ) -> Result<JsValue, JsValue> {
        let frame = self.inner.tick(now_ms);
        let text = self.inner.text();
        self.visible_length +=
            crate::convert::utf16_length(text.get(frame.revealed.clone()).unwrap_or_default());
        convert::frame(&frame, text, self.visible_length)
    }

    /// When a tick can next reveal something, on the caller's clock, or `null` while nothing
    /// waits (until the next `push` or `finish`, or for good once done).
    #[wasm_bindgen(js_name = nextWakeMs, unchecked_return_type = "number | null")]
    pub fn next_wake_ms(&self) -> JsValue {
        self.inner
            .next_wake_ms()
            .map_or(JsValue::NULL, JsValue::from)
    }

    /// The visible prefix of the reply: whole grapheme clusters only.
    #[wasm_bindgen(js_name = visibleText)]
    pub fn visible_text(&self) -> String {
        self.inner.visible().to_string()
    }
}
