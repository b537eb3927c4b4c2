//! `ReplyView` in the browser: a reply pushed in chunks and finished settles to the same DOM as
//! `drawReply` of the whole reply, `settled` resolving with it; a cancelled reply never settles;
//! options are refused by name.
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
    ] {
        let options = js_sys::JSON::parse(options).expect("JSON");
        let error = ReplyView::new(&element(), Some(options)).expect_err("refused");
        let name = js_sys::Reflect::get(&error, &"name".into()).expect("a name");
        let got = js_sys::Reflect::get(&error, &"field".into()).expect("a field");
        assert_eq!(name.as_string().as_deref(), Some("InputError"));
        assert_eq!(got.as_string().as_deref(), Some(field));
    }
}
