//! Any text as a reply's markdown: parsed whole, and played out in pieces of any size, it never
//! panics; settled blocks stay settled; played out and finished, it ends as the whole reply
//! parsed at once; and the tree serialises (its nesting is bounded). Seed with the documents
//! under `tests/markdown/`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use portal_core::markdown::{StreamingMarkdown, parse};

/// A reply plays out in about this many pieces at least as large as its length over it, so that
/// a long open block (parsed again at every piece) keeps one input quick.
const PIECES: usize = 128;

fuzz_target!(|data: &[u8]| {
    let Ok(reply) = std::str::from_utf8(data) else {
        return;
    };
    let whole = parse(reply);
    serde_json::to_string(&whole).expect("a tree serialises");

    let coarse = reply.len() / PIECES;
    let mut markdown = StreamingMarkdown::new();
    let mut from = 0;
    while from < reply.len() {
        // Piece sizes come from the reply's own bytes, so the fuzzer steers them too.
        let mut to = (from + 1 + coarse + usize::from(reply.as_bytes()[from] % 7)).min(reply.len());
        while !reply.is_char_boundary(to) {
            to += 1;
        }
        let update = markdown.push(&reply[from..to]);
        assert!(update.unchanged <= update.settled);
        assert!(update.settled <= markdown.blocks().len());
        assert!(update.redrawn.iter().all(|&index| index < update.unchanged));
        from = to;
    }
    markdown.finish();
    assert_eq!(markdown.blocks(), whole.as_slice(), "played out, the reply ends as parsed whole");
});
