//! `StreamingMarkdown`: a reply's markdown as it plays out, whole blocks parsed once and the open
//! block at the visible end again on each push.

use portal_core::markdown;
use wasm_bindgen::prelude::*;

use crate::convert;

#[wasm_bindgen(typescript_custom_section)]
const STREAMING_MARKDOWN_TYPES: &'static str = r#"
/** What a `push` or `finish` changed, so a renderer keeps what it drew of the other blocks. */
export interface MarkdownUpdate {
  /**
   * The blocks before this index are as the previous update left them: keep their DOM. Draw the
   * blocks from it on again (they were open, or are new): `blocks(unchanged)`.
   */
  unchanged: number;
  /**
   * Settled blocks before `unchanged` to draw again (`block(index)`): a link reference definition
   * that came later turned some of their text into links. Rare.
   */
  redrawn: number[];
  /** How many blocks are settled now; the others (usually one, at the end) may still change. */
  settled: number;
}
"#;

/// A reply's markdown as it plays out: push the text each frame revealed, then draw the blocks
/// each update says changed. Nothing unfinished flashes as raw syntax at the visible end:
/// `**bold` is drawn bold, and the few characters that are still undecided wait for the next
/// push. Source ranges are UTF-16 offsets into the text pushed so far.
#[wasm_bindgen]
#[derive(Debug, Default)]
pub struct StreamingMarkdown {
    inner: markdown::StreamingMarkdown,
    /// The UTF-16 length of the text pushed so far.
    length: usize,
}

#[wasm_bindgen]
impl StreamingMarkdown {
    /// An empty reply.
    #[wasm_bindgen(constructor)]
    pub fn new() -> StreamingMarkdown {
        StreamingMarkdown::default()
    }

    /// Text newly revealed at the reply's end: a `PlayoutFrame`'s `newText`, which holds whole
    /// characters only. Pushing `""` changes nothing; pushing after `finish` opens the last
    /// block again.
    #[wasm_bindgen(unchecked_return_type = "MarkdownUpdate")]
    pub fn push(
        &mut self,
        #[wasm_bindgen(js_name = revealedText)] revealed: &str,
    ) -> Result<JsValue, JsValue> {
        self.length += convert::utf16_length(revealed);
        convert::markdown::update(&self.inner.push(revealed))
    }

    /// The reply is whole (the playout's frame is `done`, or the stream ended): everything is
    /// drawn as it stands, nothing held back, and every block settles as `renderMarkdown` of the
    /// whole reply gives it.
    #[wasm_bindgen(unchecked_return_type = "MarkdownUpdate")]
    pub fn finish(&mut self) -> Result<JsValue, JsValue> {
        convert::markdown::update(&self.inner.finish())
    }

    /// The reply's blocks from index `from` on (all of them without it): the settled ones first,
    /// then the open ones. After an update, `blocks(update.unchanged)` are the blocks to draw
    /// again.
    #[wasm_bindgen(unchecked_return_type = "MarkdownBlock[]")]
    pub fn blocks(&self, from: Option<u32>) -> Result<JsValue, JsValue> {
        let blocks = self.inner.blocks();
        let from = from.map_or(0, |from| from as usize).min(blocks.len());
        convert::markdown::blocks(&blocks[from..], self.inner.reply(), self.length)
    }

    /// The block at `index`, or `undefined` past the last one: for an update's `redrawn`.
    #[wasm_bindgen(unchecked_return_type = "MarkdownBlock | undefined")]
    pub fn block(&self, index: u32) -> Result<JsValue, JsValue> {
        match self.inner.blocks().get(index as usize) {
            Some(block) => convert::markdown::block(block, self.inner.reply(), self.length),
            None => Ok(JsValue::UNDEFINED),
        }
    }
}
