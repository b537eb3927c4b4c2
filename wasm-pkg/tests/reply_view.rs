//! `ReplyView` in the browser: a reply pushed in chunks and finished settles to the same DOM as
//! `drawReply` of the whole reply, `settled` resolving with it; a cancelled reply never settles;
//! the code and diagram hooks are called once a reply or a block settled, once, and what they
//! throw stops no drawing; options are refused by name.
#![cfg(target_arch = "wasm32")]

use std::time::Duration;

use portal_wasm::ReplyView;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const REPLY: &str = "## The plan 👨‍👩‍👧‍👦\n\nThree days in **Kyoto**, two in *Tokyo* 🇯🇵, \
    café stops ☕ and [the map](https://example.com/map).\n\n- [x] trains\n- [ ] the Thai \
    restaurant (น้ำ)\n\n```rust\nlet days = 5;\n```\n\n| city | days |\n|---|---:|\n| Kyoto | 3 |\n";

fn element() -> web_sys::HtmlElement {
    let document = web_sys::window()
        .and_then(|w| w.document())
        .expect("a document");
    let element = document.create_element("div").expect("a div");
    document
        .body()
        .expect("a body")
        .append_child(&element)
        .expect("appended");
    element.unchecked_into()
}

/// The reply as JavaScript string chunks of one to seven UTF-16 units, so some end between the
/// halves of a surrogate pair and many inside a grapheme cluster.
fn chunks(reply: &str) -> Vec<js_sys::JsString> {
    let reply = js_sys::JsString::from(reply);
    let mut out = Vec::new();
    let (mut at, mut n) = (0, 0);
    while at < reply.length() {
        let end = (at + 1 + n % 7).min(reply.length());
        out.push(reply.slice(at, end));
        (at, n) = (end, n + 1);
    }
    out
}

async fn sleep(duration: Duration) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let window = web_sys::window().expect("a window");
        let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(
            &resolve,
            duration.as_millis() as i32,
        );
    });
    let _ = JsFuture::from(promise).await;
}

#[wasm_bindgen_test]
async fn pushed_and_finished_settles_to_the_reloaded_dom() {
    let live = element();
    let mut view = ReplyView::new(&live, None).expect("a view");
    for (n, chunk) in chunks(REPLY).iter().enumerate() {
        view.push(chunk);
        if n % 5 == 0 {
            sleep(Duration::from_millis(16)).await;
        }
    }
    view.finish();
    let settled = JsFuture::from(view.settled()).await.expect("settled");
    assert_eq!(settled.as_string().as_deref(), Some(REPLY));
    assert_eq!(view.drawn_length() as usize, REPLY.encode_utf16().count());

    let reloaded = element();
    ReplyView::draw_reply(&reloaded, REPLY, None).expect("drawn");
    assert_eq!(live.inner_html(), reloaded.inner_html());
    assert!(live.class_list().contains("portal-reply"));
    assert!(
        !live.inner_html().contains("caret"),
        "no caret once settled"
    );
}

#[wasm_bindgen_test]
async fn cancelled_never_settles() {
    let body = element();
    let mut view = ReplyView::new(&body, None).expect("a view");
    let settled = std::rc::Rc::new(std::cell::Cell::new(false));
    let seen = settled.clone();
    let on_settle =
        wasm_bindgen::closure::Closure::<dyn FnMut(JsValue)>::new(move |_| seen.set(true));
    let _ = view.settled().then(&on_settle);
    for chunk in chunks(REPLY).iter().take(12) {
        view.push(chunk);
    }
    sleep(Duration::from_millis(300)).await;
    view.cancel();
    let drawn = body.inner_html();
    view.push(&"more text".into());
    view.finish();
    sleep(Duration::from_millis(1500)).await;
    assert!(!settled.get(), "a cancelled reply never settles");
    assert_eq!(
        body.inner_html(),
        drawn,
        "nothing more is drawn after cancel"
    );
}

#[wasm_bindgen_test]
fn options_are_read_and_refused_by_name() {
    let body = element();
    let options = js_sys::JSON::parse(r#"{"reducedMotion":true}"#).expect("JSON");
    ReplyView::new(&body, Some(options)).expect("a view");
    assert_eq!(
        body.get_attribute("data-reduced-motion").as_deref(),
        Some("true")
    );

    for (options, field) in [
        (r#"{"reducedMotoin":true}"#, "options.reducedMotoin"),
        (r#"{"reducedMotion":"yes"}"#, "options.reducedMotion"),
        ("[]", "options"),
        ("{ highlightCode: 'prism' }", "options.highlightCode"),
        ("{ diagrams: () => {} }", "options.diagrams"),
        ("{ diagrams: {} }", "options.diagrams.draw"),
        (
            "{ diagrams: { draw() {}, language: ['mermaid'] } }",
            "options.diagrams.language",
        ),
        (
            "{ diagrams: { draw() {}, languages: 'mermaid' } }",
            "options.diagrams.languages",
        ),
        (
            "{ diagrams: { draw() {}, languages: ['dot', 2] } }",
            "options.diagrams.languages[1]",
        ),
        ("{ diagrams: { draw: 'mermaid' } }", "options.diagrams.draw"),
    ] {
        let options = object(options);
        let error = ReplyView::new(&element(), Some(options)).expect_err("refused");
        let name = js_sys::Reflect::get(&error, &"name".into()).expect("a name");
        let got = js_sys::Reflect::get(&error, &"field".into()).expect("a field");
        assert_eq!(name.as_string().as_deref(), Some("InputError"));
        assert_eq!(got.as_string().as_deref(), Some(field));
    }
    // Left out, undefined or null, a hook is not called.
    let options = object("{ highlightCode: null, diagrams: undefined, reducedMotion: undefined }");
    ReplyView::new(&element(), Some(options)).expect("a view");
}

/// A JavaScript value written as a JavaScript expression.
fn object(expression: &str) -> JsValue {
    js_sys::Function::new_no_args(&format!("return ({expression});"))
        .call0(&JsValue::NULL)
        .expect("an expression")
}

/// What the hooks of `options` (from [`hooks`]) were called with so far, as JSON.
fn calls() -> String {
    let calls = object("globalThis.hookCalls");
    js_sys::JSON::stringify(&calls).expect("JSON").into()
}

/// Options whose hooks note each call in `globalThis.hookCalls`: the code hook the element's
/// id, the diagram hook the container's class and language attribute, the source and the
/// language, and draws a `<figure>` of the source into the container. With `throwing`, each hook
/// throws after noting its call.
fn hooks(throwing: bool) -> JsValue {
    let throw = if throwing {
        "throw new Error('a hook broke');"
    } else {
        ""
    };
    object(&format!(
        "(globalThis.hookCalls = [], {{
            highlightCode(element) {{ hookCalls.push(['code', element.id]); {throw} }},
            diagrams: {{
                languages: ['mermaid', 'dot'],
                draw(element, source, language) {{
                    hookCalls.push(['diagram', element.className, element.dataset.language, source, language]);
                    {throw}
                    element.append(Object.assign(document.createElement('figure'), {{ textContent: source }}));
                }},
            }},
        }})"
    ))
}

const DIAGRAMS: &str = "A flow:\n\n```Mermaid\ngraph TD\n  A-->B\n```\n\nWords after the diagram, which \
    play out a while.\n\n```rust\nlet a = 1;\n```\n\n```dot\ndigraph { a }\n```";

/// The calls [`DIAGRAMS`] makes: each diagram once, then the code hook with the element `id`.
fn diagram_calls(id: &str) -> String {
    format!(
        r#"[["diagram","diagram","mermaid","graph TD\n  A-->B\n","mermaid"],["diagram","diagram","dot","digraph {{ a }}\n","dot"],["code","{id}"]]"#
    )
}

/// Plays [`DIAGRAMS`] into a view of `options` and returns its element, once settled, checking
/// that no hook is called before its block or the reply settled.
async fn play_diagrams(options: JsValue, id: &str) -> web_sys::HtmlElement {
    let live = element();
    live.set_id(id);
    let mut view = ReplyView::new(&live, Some(options)).expect("a view");
    for (n, chunk) in chunks(DIAGRAMS).iter().enumerate() {
        view.push(chunk);
        if n % 3 == 0 {
            sleep(Duration::from_millis(16)).await;
        }
        let calls = calls();
        assert!(
            !calls.contains("code"),
            "no code hook before it settled: {calls}"
        );
        assert!(
            !calls.contains("digraph"),
            "no diagram before its block settled: {calls}"
        );
    }
    view.finish();
    let settled = JsFuture::from(view.settled()).await.expect("settled");
    assert_eq!(settled.as_string().as_deref(), Some(DIAGRAMS));
    live
}

#[wasm_bindgen_test]
async fn hooks_are_called_once_their_reply_or_block_settled_once() {
    let live = play_diagrams(hooks(false), "live").await;
    assert_eq!(calls(), diagram_calls("live"));
    assert_eq!(
        live.query_selector_all(".diagram figure").unwrap().length(),
        2
    );
    assert_eq!(live.query_selector_all(".code-block").unwrap().length(), 1);

    let reloaded = element();
    reloaded.set_id("reloaded");
    ReplyView::draw_reply(&reloaded, DIAGRAMS, Some(hooks(false))).expect("drawn");
    assert_eq!(calls(), "[]", "called after the drawing, in a microtask");
    sleep(Duration::ZERO).await;
    assert_eq!(calls(), diagram_calls("reloaded"));
    assert_eq!(
        live.inner_html(),
        reloaded.inner_html(),
        "R10, with the same hooks"
    );
}

#[wasm_bindgen_test]
async fn a_throwing_hook_stops_no_drawing() {
    let window = web_sys::window().expect("a window");
    let errors = object(
        "(globalThis.hookErrors = [], (event) => { hookErrors.push(event.message); event.preventDefault(); })",
    );
    window
        .add_event_listener_with_callback("error", errors.unchecked_ref())
        .expect("listening");
    let live = play_diagrams(hooks(true), "throwing").await;
    assert_eq!(
        calls(),
        diagram_calls("throwing"),
        "every hook called once all the same"
    );
    assert_eq!(live.query_selector_all(".diagram").unwrap().length(), 2);
    assert_eq!(
        live.query_selector_all(".diagram figure").unwrap().length(),
        0
    );
    // The rest is drawn and settled: the DOM a reload draws with the same hooks.
    let reloaded = element();
    ReplyView::draw_reply(&reloaded, DIAGRAMS, Some(hooks(true))).expect("drawn");
    sleep(Duration::ZERO).await;
    assert_eq!(live.inner_html(), reloaded.inner_html());
    window
        .remove_event_listener_with_callback("error", errors.unchecked_ref())
        .expect("let go");
    let reported = js_sys::JSON::stringify(&object("globalThis.hookErrors")).expect("JSON");
    assert_eq!(
        String::from(reported).matches("a hook broke").count(),
        6,
        "each throw reported as the page's uncaught error"
    );
}
