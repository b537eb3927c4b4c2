//! Any bytes as a transcript: parsing and validating never panic; a transcript that parses
//! writes back to JSON that parses to the same transcript, and each of its turns can be drawn
//! (the turn state read from it) and asked what it waits for. Seed with
//! `tests/fixtures/transcripts/`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use portal_core::{Transcript, TurnState};

fuzz_target!(|data: &[u8]| {
    let Ok(json) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(raw) = serde_json::from_str::<Transcript>(json) {
        let _ = portal_core::validate(&raw);
    }
    let Ok(transcript) = portal_core::parse_transcript(json) else {
        return;
    };
    let written = serde_json::to_string(&transcript).expect("a parsed transcript serialises");
    let again = portal_core::parse_transcript(&written).expect("a written transcript parses");
    assert_eq!(again, transcript);
    for turn in &transcript.turns {
        let state = TurnState::stored(turn);
        let _ = state.awaiting();
        let _ = state.answer();
        let _ = turn.awaiting();
    }
});
