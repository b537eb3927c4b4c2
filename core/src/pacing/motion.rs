//! How live text moves: a word resolving from its blur (R7), in steps a front end draws (one
//! class each, say), and the caret breathing (R8), by how far into a breath it is. A drawer sets
//! them on the frames it draws, rather than CSS animations changing them on every frame the screen
//! shows (an inline word's animation runs on the main thread, and a caret's animation begins
//! again each time the caret moves to a new list item or cell). While no frame is drawn the caret
//! rests, breathing by an animation the compositor runs, begun [`into_breath`] ago.

/// How long a word takes to resolve from its blur.
pub const RESOLVE_MS: f64 = 450.0;

/// One breath of the caret, from faint and small to full and back.
pub const BREATH_MS: u64 = 1_400;

/// How many steps a word resolves in: a drawer draws each (step 0, the most blurred, to step
/// `RESOLVE_STEPS - 1`), and a resolved word has none. A frame changes a word only when it moves
/// on a step, which costs the page far less than writing its style each frame; a step lasts
/// 75 ms, about as long as one or two drawn frames, so a frame restyles about half its resolving
/// words (docs/bench.md).
pub const RESOLVE_STEPS: u8 = 6;

/// The step of a word `age_ms` after it was revealed; [`RESOLVE_STEPS`] once it has resolved.
pub fn resolving_step(age_ms: f64) -> u8 {
    let progress = (age_ms / RESOLVE_MS).clamp(0.0, 1.0);
    ((progress * f64::from(RESOLVE_STEPS)) as u8).min(RESOLVE_STEPS)
}

/// How far into its swell the caret is on a frame drawn at `now` (ms on the page's clock, so a
/// moved caret keeps its phase), 0 to 100. It swells and fades once every [`BREATH_MS`], easing in
/// and out.
pub fn breath(now: f64) -> u32 {
    let phase = into_breath(now) as f64 / BREATH_MS as f64;
    let rise = 1.0 - (2.0 * phase - 1.0).abs();
    let swell = rise * rise * (3.0 - 2.0 * rise);
    (swell * 100.0 + 0.5) as u32
}

/// How far into its breath the caret is at `now`, in whole milliseconds: a resting caret's
/// animation begun this long ago breathes on in the phase [`breath`] gives it.
pub fn into_breath(now: f64) -> u64 {
    (now.max(0.0) as u64) % BREATH_MS
}
