//! The playout bench page, `/?bench=<characters a second>[&reply=markdown]`: one answer block,
//! drawn by [`LiveReply`] exactly as the app draws a reply, fed the reply the bench gives it in
//! `window.portalBenchReply` (tests/bench/reply.mjs: 50,000 characters of mixed-script prose, or
//! of markdown of every kind) at a steady rate. `tests/bench/playout.mjs` measures it;
//! `docs/bench.md` explains the numbers.
//!
//! The page tells the measurement what it did through `window.portalBench`:
//! `text` (the whole reply), `started` (the first chunk was pushed), `arrivals`
//! (`[performance.now(), UTF-16 length received so far]` for each chunk, set with `finished`: the
//! page keeps them until then, so recording them costs the stream no call into JavaScript),
//! `measureDrawn()` (sets `drawn`, the UTF-16 length of the reply drawn so far),
//! `finished` (the last chunk was pushed) and `settled` with `settledAt` (the block settled, and
//! when).

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Array, Object, Reflect};
use leptos::html;
use leptos::prelude::*;
use portal_drawer::LiveReply;
use portal_drawer::page::{document, element, now_ms};
use unicode_segmentation::UnicodeSegmentation;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

use crate::highlight;

/// How often a chunk arrives.
const CHUNK_INTERVAL_MS: i32 = 20;
/// The stream starts this long after the page is mounted, so page load does not count.
const START_DELAY_MS: i32 = 1_000;
/// A chunk ends up to this many characters (code points) into the next cluster, so chunks end
/// inside clusters as a real stream's do.
const MAX_CUT_INTO_CLUSTER: u32 = 2;

/// What the bench page was asked for in its address (`?bench=2000&reply=markdown`).
#[derive(Debug, Clone, Copy)]
pub struct BenchRun {
    /// The playout rate, in characters a second.
    pub cps: f64,
    /// The reply is markdown of every kind rather than paragraphs of prose (for the page's label;
    /// the bench gives the reply).
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
    let block = StoredValue::new_local(None::<LiveReply>);
    Effect::new(move || {
        let Some(slot) = slot.get() else { return };
        if block.with_value(Option::is_some) {
            return;
        }
        let body = element(&document(), "div");
        body.set_class_name("body");
        let _ = slot.append_child(&body);
        let Some(text) = web_sys::window()
            .and_then(|window| Reflect::get(&window, &"portalBenchReply".into()).ok())
            .and_then(|reply| reply.as_string())
        else {
            body.set_text_content(Some(
                "The bench page streams the reply tests/bench/playout.mjs gives it in \
                 window.portalBenchReply; run `cargo xtask bench`.",
            ));
            return;
        };
        let report = Report::new(&text, cps);
        let settled_report = report.clone();
        let live = LiveReply::new(body, highlight::drawing(), move |_| {
            settled_report.settled();
            settled.set(true);
        });
        report.follow(&live);
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
    live: LiveReply,
    report: Report,
    /// The interval that sends chunks, cleared once the whole reply is sent.
    interval: Option<i32>,
}

impl Source {
    /// Starts streaming `text` into `live` after [`START_DELAY_MS`].
    fn start(text: String, cps: f64, live: LiveReply, report: Report) {
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
    /// Each chunk's arrival time and the UTF-16 length received by then.
    arrivals: Rc<RefCell<Vec<(f64, usize)>>>,
}

impl Report {
    fn new(text: &str, cps: f64) -> Self {
        let global = Object::new();
        set(&global, "cps", &cps.into());
        set(&global, "text", &text.into());
        set(&global, "started", &false.into());
        set(&global, "finished", &false.into());
        set(&global, "settled", &false.into());
        if let Some(window) = web_sys::window() {
            set(&window, "portalBench", &global);
        }
        Report {
            global,
            arrivals: Rc::default(),
        }
    }

    /// `measureDrawn()`: sets `drawn` to the UTF-16 length of the reply `live` has drawn.
    fn follow(&self, live: &LiveReply) {
        let live = live.clone();
        let global = self.global.clone();
        let measure = Closure::<dyn FnMut()>::new(move || {
            set(&global, "drawn", &(live.drawn_utf16_len() as f64).into());
        })
        .into_js_value();
        set(&self.global, "measureDrawn", &measure);
    }

    fn arrived(&self, at: f64, utf16_end: usize) {
        let mut arrivals = self.arrivals.borrow_mut();
        if arrivals.is_empty() {
            set(&self.global, "started", &true.into());
        }
        arrivals.push((at, utf16_end));
    }

    fn finished(&self) {
        let arrivals: Array = self
            .arrivals
            .borrow()
            .iter()
            .map(|&(at, utf16_end)| Array::of2(&at.into(), &(utf16_end as f64).into()))
            .collect();
        set(&self.global, "arrivals", &arrivals);
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
