//! Any bytes as an OpenAI-compatible model's event stream, split anywhere: the decoder never
//! panics, and the same bytes give the same events however they are split. Seed with
//! `tests/fixtures/openai/*.sse`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use portal_model::openai::StreamDecoder;

/// The events and whether the stream read to its end without an error.
fn decode(pieces: &[&[u8]]) -> (Vec<String>, bool) {
    let mut decoder = StreamDecoder::new();
    let mut out = Vec::new();
    for piece in pieces {
        if decoder.push(piece, &mut out).is_err() {
            return (out.iter().map(|e| format!("{e:?}")).collect(), false);
        }
    }
    let ok = decoder.finish(&mut out).is_ok();
    (out.iter().map(|e| format!("{e:?}")).collect(), ok)
}

fuzz_target!(|data: &[u8]| {
    let Some((&split, bytes)) = data.split_first() else {
        return;
    };
    let whole = decode(&[bytes]);
    let at = (split as usize * bytes.len()) / 256;
    let (head, tail) = bytes.split_at(at);
    assert_eq!(decode(&[head, tail]), whole, "split at {at}");
    let single: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(decode(&single), whole, "split into bytes");
});
