//! The playout bench page, `/?bench=<characters a second>[&reply=markdown]`: one answer block,
//! drawn by [`LiveText`] exactly as the app draws a reply, fed a synthetic 50,000-character
//! mixed-script reply at a steady rate: paragraphs of prose, or with `reply=markdown` a reply
//! with headings, emphasis, links, lists, code blocks, tables and quotes. `tests/bench/playout.mjs`
//! measures it; `docs/bench.md` explains the numbers.
//!
//! The page tells the measurement what it did through `window.portalBench`:
//! `text` (the whole reply), `arrivals` (`[performance.now(), UTF-16 length received so far]`
//! for each chunk), `drawn()` (the UTF-16 length of the reply drawn so far), `finished` (the
//! last chunk was pushed) and `settled` with `settledAt` (the block settled, and when).

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Array, Object, Reflect};
use leptos::html;
use leptos::prelude::*;
use unicode_segmentation::UnicodeSegmentation;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

use crate::live::LiveText;
use crate::page::{document, now_ms};

/// The reply's length in characters (grapheme clusters).
const REPLY_CHARS: usize = 50_000;
/// How often a chunk arrives.
const CHUNK_INTERVAL_MS: i32 = 20;
/// The stream starts this long after the page is mounted, so page load does not count.
const START_DELAY_MS: i32 = 1_000;
/// A chunk ends up to this many characters (code points) into the next cluster, so chunks end
/// inside clusters as a real stream's do.
const MAX_CUT_INTO_CLUSTER: u32 = 2;

/// Sentences in several scripts, with ZWJ emoji, flags, keycaps, skin tones, combining accents,
/// conjuncts and conjoining jamo: clusters of one to seven code points.
const SENTENCES: &[&str] = &[
    "The committee reviewed the quarterly figures and found them sound. ",
    "Our family \u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}\u{200D}\u{1F466} flew home via \
     \u{1F1EF}\u{1F1F5} and \u{1F1E9}\u{1F1EA} last spring; ",
    "press 1\u{FE0F}\u{20E3}, then #\u{FE0F}\u{20E3}, and wait for the tone. ",
    "The cafe\u{301} on the corner serves cre\u{300}me bru\u{302}le\u{301}e. ",
    "東京の天気は晴れです。明日は雨が降るでしょう。",
    "我们明天在图书馆见面。",
    "ภาษาไทยเขียนโดยไม่เว้นวรรคระหว่างคำ ",
    "नमस्ते, क्षमा कीजिए, आज का समाचार पढ़िए। ",
    "한국어 텍스트를 씁니다. 감사합니다! ",
    "Thumbs up \u{1F44D}\u{1F3FD} from the whole team \u{1F9D1}\u{200D}\u{1F4BB}, well done. ",
    "Old Hangul \u{1100}\u{1161}\u{11A8} still combines. ",
    "Figures: 3.14159, 2,718 and 1/3 of the 12 items were late. ",
];

/// Lines of code for the markdown reply's code blocks.
const CODE_LINES: &[&str] = &[
    "let frame = playout.tick(now_ms);",
    "for block in markdown.blocks() {",
    "    draw(&block, frame.caret);",
    "}",
    "if frame.done { settle(&reply); }",
    "let words: Vec<&str> = text.split_whitespace().collect();",
    "match event { Event::Text(t) => push(t), _ => {} }",
    "// 東京 → Tokyo, 한국어 → Korean",
    "assert_eq!(clusters(\"e\u{301}\"), 1);",
    "return Ok(reply.trim_end().to_string());",
];

/// What the bench page was asked for in its address (`?bench=2000&reply=markdown`).
#[derive(Debug, Clone, Copy)]
pub struct BenchRun {
    /// The playout rate, in characters a second.
    pub cps: f64,
    /// The reply is markdown of every kind rather than paragraphs of prose.
    pub markdown: bool,
}

/// The bench run asked for in the page's address, if this is the bench page.
pub fn run_in_url() -> Option<BenchRun> {
    let search = web_sys::window()?.location().search().ok()?;
    let mut pairs = search.trim_start_matches('?').split('&');
    let cps = pairs
        .clone()
        .find_map(|pair| pair.strip_prefix("bench="))
        .and_then(|rate| rate.parse::<u32>().ok().map(f64::from))
        .filter(|rate| *rate > 0.0)?;
    let markdown = pairs.any(|pair| pair == "reply=markdown");
    Some(BenchRun { cps, markdown })
}

/// The bench page: one turn whose answer streams in at `run.cps` characters a second.
#[component]
pub fn Bench(run: BenchRun) -> impl IntoView {
    let BenchRun { cps, markdown } = run;
    let settled = RwSignal::new(false);
    let slot = NodeRef::<html::Div>::new();
    // The page holds the live block, as the app's block view does; the source lets go of it
    // once the whole reply is sent.
    let block = StoredValue::new_local(None::<LiveText>);
    Effect::new(move || {
        let Some(slot) = slot.get() else { return };
        if block.with_value(Option::is_some) {
            return;
        }
        let body = document()
            .create_element("div")
            .expect("creating a div succeeds");
        body.set_class_name("body");
        let _ = slot.append_child(&body);
        let text = if markdown {
            markdown_reply(REPLY_CHARS)
        } else {
            reply(REPLY_CHARS)
        };
        let report = Report::new(&text, cps);
        let settled_report = report.clone();
        let live = LiveText::new(body, move |_| {
            settled_report.settled();
            settled.set(true);
        });
        report.follow(&text, &live);
        block.set_value(Some(live.clone()));
        Source::start(text, cps, live, report);
    });
    let class = move || {
        if settled.get() {
            "block text answer"
        } else {
            "block text answer live"
        }
    };
    view! {
        <main class="portal bench">
            <header class="portal-header">
                <h1>"Portal"</h1>
                <span class="model-label">
                    {format!(
                        "playout bench · {} · {} characters a second",
                        if markdown { "markdown" } else { "prose" },
                        cps as u32,
                    )}
                </span>
            </header>
            <section class="conversation" aria-label="Conversation">
                <article
                    class="turn has-answer"
                    data-turn="1"
                    data-settled=move || settled.get().to_string()
                >
                    <div class="message user">
                        <p>"Write me a long reply in many scripts."</p>
                    </div>
                    <div class="message assistant" aria-busy=move || (!settled.get()).to_string()>
                        <div class=class node_ref=slot aria-hidden=move || (!settled.get()).then_some("true")></div>
                    </div>
                </article>
            </section>
        </main>
    }
}

/// A deterministic reply of exactly `chars` characters: paragraphs of four to ten sentences
/// separated by blank lines, with no other line breaks.
fn reply(chars: usize) -> String {
    let mut random = Lcg(0x5EED_F00D);
    let mut text = String::new();
    let mut clusters = 0;
    while clusters < chars {
        if !text.is_empty() {
            text.push_str("\n\n");
            clusters += 2;
        }
        for _ in 0..4 + random.below(7) {
            let sentence = SENTENCES[random.below(SENTENCES.len() as u32) as usize];
            text.push_str(sentence);
            clusters += sentence.graphemes(true).count();
        }
    }
    if let Some((end, _)) = text.grapheme_indices(true).nth(chars) {
        text.truncate(end);
    }
    end_on_text(text)
}

/// A deterministic markdown reply of exactly `chars` characters, in the blocks replies use:
/// headings, paragraphs with bold, italic, inline code and links, bulleted, numbered and task
/// lists, fenced code, tables and quotes, each of chat size.
fn markdown_reply(chars: usize) -> String {
    let mut random = Lcg(0x00DD_BA11);
    let mut text = String::new();
    let mut section = 0;
    let mut clusters = 0;
    while clusters < chars {
        if !text.is_empty() {
            text.push_str("\n\n");
            clusters += 2;
        }
        let block = match random.below(12) {
            0 => {
                section += 1;
                format!("## {section}. {}", sentence(&mut random).trim_end())
            }
            1..=4 => (0..2 + random.below(4))
                .map(|_| decorated(&mut random))
                .collect::<String>()
                .trim_end()
                .to_string(),
            5 => list(&mut random, |_| "- ".to_string()),
            6 => list(&mut random, |i| format!("{}. ", i + 1)),
            7 => list(&mut random, |i| {
                if i % 2 == 0 { "- [x] " } else { "- [ ] " }.to_string()
            }),
            8 | 9 => {
                let lines = (0..4 + random.below(9))
                    .map(|_| CODE_LINES[random.below(CODE_LINES.len() as u32) as usize])
                    .collect::<Vec<_>>();
                format!("```rust\n{}\n```", lines.join("\n"))
            }
            10 => table(&mut random),
            _ => format!("> {}", decorated(&mut random).trim_end()),
        };
        clusters += block.graphemes(true).count();
        text.push_str(&block);
    }
    if let Some((end, _)) = text.grapheme_indices(true).nth(chars) {
        text.truncate(end);
    }
    end_on_text(text)
}

fn sentence(random: &mut Lcg) -> &'static str {
    SENTENCES[random.below(SENTENCES.len() as u32) as usize]
}

/// A sentence with one of its words bold, italic, code or a link, or none.
fn decorated(random: &mut Lcg) -> String {
    let sentence = sentence(random);
    let Some((start, word)) = sentence
        .split_word_bound_indices()
        .filter(|(_, word)| word.chars().all(char::is_alphanumeric))
        .nth(random.below(3) as usize)
    else {
        return sentence.to_string();
    };
    let marked = match random.below(5) {
        0 => format!("**{word}**"),
        1 => format!("*{word}*"),
        2 => format!("`{word}`"),
        3 => format!("[{word}](https://example.com/{})", random.below(1000)),
        _ => word.to_string(),
    };
    format!(
        "{}{marked}{}",
        &sentence[..start],
        &sentence[start + word.len()..]
    )
}

/// Three to seven items, each opened by `marker(index)`.
fn list(random: &mut Lcg, marker: impl Fn(u32) -> String) -> String {
    (0..3 + random.below(5))
        .map(|i| format!("{}{}", marker(i), decorated(random).trim_end()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A table of three columns and three to eight rows.
fn table(random: &mut Lcg) -> String {
    let mut rows = vec![
        "| Script | Sample | Count |".to_string(),
        "|---|---|---:|".to_string(),
    ];
    for _ in 0..3 + random.below(6) {
        let sample: String = sentence(random).graphemes(true).take(12).collect();
        let script =
            ["Latin", "日本語", "ไทย", "हिन्दी", "한국어", "Emoji 👩🏽‍💻"][random.below(6) as usize];
        rows.push(format!(
            "| {script} | {} | {} |",
            sample.trim().replace('|', "/"),
            random.below(10_000)
        ));
    }
    rows.join("\n")
}

/// A reply cut at a block break would end on line breaks; each becomes a full stop.
fn end_on_text(mut text: String) -> String {
    let breaks = text.len() - text.trim_end_matches('\n').len();
    text.truncate(text.len() - breaks);
    text.extend(std::iter::repeat_n('.', breaks));
    text
}

/// The synthetic stream: due characters are sent on each interval, cut anywhere.
struct Source {
    text: String,
    /// Where each cluster of `text` ends, in bytes.
    ends: Vec<usize>,
    cps: f64,
    sent: usize,
    sent_utf16: usize,
    started_ms: f64,
    random: Lcg,
    live: LiveText,
    report: Report,
    /// The interval that sends chunks, cleared once the whole reply is sent.
    interval: Option<i32>,
}

impl Source {
    /// Starts streaming `text` into `live` after [`START_DELAY_MS`].
    fn start(text: String, cps: f64, live: LiveText, report: Report) {
        let ends = text
            .grapheme_indices(true)
            .map(|(start, cluster)| start + cluster.len())
            .collect();
        let source = Rc::new(RefCell::new(Source {
            text,
            ends,
            cps,
            sent: 0,
            sent_utf16: 0,
            started_ms: 0.0,
            random: Lcg(0xC0FF_EE00),
            live,
            report,
            interval: None,
        }));
        let sender = source.clone();
        // The interval holds the chunk callback, and so the source, until it is cleared.
        let tick: js_sys::Function =
            Closure::<dyn FnMut()>::new(move || sender.borrow_mut().send())
                .into_js_value()
                .unchecked_into();
        let begin = Closure::once_into_js(move || {
            source.borrow_mut().started_ms = now_ms();
            source.borrow_mut().interval = web_sys::window().and_then(|window| {
                window
                    .set_interval_with_callback_and_timeout_and_arguments_0(
                        &tick,
                        CHUNK_INTERVAL_MS,
                    )
                    .ok()
            });
        });
        if let Some(window) = web_sys::window() {
            let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(
                begin.unchecked_ref(),
                START_DELAY_MS,
            );
        }
    }

    /// Sends what is due by now, ending a little way into the next cluster.
    fn send(&mut self) {
        let now = now_ms();
        let due = (((now - self.started_ms) / 1000.0 * self.cps) as usize).min(self.ends.len());
        let mut cut = due.checked_sub(1).map_or(0, |last| self.ends[last]);
        if let Some(&next_end) = self.ends.get(due) {
            let into = self.random.below(MAX_CUT_INTO_CLUSTER + 1) as usize;
            cut = self.text[cut..next_end]
                .char_indices()
                .nth(into)
                .map_or(next_end, |(offset, _)| cut + offset);
        }
        if cut > self.sent {
            let chunk = &self.text[self.sent..cut];
            self.sent_utf16 += chunk.encode_utf16().count();
            self.sent = cut;
            self.live.push(chunk);
            self.report.arrived(now, self.sent_utf16);
        }
        if self.sent == self.text.len()
            && let Some(interval) = self.interval.take()
        {
            if let Some(window) = web_sys::window() {
                window.clear_interval_with_handle(interval);
            }
            self.live.finish();
            self.report.finished();
        }
    }
}

/// `window.portalBench`, what the page reports to the measurement.
#[derive(Clone)]
struct Report {
    global: Object,
    arrivals: Array,
}

impl Report {
    fn new(text: &str, cps: f64) -> Self {
        let global = Object::new();
        let arrivals = Array::new();
        set(&global, "cps", &cps.into());
        set(&global, "text", &text.into());
        set(&global, "arrivals", &arrivals);
        set(&global, "finished", &false.into());
        set(&global, "settled", &false.into());
        if let Some(window) = web_sys::window() {
            set(&window, "portalBench", &global);
        }
        Report { global, arrivals }
    }

    /// `drawn()`: the UTF-16 length of the reply `live` has drawn, counted on from the last call.
    fn follow(&self, text: &str, live: &LiveText) {
        let text: Rc<str> = text.into();
        let live = live.clone();
        let mut counted = (0, 0);
        let drawn = Closure::<dyn FnMut() -> f64>::new(move || {
            let bytes = live.drawn_len().min(text.len());
            let (from, utf16) = counted;
            if bytes >= from
                && let Some(more) = text.get(from..bytes)
            {
                counted = (bytes, utf16 + more.encode_utf16().count());
            }
            counted.1 as f64
        })
        .into_js_value();
        set(&self.global, "drawn", &drawn);
    }

    fn arrived(&self, at: f64, utf16_end: usize) {
        let arrival = Array::of2(&at.into(), &(utf16_end as f64).into());
        self.arrivals.push(&arrival);
    }

    fn finished(&self) {
        set(&self.global, "finished", &true.into());
    }

    fn settled(&self) {
        set(&self.global, "settledAt", &now_ms().into());
        set(&self.global, "settled", &true.into());
    }
}

/// A small linear congruential generator: the same reply and the same cuts on every run.
struct Lcg(u32);

impl Lcg {
    /// A number below `bound`.
    fn below(&mut self, bound: u32) -> u32 {
        self.0 = self.0.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (self.0 >> 16) % bound
    }
}

fn set(target: &JsValue, key: &str, value: &JsValue) {
    let _ = Reflect::set(target, &key.into(), value);
}
