//! R7: a word resolves from its blur as one piece, timed from the frame that revealed its first
//! letter, however many frames revealed the rest of it; resolved text is one plain piece.

use portal_core::playout::{Piece, Reveals};

const WINDOW_MS: f64 = 450.0;

/// Records `frames` (revealed end, time), then draws `text` lying at byte `start` at `now` and
/// compares the pieces, written `text` for a resolved piece and `text@age` (milliseconds since its
/// frame) for a resolving one.
fn check(frames: &[(usize, f64)], text: &str, start: usize, now: f64, expected: &[&str]) {
    let mut reveals = Reveals::new(WINDOW_MS);
    for &(end, at) in frames {
        reveals.record(end, at);
    }
    let drawn: Vec<String> = reveals
        .pieces(text, start, now)
        .into_iter()
        .map(|Piece { text, revealed_ms }| match revealed_ms {
            Some(revealed) => format!("{text}@{}", now - revealed),
            None => text.to_string(),
        })
        .collect();
    assert_eq!(drawn, expected, "pieces of {text:?} at {now} ms");
}

#[test]
fn r7_a_word_revealed_over_several_frames_is_one_piece_timed_from_its_first_letter() {
    // "hello" arrives in three frames; it stays one piece, as old as its first frame.
    check(
        &[(2, 1000.0), (4, 1016.0), (5, 1033.0)],
        "hello",
        0,
        1100.0,
        &["hello@100"],
    );
}

#[test]
fn r7_words_revealed_by_one_frame_share_a_piece_and_later_frames_start_new_ones() {
    // The first frame ends inside "three", which stays with the frame that began it.
    check(
        &[(12, 1000.0), (20, 1016.0)],
        "one two three four",
        0,
        1020.0,
        &["one two three@20", " four@4"],
    );
}

#[test]
fn r7_text_revealed_longer_ago_than_the_window_is_one_plain_piece() {
    check(
        &[(8, 1000.0), (14, 1500.0)],
        "settled words",
        0,
        1500.0,
        &["settled ", "words@0"],
    );
    // The frames that revealed it are forgotten, and nothing before them is taken for recent.
    check(
        &[(8, 1000.0), (14, 1500.0), (20, 2000.0)],
        "settled words",
        0,
        2000.0,
        &["settled words"],
    );
}

#[test]
fn r7_a_leaf_further_into_the_reply_is_timed_by_its_own_bytes() {
    // The leaf starts at byte 10 of the reply (after some formatting).
    check(
        &[(10, 1000.0), (16, 1200.0)],
        "abc def",
        10,
        1300.0,
        &["abc def@100"],
    );
    check(
        &[(13, 1000.0), (17, 1200.0)],
        "abc def",
        10,
        1300.0,
        &["abc@300", " def@100"],
    );
}

#[test]
fn r7_clusters_and_scripts_stay_whole_in_their_words() {
    // A family emoji and Japanese: UAX #29 words, never cut inside a cluster.
    let text = "hi 👨‍👩‍👧 日本語";
    let family_start = 3;
    check(
        &[(family_start, 1000.0), (text.len(), 1300.0)],
        text,
        0,
        1310.0,
        &["hi @310", "👨‍👩‍👧 日本語@10"],
    );
}

#[test]
fn r7_a_long_resolved_start_is_one_piece_before_the_recent_words() {
    // The window forgot the frame that revealed bytes up to 24; the words after it are still
    // resolving, and the resolved start is one piece however many words it holds.
    check(
        &[(24, 1000.0), (30, 1500.0), (40, 1600.0)],
        "an old resolved sentence then new words",
        0,
        1700.0,
        &["an old resolved sentence", " then @200", "new words@100"],
    );
}
