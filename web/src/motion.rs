//! How live text moves, as style values for each drawn frame: a word resolving from its blur
//! (R7) and the caret breathing (R8). The live text sets them in the elements' own style on the
//! frames it draws, rather than CSS animations changing them on every frame the screen shows, so
//! the page does nothing between those frames. style.css turns both off under reduced motion
//! (R14).

/// How long a word takes to resolve from its blur.
pub const RESOLVE_MS: f64 = 450.0;

/// One breath of the caret, from faint and small to full and back.
const BREATH_MS: f64 = 1_400.0;

/// A resolving word's style `age_ms` after it was revealed: from a 5 px blur at a quarter of its
/// ink to sharp and whole, easing out.
pub fn resolving(age_ms: f64) -> String {
    let left = (1.0 - age_ms / RESOLVE_MS).clamp(0.0, 1.0);
    let left = left * left;
    format!(
        "filter:blur({}px);opacity:{}",
        hundredths(5.0 * left),
        hundredths(1.0 - 0.75 * left)
    )
}

/// The caret's style at `now` (ms on the page's clock, so a moved caret keeps its phase): its
/// ink and size swell and fade once every [`BREATH_MS`], easing in and out.
pub fn breathing(now: f64) -> String {
    let phase = (now.max(0.0) % BREATH_MS) / BREATH_MS;
    let rise = 1.0 - (2.0 * phase - 1.0).abs();
    let swell = rise * rise * (3.0 - 2.0 * rise);
    format!(
        "opacity:{};transform:scale({})",
        hundredths(0.25 + 0.65 * swell),
        hundredths(0.85 + 0.15 * swell)
    )
}

/// `value` (0 or more) to two decimals, written with whole numbers: printing floats would add
/// to the bundle.
fn hundredths(value: f64) -> String {
    let hundredths = (value.max(0.0) * 100.0).round() as u32;
    format!("{}.{:02}", hundredths / 100, hundredths % 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r7_a_word_resolves_from_a_blur_to_sharp() {
        assert_eq!(resolving(0.0), "filter:blur(5.00px);opacity:0.25");
        assert_eq!(
            resolving(RESOLVE_MS / 2.0),
            "filter:blur(1.25px);opacity:0.81"
        );
        assert_eq!(resolving(RESOLVE_MS), "filter:blur(0.00px);opacity:1.00");
        assert_eq!(resolving(10.0 * RESOLVE_MS), resolving(RESOLVE_MS));
    }

    #[test]
    fn r8_the_caret_breathes_once_every_breath() {
        assert_eq!(breathing(0.0), "opacity:0.25;transform:scale(0.85)");
        assert_eq!(
            breathing(BREATH_MS / 2.0),
            "opacity:0.90;transform:scale(1.00)"
        );
        assert_eq!(breathing(BREATH_MS), breathing(0.0));
        assert_eq!(
            breathing(BREATH_MS / 4.0),
            "opacity:0.57;transform:scale(0.93)"
        );
    }
}
