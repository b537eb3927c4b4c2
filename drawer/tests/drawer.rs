//! The drawer in a browser (rules R7, R8, R10, R14): live replies driven frame by frame on a
//! virtual clock through `LiveDrawing`, the drawing `LiveReply` runs on the page's frames, and
//! one `LiveReply` on the page's own. Nothing here sleeps but the last test, which waits for the
//! page's frames. The diagram test needs the `diagrams` feature (`wasm-pack test --headless
//! --chrome -- --features diagrams`, as `cargo xtask test` runs them).
#![cfg(target_arch = "wasm32")]

use std::cell::RefCell;
use std::rc::Rc;

#[cfg(feature = "diagrams")]
use portal_drawer::Diagrams;
use portal_drawer::{LiveDrawing, LiveReply, Next, Options, draw_reply};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{Element, Node};

wasm_bindgen_test_configure!(run_in_browser);

/// Every other frame of a 60 Hz screen, as the drawer draws at speed.
const FRAME_MS: f64 = 33.4;

fn options(reduced_motion: bool) -> Options {
    Options {
        reduced_motion: Some(reduced_motion),
        ..Options::default()
    }
}

/// A body element in the page, as the web app's `.body`.
fn body() -> Element {
    let document = web_sys::window().unwrap().document().unwrap();
    let body = document.create_element("div").unwrap();
    body.set_class_name("body");
    document.body().unwrap().append_child(&body).unwrap();
    body
}

/// A live drawing on a virtual clock.
struct Live {
    drawing: LiveDrawing,
    body: Element,
    now: f64,
    settled: Option<String>,
}

impl Live {
    fn new(reduced_motion: bool) -> Self {
        Live::with(options(reduced_motion))
    }

    fn with(options: Options) -> Self {
        let body = body();
        Live {
            drawing: LiveDrawing::new(body.clone(), &options),
            body,
            now: 0.0,
            settled: None,
        }
    }

    fn push(&mut self, text: &str) {
        let _ = self.drawing.push(text, self.now);
    }

    fn finish(&mut self) {
        let _ = self.drawing.finish(self.now);
    }

    /// Draws frames for `ms` of the virtual clock, or until the reply settles.
    fn play(&mut self, ms: f64) {
        let until = self.now + ms;
        while self.now < until && self.settled.is_none() {
            self.now += FRAME_MS;
            if let Next::Settled(text) = self.drawing.frame(self.now, self.now) {
                self.settled = Some(text);
            }
        }
    }

    /// Pushes `text` a chunk every frame at about `cps` characters a second (the text is ASCII),
    /// drawing as it goes.
    fn stream(&mut self, text: &str, cps: f64) {
        let per_frame = ((cps * FRAME_MS / 1000.0) as usize).max(1);
        for chunk in text.as_bytes().chunks(per_frame) {
            self.push(std::str::from_utf8(chunk).unwrap());
            self.play(FRAME_MS);
        }
    }

    /// Draws frames until everything pushed is drawn (and resolved).
    fn play_out(&mut self) {
        self.play(3_000.0);
    }

    fn all(&self, selector: &str) -> Vec<Node> {
        let found = self.body.query_selector_all(selector).unwrap();
        (0..found.length()).filter_map(|i| found.item(i)).collect()
    }

    fn one(&self, selector: &str) -> Node {
        self.body
            .query_selector(selector)
            .unwrap()
            .unwrap_or_else(|| panic!("no {selector} in {}", self.body.inner_html()))
            .into()
    }
}

#[wasm_bindgen_test]
fn patched_blocks_keep_their_dom_nodes_as_they_grow() {
    let mut live = Live::new(false);
    live.push("The first paragraph, which grows word by word over many frames of the playout");
    live.play(500.0);
    let paragraph = live.one("p");
    let first_text = paragraph.first_child().expect("the paragraph has text");
    let mut frames = 0;
    while live.now < 3_000.0 {
        live.play(FRAME_MS);
        frames += 1;
        assert!(
            live.one("p").is_same_node(Some(&paragraph)),
            "frame {frames}"
        );
        assert!(
            paragraph
                .first_child()
                .unwrap()
                .is_same_node(Some(&first_text)),
            "frame {frames}: the paragraph's first text is appended to, not drawn again"
        );
    }
    live.push(" and ends.\n\nA second paragraph follows it.");
    live.play_out();
    let paragraphs = live.all("p");
    assert_eq!(paragraphs.len(), 2);
    assert!(paragraphs[0].is_same_node(Some(&paragraph)));
    assert!(paragraphs[0].text_content().unwrap().ends_with("and ends."));
}

#[wasm_bindgen_test]
fn r10_a_settled_reply_is_plain_text_as_draw_reply_draws_it() {
    let reply = "# A reply\n\nSome **strong** and *soft* words, `code` and a [link](https://example.com/).\n\n\
        - one\n- [x] two\n\n> quoted\n\n```rust\nfn main() {}\n```\n\n| a | b |\n|---|--:|\n| 1 | 2 |\n\n---\n\nThe end.";
    let mut live = Live::new(false);
    for chunk in reply.as_bytes().chunks(7) {
        live.push(std::str::from_utf8(chunk).unwrap());
        live.play(40.0);
    }
    // Mid-playout there are resolving words and a caret.
    assert!(!live.all(".w").is_empty() || !live.all(".caret").is_empty());
    live.finish();
    live.play(10_000.0);
    assert_eq!(live.settled.as_deref(), Some(reply));
    assert!(live.all(".w").is_empty(), "{}", live.body.inner_html());
    assert!(live.all(".caret").is_empty());
    let reloaded = body();
    draw_reply(&reloaded, reply, &options(false));
    assert_eq!(live.body.inner_html(), reloaded.inner_html());
}

#[wasm_bindgen_test]
fn a_reference_link_is_redrawn_as_a_link_when_its_definition_arrives() {
    let mut live = Live::new(false);
    live.push("See [the docs][r] for more.\n\nA second paragraph.\n\n");
    live.play_out();
    assert!(live.all("a").is_empty(), "{}", live.body.inner_html());
    let paragraph = live.one("p");
    assert!(paragraph.text_content().unwrap().contains("the docs"));
    live.push("[r]: https://example.com/docs\n\nAfter the definition.");
    live.play_out();
    // Redrawn as a link while the reply still plays out, in the paragraph drawn before.
    assert!(live.settled.is_none());
    assert!(
        live.one("p a")
            .parent_node()
            .unwrap()
            .is_same_node(Some(&paragraph))
    );
    live.finish();
    live.play(5_000.0);
    assert!(live.settled.is_some());
    let link: Element = live.one("a").unchecked_into();
    assert_eq!(
        link.get_attribute("href").as_deref(),
        Some("https://example.com/docs")
    );
    assert_eq!(link.text_content().as_deref(), Some("the docs"));
    let reloaded = body();
    draw_reply(&reloaded, live.settled.as_deref().unwrap(), &options(false));
    assert_eq!(live.body.inner_html(), reloaded.inner_html());
}

#[wasm_bindgen_test]
fn a_table_growing_row_by_row_keeps_its_earlier_rows_nodes() {
    let mut live = Live::new(false);
    live.push("| name | count |\n|---|--:|\n| apples | 3 |\n");
    live.play_out();
    let table = live.one("table");
    let first_row = live.one("tbody tr");
    let mut rows = vec![first_row];
    for (n, row) in ["| pears | 5 |\n", "| plums | 8 |\n", "| figs | 13 |\n"]
        .iter()
        .enumerate()
    {
        live.push(row);
        live.play_out();
        let drawn = live.all("tbody tr");
        assert_eq!(drawn.len(), n + 2, "{}", live.body.inner_html());
        for (kept, row) in rows.iter().zip(&drawn) {
            assert!(
                kept.is_same_node(Some(row)),
                "row {n}: an earlier row was drawn again"
            );
        }
        assert!(live.one("table").is_same_node(Some(&table)));
        rows = drawn;
    }
    live.finish();
    live.play(3_000.0);
    assert!(live.one("tbody tr").is_same_node(Some(&rows[0])));
    assert_eq!(live.all("tbody tr").len(), 4);
}

#[wasm_bindgen_test]
fn r7_r8_words_resolve_in_steps_and_the_caret_breathes_while_text_plays_out() {
    let mut live = Live::new(false);
    live.stream(
        &"Words arrive and resolve from a blur one after another. ".repeat(20),
        300.0,
    );
    let classes: Vec<String> = live
        .all(".w")
        .iter()
        .map(|w| w.unchecked_ref::<Element>().class_name())
        .collect();
    assert!(!classes.is_empty());
    assert!(
        classes.iter().all(|c| c.starts_with("w r") || c == "w"),
        "{classes:?}"
    );
    assert!(
        classes.iter().any(|c| c == "w r0" || c == "w r1"),
        "{classes:?}"
    );
    let caret: Element = live.one(".caret").unchecked_into();
    let style = caret.get_attribute("style").unwrap_or_default();
    assert!(
        style.starts_with("--breath:") || style.starts_with("animation-delay:"),
        "{style}"
    );
    assert_eq!(caret.get_attribute("aria-hidden").as_deref(), Some("true"));
}

#[wasm_bindgen_test]
fn r14_under_reduced_motion_words_are_drawn_resolved_and_the_caret_stands_still() {
    let mut live = Live::new(true);
    live.stream(
        &"Text still plays out in order under reduced motion. ".repeat(10),
        300.0,
    );
    let shown = live.one("p").text_content().unwrap();
    assert!(!shown.is_empty());
    assert!(live.all(".w").is_empty(), "{}", live.body.inner_html());
    let caret: Element = live.one(".caret").unchecked_into();
    assert_eq!(caret.class_name(), "caret");
    assert_eq!(caret.get_attribute("style"), None);
    live.play(300.0);
    let more = live.one("p").text_content().unwrap();
    assert!(more.starts_with(&shown) && more.len() > shown.len());
}

#[wasm_bindgen_test]
fn a_reply_settled_whole_mid_playout_is_drawn_as_a_reloaded_one_at_once() {
    let reply = "# Herons\n\nThey wait **very** still by the water, then strike.\n\n- grey\n- purple\n\nThe end.";
    let mut live = Live::new(false);
    live.push(reply);
    live.finish();
    live.play(300.0);
    assert!(
        live.settled.is_none() && !live.all(".caret").is_empty(),
        "still playing out"
    );
    assert_eq!(live.drawing.settle_whole(live.now), reply);
    assert!(live.all(".w").is_empty(), "{}", live.body.inner_html());
    assert!(live.all(".caret").is_empty());
    let reloaded = body();
    draw_reply(&reloaded, reply, &options(false));
    assert_eq!(live.body.inner_html(), reloaded.inner_html());
    // Nothing more is drawn after it.
    live.play(3_000.0);
    assert_eq!(live.settled, None);
    assert_eq!(live.body.inner_html(), reloaded.inner_html());
}

#[wasm_bindgen_test]
fn a_stopped_reply_draws_nothing_more_and_never_settles() {
    let mut live = Live::new(false);
    live.push("Some text that is withdrawn while it plays out, word by word.");
    live.play(700.0);
    let drawn = live.body.inner_html();
    live.drawing.stop();
    live.finish();
    live.play(5_000.0);
    assert_eq!(live.settled, None);
    assert_eq!(live.body.inner_html(), drawn);
}

#[wasm_bindgen_test]
async fn a_live_reply_settles_on_the_pages_own_frames() {
    let body = body();
    let settled: Rc<RefCell<Option<String>>> = Rc::default();
    let (resolve, promise) = {
        let mut resolve = None;
        let promise = js_sys::Promise::new(&mut |ok, _| resolve = Some(ok));
        (resolve.unwrap(), promise)
    };
    let got = settled.clone();
    let reply = LiveReply::new(body.clone(), options(false), move |text| {
        *got.borrow_mut() = Some(text);
        let _ = resolve.call0(&wasm_bindgen::JsValue::NULL);
    });
    reply.push("Hello, **wor");
    reply.push("ld**.");
    reply.finish();
    wasm_bindgen_futures::JsFuture::from(promise).await.unwrap();
    assert_eq!(settled.borrow().as_deref(), Some("Hello, **world**."));
    assert_eq!(
        reply.drawn_utf16_len(),
        "Hello, **world**.".encode_utf16().count()
    );
    assert_eq!(
        body.inner_html(),
        "<div class=\"blocks\"><p>Hello, <strong>world</strong>.</p></div>"
    );
}

#[wasm_bindgen_test]
async fn a_live_reply_let_go_of_mid_stream_leaves_no_frame_or_timer_to_call_it() {
    let window = web_sys::window().unwrap();
    let errors: Rc<RefCell<Vec<String>>> = Rc::default();
    let seen = errors.clone();
    let on_error = wasm_bindgen::closure::Closure::<dyn FnMut(web_sys::ErrorEvent)>::new(
        move |event: web_sys::ErrorEvent| seen.borrow_mut().push(event.message()),
    );
    window
        .add_event_listener_with_callback("error", on_error.as_ref().unchecked_ref())
        .unwrap();
    for _ in 0..2 {
        let reply = LiveReply::new(body(), options(false), |_| {});
        reply.push("A frame is asked for as soon as text arrives, ");
        // Played out a while, so a timer waits for the next drawn frame too.
        frames(10).await;
        reply.push("and more keeps coming.");
        drop(reply);
    }
    frames(10).await;
    window
        .remove_event_listener_with_callback("error", on_error.as_ref().unchecked_ref())
        .unwrap();
    assert_eq!(*errors.borrow(), Vec::<String>::new());
}

/// Waits for `count` of the page's animation frames.
async fn frames(count: usize) {
    for _ in 0..count {
        let promise = js_sys::Promise::new(&mut |ok, _| {
            web_sys::window()
                .unwrap()
                .request_animation_frame(&ok)
                .unwrap();
        });
        wasm_bindgen_futures::JsFuture::from(promise).await.unwrap();
    }
}

#[wasm_bindgen_test]
fn a_code_blocks_copy_button_works_wherever_the_reply_is_drawn() {
    let settled = body();
    draw_reply(&settled, "```rust\nfn main() {}\n```", &options(false));
    let mut live = Live::new(false);
    live.push("```sh\nls\n```");
    live.finish();
    live.play(5_000.0);
    for body in [&settled, &live.body] {
        let button = body
            .query_selector("button.code-copy")
            .unwrap()
            .expect("a Copy button")
            .dyn_into::<web_sys::HtmlElement>()
            .unwrap();
        assert_eq!(button.text_content().as_deref(), Some("Copy"));
        button.click();
        assert_eq!(button.text_content().as_deref(), Some("Copied"));
    }
}

/// The calls a hook got: what it was called with, written as text.
type Calls = Rc<RefCell<Vec<String>>>;

/// Options whose code hook notes each body it is called with (by its class) and what it holds.
fn code_hook(calls: &Calls) -> Options {
    let seen = calls.clone();
    Options {
        on_code: Some(Rc::new(move |body: &Element| {
            let code = body
                .query_selector("pre code")
                .unwrap()
                .map(|c| c.text_content());
            seen.borrow_mut()
                .push(format!("{} {:?}", body.class_name(), code.flatten()));
        })),
        ..options(false)
    }
}

#[wasm_bindgen_test]
fn the_code_hook_gets_each_reply_once_it_is_settled_never_while_it_plays_out() {
    let calls = Calls::default();
    let reply = "Some code:\n\n```rust\nfn main() {}\n```\n\nAnd words after it, played out.";
    let mut live = Live::with(code_hook(&calls));
    for chunk in reply.as_bytes().chunks(5) {
        live.push(std::str::from_utf8(chunk).unwrap());
        live.play(FRAME_MS);
        assert_eq!(
            *calls.borrow(),
            Vec::<String>::new(),
            "not while it plays out"
        );
    }
    live.play_out();
    assert!(live.settled.is_none());
    assert_eq!(
        *calls.borrow(),
        Vec::<String>::new(),
        "not before it settles"
    );
    live.finish();
    live.play(5_000.0);
    assert_eq!(live.settled.as_deref(), Some(reply));
    let once = vec![r#"body Some("fn main() {}\n")"#.to_string()];
    assert_eq!(*calls.borrow(), once, "once, with the settled body");
    live.play(1_000.0);
    assert_eq!(*calls.borrow(), once);

    let reloaded = body();
    reloaded.set_class_name("reloaded");
    draw_reply(&reloaded, reply, &code_hook(&calls));
    assert_eq!(calls.borrow().len(), 2);
    assert_eq!(calls.borrow()[1], r#"reloaded Some("fn main() {}\n")"#);
}

/// Options drawing `mermaid` and `dot` blocks: the hook notes each call and draws a `<figure>`
/// holding the source into the container, as a page's diagram library would.
#[cfg(feature = "diagrams")]
fn diagram_hook(calls: &Calls) -> Options {
    let seen = calls.clone();
    Options {
        diagrams: Some(Diagrams {
            languages: vec!["mermaid".to_string(), "dot".to_string()],
            draw: Rc::new(move |container: &Element, source: &str, language: &str| {
                seen.borrow_mut().push(format!(
                    "{} {:?} {language}: {source:?}",
                    container.class_name(),
                    container.get_attribute("data-language"),
                ));
                let figure = container
                    .owner_document()
                    .unwrap()
                    .create_element("figure")
                    .unwrap();
                figure.set_text_content(Some(source));
                container.append_child(&figure).unwrap();
            }),
        }),
        ..options(false)
    }
}

#[cfg(feature = "diagrams")]
#[wasm_bindgen_test]
fn a_diagram_block_is_handed_over_once_it_settles_and_its_drawing_stays() {
    let calls = Calls::default();
    let reply = "A flow:\n\n```Mermaid\ngraph TD\n  A-->B\n```\n\n```rust\nlet a = 1;\n```\n\n\
        Words after the diagram keep playing out for a while, frame after frame.\n\n```dot\ndigraph { a }\n```";
    let mut live = Live::with(diagram_hook(&calls));
    let mut figure = None;
    for chunk in reply.as_bytes().chunks(3) {
        live.push(std::str::from_utf8(chunk).unwrap());
        live.play(FRAME_MS);
        assert!(
            live.all(".diagram .caret").is_empty(),
            "the caret stays out of a diagram"
        );
        let drawn = live.all(".diagram figure");
        match (&figure, drawn.first()) {
            (None, Some(first)) => figure = Some(first.clone()),
            (Some(kept), Some(first)) => assert!(kept.is_same_node(Some(first)), "kept as drawn"),
            (Some(_), None) => panic!("the diagram's drawing went: {}", live.body.inner_html()),
            (None, None) => {
                assert_eq!(
                    *calls.borrow(),
                    Vec::<String>::new(),
                    "not while the block plays out"
                );
            }
        }
    }
    live.play_out();
    assert!(live.settled.is_none());
    let mermaid = r#"diagram Some("mermaid") mermaid: "graph TD\n  A-->B\n""#.to_string();
    assert_eq!(
        *calls.borrow(),
        vec![mermaid.clone()],
        "once, as the language is named"
    );
    assert!(
        figure
            .unwrap()
            .is_same_node(Some(&live.one(".diagram figure")))
    );
    assert_eq!(
        live.all(".code-block").len(),
        2,
        "the rust block and the dot block still playing"
    );
    live.finish();
    while live.settled.is_none() && live.now < 10_000.0 {
        live.play(FRAME_MS);
        assert!(
            live.all(".diagram .caret").is_empty(),
            "the caret stays out of a diagram"
        );
    }
    assert_eq!(live.settled.as_deref(), Some(reply));
    let dot = r#"diagram Some("dot") dot: "digraph { a }\n""#.to_string();
    assert_eq!(*calls.borrow(), vec![mermaid.clone(), dot.clone()]);
    assert_eq!(
        live.all(".code-block").len(),
        1,
        "{}",
        live.body.inner_html()
    );
    assert!(live.all(".caret").is_empty());

    let reloaded = body();
    draw_reply(&reloaded, reply, &diagram_hook(&calls));
    assert_eq!(
        *calls.borrow(),
        vec![mermaid.clone(), dot.clone(), mermaid, dot]
    );
    assert_eq!(
        live.body.inner_html(),
        reloaded.inner_html(),
        "R10, with the same hook"
    );
}

/// The markup a reply's maths is drawn as, one entry per math span: its element's name and, for
/// MathML, its `display`, or the TeX drawn as code.
fn maths_drawn(body: &Element) -> Vec<String> {
    let found = body.query_selector_all("math, code.math").unwrap();
    (0..found.length())
        .filter_map(|i| found.item(i))
        .map(|node| {
            let element: &Element = node.unchecked_ref();
            match element.namespace_uri().as_deref() {
                Some("http://www.w3.org/1998/Math/MathML") => format!(
                    "math {} {}",
                    element.get_attribute("display").unwrap_or_default(),
                    element.inner_html()
                ),
                _ => format!("code {}", element.text_content().unwrap_or_default()),
            }
        })
        .collect()
}

#[wasm_bindgen_test]
fn maths_in_every_notation_is_drawn_as_mathml() {
    let body = body();
    draw_reply(
        &body,
        "So $x^2$, \\(y_1\\), $$\\frac{a}{b}$$ and \\[\\sqrt{z}\\], for $5 or \\frac{.",
        &options(false),
    );
    assert_eq!(
        maths_drawn(&body),
        [
            "math  <msup><mi>x</mi><mn>2</mn></msup>",
            "math  <msub><mi>y</mi><mn>1</mn></msub>",
            "math block <mfrac><mi>a</mi><mi>b</mi></mfrac>",
            "math block <msqrt><mi>z</mi></msqrt>",
        ]
    );
    assert!(
        body.text_content().unwrap().contains("for $5 or \\frac{."),
        "money and a lone command stay text: {}",
        body.inner_html()
    );
}

#[wasm_bindgen_test]
fn tex_mathml_cannot_draw_is_drawn_as_code_saying_why() {
    let body = body();
    draw_reply(
        &body,
        "A $\\left( x$ and $\\unknowncommand{x}$.",
        &options(false),
    );
    assert_eq!(
        maths_drawn(&body),
        ["code \\left( x", "code \\unknowncommand{x}"]
    );
    let code = body.query_selector("code.math").unwrap().unwrap();
    assert!(
        code.get_attribute("title")
            .unwrap()
            .starts_with("Not drawn as maths: "),
        "{}",
        body.inner_html()
    );
}

#[wasm_bindgen_test]
fn maths_never_carries_links_styles_or_handlers() {
    let body = body();
    for tex in [
        "\\href{javascript:alert(1)}{x}",
        "\\style{background:url(https://evil.example)}{x}",
        "\\class{caret}{x}",
        "<mi onclick=\"alert(1)\">x</mi>",
        "\\text{<img src=x onerror=alert(1)>}",
        "\\mathcolor{red}{x} \\color{red} y",
    ] {
        draw_reply(&body, &format!("A ${tex}$ B"), &options(false));
        let all = body.query_selector_all("*").unwrap();
        for i in 0..all.length() {
            let element: Element = all.item(i).unwrap().unchecked_into();
            let names = element.get_attribute_names();
            for name in names.iter() {
                let name = name.as_string().unwrap();
                assert!(
                    !name.starts_with("on") && !["href", "style", "src"].contains(&name.as_str()),
                    "{tex}: {} has {name}",
                    element.outer_html()
                );
            }
            assert!(
                !["script", "img", "a"].contains(&element.local_name().as_str()),
                "{tex}: {}",
                body.inner_html()
            );
        }
    }
}

#[wasm_bindgen_test]
fn live_maths_never_shows_a_delimiter_and_settles_to_mathml() {
    let reply = "Euler: $e^{i\\pi} + 1 = 0$, Pythagoras \\(a^2 + b^2 = c^2\\) and\n\n\
                 $$\\int_0^1 x\\,dx = \\tfrac12$$\n\nthen \\[\\sum_k k\\] done.";
    let mut live = Live::new(false);
    for grapheme in reply.chars() {
        live.push(&grapheme.to_string());
        live.play(FRAME_MS);
        let text = live.body.text_content().unwrap();
        assert!(
            !text.contains('$') && !text.contains("\\(") && !text.contains("\\["),
            "a raw delimiter drawn: {}",
            live.body.inner_html()
        );
    }
    live.finish();
    live.play_out();
    assert!(live.settled.is_some());
    let settled = maths_drawn(&live.body);
    let whole = body();
    draw_reply(&whole, reply, &options(false));
    assert_eq!(settled, maths_drawn(&whole));
    assert_eq!(settled.len(), 4);
    assert!(settled.iter().all(|drawn| drawn.starts_with("math ")));
}

#[wasm_bindgen_test]
fn maths_too_deep_or_too_long_is_drawn_as_code_and_never_overflows_the_stack() {
    let body = body();
    let deep = format!("{}x{}", "{".repeat(4_000), "}".repeat(4_000));
    let fracs = format!("{}x{}", "\\frac{".repeat(600), "}{y}".repeat(600));
    let lefts = format!("{}x{}", "\\left(".repeat(600), "\\right)".repeat(600));
    let long = "x+".repeat(6_000);
    let nested_32 = format!("{}x{}", "\\sqrt{".repeat(32), "}".repeat(32));
    let reply = format!("A ${deep}$ B ${fracs}$ C ${lefts}$ D ${long}x$ E ${nested_32}$.");
    draw_reply(&body, &reply, &options(false));
    let drawn = maths_drawn(&body);
    assert_eq!(drawn.len(), 5, "{drawn:?}");
    for code in &drawn[..4] {
        assert!(code.starts_with("code "), "drawn as code: {}", &code[..40]);
    }
    assert!(drawn[4].starts_with("math "), "32 groups deep is maths");
    let titles: Vec<String> = {
        let found = body.query_selector_all("code.math").unwrap();
        (0..found.length())
            .map(|i| {
                let element: Element = found.item(i).unwrap().unchecked_into();
                element.get_attribute("title").unwrap()
            })
            .collect()
    };
    assert_eq!(
        titles,
        [
            "Not drawn as maths: its groups nest more than 32 deep",
            "Not drawn as maths: its groups nest more than 32 deep",
            "Not drawn as maths: its groups nest more than 32 deep",
            "Not drawn as maths: it is longer than 10000 bytes",
        ]
    );
}
