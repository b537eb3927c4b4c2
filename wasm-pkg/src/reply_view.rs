//! `ReplyView`: a reply drawn into an element as it streams in, by `portal-drawer`, the drawer
//! Portal's web app draws its own replies with (markdown blocks patched in place, words resolving
//! from a blur, the caret, settling to plain text, reduced motion), on its own animation frames.

use std::rc::Rc;

use portal_drawer::{Diagrams, LiveReply, Options};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::convert::playout::Utf16Tail;
use crate::convert::reply_view as convert;

#[wasm_bindgen(typescript_custom_section)]
const REPLY_VIEW_TYPES: &'static str = r#"
/**
 * How a `ReplyView` draws. Any other field, or a value of the wrong type, throws an `InputError`
 * naming the field. The hooks are called in a microtask after the drawing that calls for them,
 * so they may call the view; what one throws is reported as an uncaught error and the drawing
 * goes on.
 */
export interface ReplyViewOptions {
  /**
   * `true`: words appear without their blur and the caret does not breathe; `false`: motion
   * whatever the system asks. Without it the view follows `prefers-reduced-motion`.
   */
  reducedMotion?: boolean;
  /**
   * Colours the reply's code: called with the view's element once the reply is drawn settled
   * (never while it plays out; once per reply). `highlightCode` from `portal-wasm/highlight`
   * colours each `.code-block`'s `pre code` by its `.code-language` without changing the DOM;
   * any function of the element will do.
   */
  highlightCode?: ((element: HTMLElement) => void) | null;
  /** Fenced code blocks of some languages (`mermaid`) drawn as diagrams by your page. */
  diagrams?: DiagramOptions | null;
}

/**
 * Fenced code blocks drawn as diagrams with the library your page already loads. Once such a
 * block has settled (never while it plays out), an empty `<div class="diagram"
 * data-language="…">` takes the code's place and `draw` is called once with it; the view never
 * changes what you draw inside, and a reloaded reply (`drawReply`) calls `draw` the same way.
 * Top-level blocks only: a diagram inside a list or a quote stays code.
 */
export interface DiagramOptions {
  /** The languages drawn as diagrams, matched without regard to case; `["mermaid"]` if left out. */
  languages?: string[];
  /**
   * Draws a diagram into `element` (empty, in the page), from the block's `source`; `language`
   * is as `languages` names it. It may return a promise: the container stays empty until you
   * fill it, so on a failure show the source or a message yourself.
   */
  draw(element: HTMLElement, source: string, language: string): void | Promise<void>;
}
"#;

/// The class the reply's element gets, which `portal-wasm/reply.css` styles.
const CLASS: &str = "portal-reply";

/// A reply drawn into an element as it streams in: `push` each chunk as it arrives, `finish` when
/// the stream ends, and the view plays it out about 0.6 s behind, one whole character at a time,
/// as markdown without flashes of raw syntax, on its own animation frames, then settles it to
/// plain text (`settled`). Style it with `portal-wasm/reply.css`. The view owns the element's
/// children; give it an empty element. Every string is drawn as text, never as HTML. Its options
/// colour the code (`highlightCode`) and draw the diagrams (`diagrams`) once they settled.
#[wasm_bindgen]
pub struct ReplyView {
    live: LiveReply,
    /// Resolves with the reply once it settled.
    settled: js_sys::Promise,
    /// A high surrogate that ended the last pushed string, waiting for its other half.
    utf16: Utf16Tail,
}

impl std::fmt::Debug for ReplyView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplyView")
            .field("live", &self.live)
            .finish_non_exhaustive()
    }
}

#[wasm_bindgen]
impl ReplyView {
    /// A view drawing a new reply into `element`, which it empties. Throws an `InputError` for
    /// options it does not know.
    #[wasm_bindgen(constructor)]
    pub fn new(
        element: &web_sys::HtmlElement,
        #[wasm_bindgen(unchecked_optional_param_type = "ReplyViewOptions")] options: Option<
            JsValue,
        >,
    ) -> Result<ReplyView, JsValue> {
        let options = prepare(element, options.as_ref())?;
        let mut resolve = None;
        let settled = js_sys::Promise::new(&mut |done, _| resolve = Some(done));
        let live = LiveReply::new(element.clone().into(), options, move |reply: String| {
            if let Some(resolve) = resolve {
                let _ = resolve.call1(&JsValue::UNDEFINED, &reply.into());
            }
        });
        Ok(ReplyView {
            live,
            settled,
            utf16: Utf16Tail::default(),
        })
    }

    /// Text of the reply as it arrives. A chunk may end anywhere, even between the two halves of
    /// a surrogate pair or inside a character: the unfinished character waits for the next chunk
    /// or for `finish`, and is never drawn in part.
    pub fn push(&mut self, text: &js_sys::JsString) {
        let text = self.utf16.decode(text);
        self.live.push(&text);
    }

    /// The stream ended: what still waits plays out, then the reply settles as plain text and
    /// `settled` resolves. A lone surrogate left at the end shows as one U+FFFD.
    pub fn finish(&mut self) {
        if let Some(lone) = self.utf16.flush() {
            self.live.push(lone);
        }
        self.live.finish();
    }

    /// Stops the reply where it is (the person stopped it, or the stream failed): nothing more
    /// is drawn, what is drawn stays, and `settled` never resolves.
    pub fn cancel(&self) {
        self.live.stop();
    }

    /// Resolves with the whole reply once it has played out and settled; never after `cancel`.
    #[wasm_bindgen(getter, unchecked_return_type = "Promise<string>")]
    pub fn settled(&self) -> js_sys::Promise {
        self.settled.clone()
    }

    /// How much of the reply is drawn, in UTF-16 code units (`reply.slice(0, drawnLength)` is
    /// the drawn text's source): whole characters only.
    #[wasm_bindgen(getter, js_name = drawnLength)]
    pub fn drawn_length(&self) -> u32 {
        self.live.drawn_utf16_len() as u32
    }

    /// A whole reply drawn at once, settled, in place of what `element` held: a reloaded
    /// conversation. The same DOM a `ReplyView` settles to. Throws an `InputError` for options
    /// it does not know.
    #[wasm_bindgen(js_name = drawReply)]
    pub fn draw_reply(
        element: &web_sys::HtmlElement,
        text: &str,
        #[wasm_bindgen(unchecked_optional_param_type = "ReplyViewOptions")] options: Option<
            JsValue,
        >,
    ) -> Result<(), JsValue> {
        let options = prepare(element, options.as_ref())?;
        portal_drawer::draw_reply(element, text, &options);
        Ok(())
    }
}

/// The drawer's options, and `element` emptied and marked for the style sheet (with
/// `data-reduced-motion` when the option is given).
fn prepare(element: &web_sys::HtmlElement, options: Option<&JsValue>) -> Result<Options, JsValue> {
    let convert::ViewOptions {
        reduced_motion,
        highlight_code,
        diagrams,
    } = convert::options(options)?;
    element.set_text_content(None);
    let _ = element.class_list().add_1(CLASS);
    match reduced_motion {
        Some(reduced) => {
            let _ = element.set_attribute(
                "data-reduced-motion",
                if reduced { "true" } else { "false" },
            );
        }
        None => {
            let _ = element.remove_attribute("data-reduced-motion");
        }
    }
    Ok(Options {
        reduced_motion,
        on_code: highlight_code.map(|highlight| {
            Rc::new(move |body: &web_sys::Element| {
                later(
                    highlight
                        .bind1(&JsValue::NULL, body.as_ref())
                        .unchecked_ref(),
                );
            }) as portal_drawer::OnCode
        }),
        diagrams: diagrams.map(|(languages, draw)| Diagrams {
            languages,
            draw: Rc::new(move |container, source, language| {
                let call = draw.bind3(
                    &JsValue::NULL,
                    container.as_ref(),
                    &source.into(),
                    &language.into(),
                );
                later(call.unchecked_ref());
            }),
        }),
    })
}

/// Calls a page's hook in a microtask: after the drawing that called for it, so the hook may call
/// the view, and apart from it, so what the hook throws is the page's uncaught error and never
/// stops a drawing half done.
fn later(call: &js_sys::Function) {
    if let Some(window) = web_sys::window() {
        window.queue_microtask(call);
    }
}
