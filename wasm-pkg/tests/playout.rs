//! `Playout` in the browser on a virtual clock (rules R3, R6, R9). Nothing here sleeps: every
//! time is an argument.
#![cfg(target_arch = "wasm32")]

use portal_wasm::Playout;
use serde::Deserialize;
use unicode_segmentation::UnicodeSegmentation;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// A `PlayoutFrame` as JavaScript receives it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PlayoutFrame {
    visible_clusters: usize,
    new_text: String,
    words: Vec<String>,
    caret: bool,
    done: bool,
    next_wake_ms: Option<f64>,
    visible_length: usize,
}

/// One chunk of a stream, as text (UTF-16 units, so a chunk may end inside a surrogate pair)
/// or as UTF-8 bytes.
enum Chunk {
    Text(Vec<u16>),
    Bytes(Vec<u8>),
}

/// What a stream showed: each tick's time and frame, and the visible text after it.
struct Run {
    frames: Vec<(f64, PlayoutFrame, String)>,
}

/// Drives `playout` on a virtual clock: `chunks` at their times, `finish` at `finish_ms`, a tick
/// every `frame_ms` until the frame that is done (or `until_ms`). Every frame is checked against
/// `text`, the whole reply: it shows whole clusters only, its words cover its new text, and its
/// lengths match what JavaScript would count.
fn drive(
    playout: &mut Playout,
    text: &str,
    chunks: Vec<(f64, Chunk)>,
    finish_ms: Option<f64>,
    frame_ms: f64,
    until_ms: f64,
) -> Run {
    let boundaries: Vec<usize> = text
        .grapheme_indices(true)
        .map(|(at, _)| at)
        .chain([text.len()])
        .collect();
    let mut chunks = chunks.into_iter().peekable();
    let mut finish_ms = finish_ms;
    let mut shown = String::new();
    let mut frames = Vec::new();
    let mut now = 0.0;
    while now <= until_ms {
        while let Some((_, chunk)) = chunks.next_if(|(at, _)| *at <= now) {
            match chunk {
                Chunk::Text(units) => playout.push(&js_sys::JsString::from_char_code(&units), now),
                Chunk::Bytes(bytes) => playout.push_bytes(&bytes, now),
            }
        }
        if finish_ms.is_some_and(|at| at <= now) {
            playout.finish(now);
            finish_ms = None;
        }
        let frame: PlayoutFrame = serde_wasm_bindgen::from_value(playout.tick(now).expect("frame"))
            .expect("a PlayoutFrame");
        let visible = playout.visible_text();
        shown.push_str(&frame.new_text);
        assert_eq!(
            shown, visible,
            "new text appends to what is shown at {now} ms"
        );
        assert!(
            text.starts_with(&visible),
            "{visible:?} is a prefix of the reply"
        );
        assert!(
            boundaries.contains(&visible.len()),
            "at {now} ms the visible text {visible:?} ends inside a cluster"
        );
        assert_eq!(
            frame.words.concat(),
            frame.new_text,
            "words cover the new text"
        );
        assert!(frame.words.iter().all(|w| !w.is_empty()));
        assert_eq!(frame.visible_clusters, visible.graphemes(true).count());
        assert_eq!(
            frame.visible_length,
            js_sys::JsString::from(visible.as_str()).length() as usize
        );
        assert_eq!(frame.caret, !frame.done);
        let done = frame.done;
        frames.push((now, frame, visible));
        if done {
            break;
        }
        now += frame_ms;
    }
    Run { frames }
}

fn utf16(text: &str) -> Vec<u16> {
    text.encode_utf16().collect()
}

fn new_playout(options: Option<JsValue>) -> Playout {
    Playout::new(options).expect("valid options")
}

/// An object from `(key, value)` pairs.
fn object(fields: &[(&str, JsValue)]) -> JsValue {
    let object = js_sys::Object::new();
    for (key, value) in fields {
        js_sys::Reflect::set(&object, &JsValue::from_str(key), value).expect("settable");
    }
    object.into()
}

/// Steady streaming: `text` in chunks of `chunk_chars` every `every_ms`, then finish.
fn steady(text: &str, chunk_chars: usize, every_ms: f64) -> (Vec<(f64, Chunk)>, f64) {
    let chars: Vec<char> = text.chars().collect();
    let chunks: Vec<(f64, Chunk)> = chars
        .chunks(chunk_chars)
        .enumerate()
        .map(|(i, c)| {
            (
                i as f64 * every_ms,
                Chunk::Text(utf16(&c.iter().collect::<String>())),
            )
        })
        .collect();
    let finish = chunks.len() as f64 * every_ms;
    (chunks, finish)
}

/// For each cluster of an ASCII stream, when it arrived (the push that completed it) and when a
/// frame first showed it.
fn lags(run: &Run, chunk_chars: usize, every_ms: f64, clusters: usize) -> Vec<(f64, f64)> {
    (0..clusters)
        .map(|i| {
            // The last character of a chunk is whole only when the next chunk arrives.
            let arrived = if (i + 1) % chunk_chars == 0 {
                (i / chunk_chars + 1) as f64 * every_ms
            } else {
                (i / chunk_chars) as f64 * every_ms
            };
            let shown = run
                .frames
                .iter()
                .find(|(_, f, _)| f.visible_clusters > i)
                .map(|(at, _, _)| *at)
                .expect("every cluster is shown");
            (arrived, shown - arrived)
        })
        .collect()
}

const FAMILY: &str = "👨\u{200d}👩\u{200d}👧\u{200d}👦";

// R6: a ZWJ family, a flag, a skin tone and a combining accent pushed one UTF-8 byte at a time
// never show in part: every frame ends on a cluster boundary of the whole reply.
#[wasm_bindgen_test]
fn r6_zwj_family_pushed_byte_by_byte_never_shows_half() {
    let text = format!("Family {FAMILY} flag 🇩🇪 tone 👍🏽 cafe\u{301} ok");
    let chunks: Vec<(f64, Chunk)> = text
        .bytes()
        .enumerate()
        .map(|(i, b)| (i as f64 * 3.0, Chunk::Bytes(vec![b])))
        .collect();
    let finish = text.len() as f64 * 3.0;
    let mut playout = new_playout(None);
    let run = drive(&mut playout, &text, chunks, Some(finish), 16.0, 10_000.0);
    let last = &run.frames.last().expect("frames").1;
    assert!(last.done);
    assert_eq!(run.frames.last().expect("frames").2, text);
    assert!(
        run.frames
            .iter()
            .any(|(_, f, _)| f.words.iter().any(|w| w == FAMILY)),
        "the family is revealed whole, as one word"
    );
}

// R6: a JavaScript string cut between the two halves of a surrogate pair, and inside a ZWJ
// sequence, still shows whole clusters only and never a replacement character.
#[wasm_bindgen_test]
fn r6_surrogate_pairs_split_across_pushes_stay_whole() {
    let text = format!("a😀b {FAMILY} 🇯🇵 end");
    let chunks: Vec<(f64, Chunk)> = utf16(&text)
        .into_iter()
        .enumerate()
        .map(|(i, unit)| (i as f64 * 5.0, Chunk::Text(vec![unit])))
        .collect();
    let finish = chunks.len() as f64 * 5.0;
    let mut playout = new_playout(None);
    let run = drive(&mut playout, &text, chunks, Some(finish), 16.0, 10_000.0);
    assert_eq!(run.frames.last().expect("frames").2, text);
    assert!(
        run.frames
            .iter()
            .all(|(_, f, _)| !f.new_text.contains('\u{FFFD}'))
    );
}

// R6: a lone high surrogate left at the end of the stream becomes one U+FFFD.
#[wasm_bindgen_test]
fn r6_lone_surrogate_at_finish_is_a_replacement_character() {
    let mut playout = new_playout(None);
    let text = "ab\u{FFFD}";
    let chunks = vec![(0.0, Chunk::Text(vec![0x61, 0x62, 0xD83D]))];
    let run = drive(&mut playout, text, chunks, Some(100.0), 16.0, 5_000.0);
    assert!(run.frames.last().expect("frames").1.done);
    assert_eq!(playout.visible_text(), text);
}

// R3: in steady streaming (100 characters a second in chunks of three every 30 ms, frames at
// 60 Hz) every character that arrives after the first 1.5 s is shown about 0.6 s after it
// arrived.
#[wasm_bindgen_test]
fn r3_steady_stream_shows_text_about_600_ms_behind_arrival() {
    let text = "The quick brown fox jumps over the lazy dog. ".repeat(10);
    let (chunks, finish) = steady(&text, 3, 30.0);
    let mut playout = new_playout(None);
    let run = drive(
        &mut playout,
        &text,
        chunks,
        Some(finish),
        1000.0 / 60.0,
        20_000.0,
    );
    assert!(run.frames.last().expect("frames").1.done);
    let steady: Vec<f64> = lags(&run, 3, 30.0, text.len())
        .into_iter()
        .filter(|(arrived, _)| *arrived >= 1500.0)
        .map(|(_, lag)| lag)
        .collect();
    assert!(steady.len() > 200);
    for lag in steady {
        assert!(
            (550.0..=650.0).contains(&lag),
            "a character was shown {lag} ms after it arrived"
        );
    }
}

// R3: `lagMs` sets the lag the steady stream settles to.
#[wasm_bindgen_test]
fn r3_lag_option_sets_the_steady_lag() {
    let text = "Pack my box with five dozen liquor jugs. ".repeat(10);
    let (chunks, finish) = steady(&text, 3, 30.0);
    let mut playout = new_playout(Some(object(&[("lagMs", 300.0.into())])));
    let run = drive(
        &mut playout,
        &text,
        chunks,
        Some(finish),
        1000.0 / 60.0,
        20_000.0,
    );
    let steady: Vec<f64> = lags(&run, 3, 30.0, text.len())
        .into_iter()
        .filter(|(arrived, _)| *arrived >= 1500.0)
        .map(|(_, lag)| lag)
        .collect();
    for lag in steady {
        assert!(
            (250.0..=350.0).contains(&lag),
            "a character was shown {lag} ms after it arrived"
        );
    }
}

// R9: a reply that arrives at once and ends at once plays out over many frames instead of
// jumping in, and only the frame that shows its last character is done.
#[wasm_bindgen_test]
fn r9_rest_plays_out_after_finish() {
    let text = "Everything arrived in one chunk and the stream ended right away. ".repeat(2);
    let mut playout = new_playout(None);
    let run = drive(
        &mut playout,
        &text,
        vec![(0.0, Chunk::Text(utf16(&text)))],
        Some(0.0),
        1000.0 / 60.0,
        10_000.0,
    );
    let revealing: Vec<usize> = run
        .frames
        .iter()
        .map(|(_, f, _)| f.new_text.graphemes(true).count())
        .filter(|n| *n > 0)
        .collect();
    assert!(
        revealing.len() > 20,
        "{} frames revealed text",
        revealing.len()
    );
    assert!(revealing.iter().all(|n| *n < text.len() / 4));
    let (at, last, visible) = run.frames.last().expect("frames");
    assert!(last.done && !last.caret && last.next_wake_ms.is_none());
    assert_eq!(visible, &text);
    assert!(*at >= 300.0, "done at {at} ms");
    assert!(
        run.frames[..run.frames.len() - 1]
            .iter()
            .all(|(_, f, _)| !f.done)
    );
    assert!(playout.next_wake_ms().is_null());
}

// R9: without `finish` the playout is never done: the last character waits (it could still
// grow into a longer cluster), the caret keeps breathing and there is nothing to wake for.
#[wasm_bindgen_test]
fn r9_done_only_after_finish() {
    let mut playout = new_playout(None);
    assert!(
        playout.next_wake_ms().is_null(),
        "nothing to do before the first push"
    );
    playout.push(&"Hello world".into(), 0.0);
    assert!(playout.next_wake_ms().as_f64().is_some());
    let run = drive(&mut playout, "Hello world", vec![], None, 16.0, 5_000.0);
    let (_, last, visible) = run.frames.last().expect("frames");
    assert!(!last.done && last.caret && last.next_wake_ms.is_none());
    assert_eq!(visible, "Hello worl");
    playout.finish(5_000.0);
    let frame: PlayoutFrame =
        serde_wasm_bindgen::from_value(playout.tick(5_100.0).expect("frame")).expect("frame");
    assert_eq!((frame.new_text.as_str(), frame.done), ("d", true));
    assert_eq!(frame.visible_length, 11);
}

/// The error `new Playout(options)` throws, as (name, option, message).
fn refusal(options: JsValue) -> (String, Option<String>, String) {
    let error = Playout::new(Some(options)).expect_err("refused");
    let option = js_sys::Reflect::get(&error, &JsValue::from_str("option"))
        .expect("readable")
        .as_string();
    let error: js_sys::Error = error.dyn_into().expect("an Error is thrown");
    (error.name().into(), option, error.message().into())
}

// R3: options that cannot drive a playout are refused with an error naming the option; missing
// options, `undefined` and `null` take the defaults.
#[wasm_bindgen_test]
fn r3_invalid_options_throw_naming_the_option() {
    let cases: Vec<(JsValue, Option<&str>, &str)> = vec![
        (
            object(&[("lagMs", (-1.0).into())]),
            Some("lagMs"),
            "lagMs is -1; give a finite number of milliseconds, zero or more",
        ),
        (
            object(&[("minCps", 0.0.into())]),
            Some("minCps"),
            "minCps is 0; give a finite number of characters a second above zero",
        ),
        (
            object(&[("easeMs", f64::NAN.into())]),
            Some("easeMs"),
            "easeMs is NaN",
        ),
        (
            object(&[("lagMs", f64::INFINITY.into())]),
            Some("lagMs"),
            "lagMs is Infinity",
        ),
        (
            object(&[("lagMs", "600".into())]),
            Some("lagMs"),
            "lagMs is \"600\"; give a number",
        ),
        (
            object(&[("lagMs", JsValue::NULL)]),
            Some("lagMs"),
            "lagMs is null; give a number",
        ),
        (
            object(&[("lagMS", 600.0.into())]),
            Some("lagMS"),
            "unknown Playout option \"lagMS\"; the options are lagMs, minCps and easeMs",
        ),
        (
            JsValue::from(42.0),
            None,
            "must be an object such as { lagMs: 600 }, not 42",
        ),
        (js_sys::Array::new().into(), None, "not an array"),
    ];
    for (options, option, message) in cases {
        let (name, got_option, got_message) = refusal(options);
        assert_eq!(name, "PlayoutOptionsError");
        assert_eq!(got_option.as_deref(), option, "{got_message}");
        assert!(
            got_message.contains(message),
            "{got_message:?} says {message:?}"
        );
    }
    for options in [
        None,
        Some(JsValue::UNDEFINED),
        Some(JsValue::NULL),
        Some(object(&[])),
        Some(object(&[("lagMs", JsValue::UNDEFINED)])),
        Some(object(&[
            ("lagMs", 0.0.into()),
            ("minCps", 1000.0.into()),
            ("easeMs", 0.0.into()),
        ])),
    ] {
        assert!(Playout::new(options).is_ok());
    }
}
