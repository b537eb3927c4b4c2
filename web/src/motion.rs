//! How live text moves: a word resolving from its blur (R7), in steps style.css draws, and the
//! caret breathing (R8), by how far into a breath it is. The live text sets them on the frames it
//! draws, rather than CSS animations changing them on every frame the screen shows (an inline
//! word's animation runs on the main thread, and a caret's animation begins again each time the
//! caret moves to a new list item or cell). While no frame is drawn the caret rests, breathing
//! by a CSS animation the compositor runs. style.css turns all of it off under reduced motion
//! (R14).

/// How long a word takes to resolve from its blur.
pub const RESOLVE_MS: f64 = 450.0;

/// One breath of the caret, from faint and small to full and back.
const BREATH_MS: u64 = 1_400;

/// How many steps a word resolves in: style.css draws each (`.w.r0` to `.w.r5`), and a resolved
/// word has none. A frame changes a word's class only when it moves on a step, which costs the
/// page far less than writing its style each frame; a step lasts 75 ms, about as long as one or
/// two drawn frames, so a frame restyles about half its resolving words (docs/bench.md).
pub const RESOLVE_STEPS: u8 = 6;

/// The step of a word `age_ms` after it was revealed; [`RESOLVE_STEPS`] once it has resolved.
pub fn resolving_step(age_ms: f64) -> u8 {
    let progress = (age_ms / RESOLVE_MS).clamp(0.0, 1.0);
    ((progress * f64::from(RESOLVE_STEPS)) as u8).min(RESOLVE_STEPS)
}

/// The classes of a resolving word at `step`.
pub fn resolving_class(step: u8) -> &'static str {
    const CLASSES: [&str; RESOLVE_STEPS as usize + 1] =
        ["w r0", "w r1", "w r2", "w r3", "w r4", "w r5", "w"];
    CLASSES[usize::from(step.min(RESOLVE_STEPS))]
}

/// The caret's style on a frame drawn at `now` (ms on the page's clock, so a moved caret keeps its
/// phase): how far into its swell it is, 0 to 100, as `--breath`, from which style.css makes its
/// ink and size. It swells and fades once every [`BREATH_MS`], easing in and out.
pub fn breathing(now: f64) -> String {
    let phase = into_breath(now) as f64 / BREATH_MS as f64;
    let rise = 1.0 - (2.0 * phase - 1.0).abs();
    let swell = rise * rise * (3.0 - 2.0 * rise);
    format!("--breath:{}", (swell * 100.0 + 0.5) as u32)
}

/// The caret's style when it rests at `now` (no frame is drawn while the stream pauses): its
/// breath as style.css's animation (`.caret.resting`), begun as long ago as [`breathing`] is into
/// one, so it breathes on in its phase with no work for the page.
pub fn resting(now: f64) -> String {
    format!("animation-delay:-{}ms", into_breath(now))
}

/// How far into its breath the caret is at `now`, in whole milliseconds (so no float remainder
/// is needed).
fn into_breath(now: f64) -> u64 {
    (now.max(0.0) as u64) % BREATH_MS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r7_a_word_resolves_from_a_blur_in_steps() {
        assert_eq!(resolving_class(resolving_step(0.0)), "w r0");
        assert_eq!(resolving_class(resolving_step(RESOLVE_MS / 2.0)), "w r3");
        assert_eq!(resolving_class(resolving_step(RESOLVE_MS * 0.99)), "w r5");
        assert_eq!(resolving_class(resolving_step(RESOLVE_MS)), "w");
        assert_eq!(resolving_step(-1.0), 0);
        assert_eq!(resolving_step(10.0 * RESOLVE_MS), RESOLVE_STEPS);
    }

    #[test]
    fn r8_the_caret_breathes_once_every_breath() {
        assert_eq!(breathing(0.0), "--breath:0");
        assert_eq!(breathing(350.0), "--breath:50");
        assert_eq!(breathing(700.0), "--breath:100");
        assert_eq!(breathing(1_400.0), breathing(0.0));
    }

    #[test]
    fn r8_a_resting_caret_breathes_on_in_its_phase() {
        assert_eq!(resting(0.0), "animation-delay:-0ms");
        assert_eq!(resting(350.0), "animation-delay:-350ms");
        assert_eq!(resting(1_750.0), resting(350.0));
        assert_eq!(resting(-5.0), resting(0.0));
    }
}
