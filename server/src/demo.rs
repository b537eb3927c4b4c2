//! The built-in demo model: deterministic, offline, and realistic enough to show live text.
//!
//! It streams prose in mixed scripts (ZWJ emoji, flags, combining marks, CJK, Thai) in uneven
//! chunks that may end inside a grapheme cluster, with pauses, and now and then releases a whole
//! sentence at once after a pause, as a guardrail check would.

use std::time::Duration;

use futures_util::stream;
use portal_core::BlockKind;

use crate::model::{Model, ModelOutput, OutputStream};

/// The demo model. Its pace multiplies every pause (0 streams as fast as possible).
#[derive(Debug, Clone)]
pub struct DemoModel {
    pace: f64,
}

impl DemoModel {
    pub fn new(pace: f64) -> Self {
        DemoModel {
            pace: pace.max(0.0),
        }
    }

    /// The pieces of the answer to `message` with the pause before each, in order.
    pub fn script(&self, message: &str) -> Vec<(Duration, ModelOutput)> {
        let mut random = Lcg::new(seed(message));
        let mut script = Vec::new();
        let topic = topic(message);
        push_block(
            &mut script,
            &mut random,
            BlockKind::Thinking,
            &format!(
                "The person asks about {topic}. A short, friendly overview in a few scripts will do."
            ),
            false,
        );
        let answer = answer_text(&topic, &mut random);
        push_block(&mut script, &mut random, BlockKind::Text, &answer, true);
        script
            .into_iter()
            .map(|(ms, piece)| {
                (
                    Duration::from_secs_f64(ms as f64 * self.pace / 1000.0),
                    piece,
                )
            })
            .collect()
    }
}

impl Model for DemoModel {
    fn label(&self) -> &str {
        "Demo model"
    }

    fn is_demo(&self) -> bool {
        true
    }

    fn answer(&self, message: &str) -> OutputStream {
        let script = self.script(message);
        Box::pin(stream::unfold(
            script.into_iter(),
            |mut pieces| async move {
                let (pause, piece) = pieces.next()?;
                if !pause.is_zero() {
                    tokio::time::sleep(pause).await;
                }
                Some((Ok(piece), pieces))
            },
        ))
    }
}

const PARAGRAPHS: &[&str] = &[
    "Here is a short tour of {topic}, written by the demo model 👩🏽‍💻. It runs on this machine, needs no network and always answers the same way.",
    "Families of emoji stay whole as they stream in: 👨‍👩‍👧‍👦 and 👩🏾‍🔬 never show half a person. Flags too: 🇯🇵 🇧🇷 🇪🇺, and keycaps like 1️⃣ 2️⃣ 3️⃣.",
    "Accents may arrive as a letter and a separate mark, as in cafe\u{301} or re\u{301}sume\u{301}; the mark is never drawn apart from its letter.",
    "日本語の文章もそのまま流れます。東京の天気は晴れ、気温は二十度です。",
    "ภาษาไทยก็แสดงผลได้ถูกต้อง วรรณยุกต์ไม่แยกจากพยัญชนะ เช่น น้ำ ไม้ และ ก๊ก",
    "Hindi works as well: नमस्ते, क्षत्रिय, and Korean: 한국어 문장도 자연스럽게 보입니다.",
    "In short, {topic} reads the same in every script, one character at a time, about six tenths of a second behind the model.",
];

/// The sentence the demo releases in one piece after a pause, as a guardrail check would.
const RELEASED_SENTENCE: &str = " This whole sentence was held back by a check and released at once, so the text speeds up smoothly instead of jumping.";

fn answer_text(topic: &str, random: &mut Lcg) -> String {
    let mut paragraphs: Vec<String> = PARAGRAPHS
        .iter()
        .map(|p| p.replace("{topic}", topic))
        .collect();
    let held = 1 + (random.next() as usize % (paragraphs.len() - 2));
    paragraphs[held].push_str(RELEASED_SENTENCE);
    paragraphs.join("\n\n")
}

fn push_block(
    script: &mut Vec<(u64, ModelOutput)>,
    random: &mut Lcg,
    kind: BlockKind,
    text: &str,
    with_release: bool,
) {
    script.push((250, ModelOutput::Start(kind)));
    let release_at = with_release.then(|| text.find(RELEASED_SENTENCE)).flatten();
    let mut at = 0;
    while at < text.len() {
        if Some(at) == release_at {
            script.push((1200, ModelOutput::Text(RELEASED_SENTENCE.to_string())));
            at += RELEASED_SENTENCE.len();
            continue;
        }
        let rest = &text[at..];
        let want = 1 + (random.next() % 14) as usize;
        let mut end = rest.char_indices().nth(want).map_or(rest.len(), |(i, _)| i);
        if let Some(release) = release_at.filter(|r| *r > at && *r < at + end) {
            end = release - at;
        }
        let pause = match random.next() % 20 {
            0 => 350,
            1..=3 => 90,
            _ => 12 + random.next() % 40,
        };
        script.push((pause, ModelOutput::Text(rest[..end].to_string())));
        at += end;
    }
    script.push((0, ModelOutput::End));
}

fn topic(message: &str) -> String {
    let words: Vec<&str> = message
        .split_whitespace()
        .filter(|w| !w.starts_with('/'))
        .take(6)
        .collect();
    if words.is_empty() {
        "your question".to_string()
    } else {
        format!("“{}”", words.join(" "))
    }
}

fn seed(message: &str) -> u64 {
    message.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// A small deterministic generator, so the demo answers the same message the same way.
struct Lcg(u64);

impl Lcg {
    fn new(seed: u64) -> Self {
        Lcg(seed | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(script: &[(Duration, ModelOutput)]) -> String {
        script
            .iter()
            .filter_map(|(_, piece)| match piece {
                ModelOutput::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn demo_is_deterministic() {
        let model = DemoModel::new(1.0);
        assert_eq!(model.script("hello there"), model.script("hello there"));
    }

    #[test]
    fn demo_streams_hard_clusters_in_uneven_chunks() {
        let script = DemoModel::new(1.0).script("tell me about scripts");
        let text = text_of(&script);
        for hard in ["👩🏽‍💻", "👨‍👩‍👧‍👦", "🇯🇵", "e\u{301}", "日本語", "ภาษาไทย"]
        {
            assert!(text.contains(hard), "demo text holds {hard}");
        }
        let sizes: std::collections::BTreeSet<usize> = script
            .iter()
            .filter_map(|(_, p)| match p {
                ModelOutput::Text(t) => Some(t.chars().count()),
                _ => None,
            })
            .collect();
        assert!(sizes.len() > 5, "chunks are uneven: {sizes:?}");
        assert!(
            script
                .iter()
                .any(|(pause, p)| *pause >= Duration::from_secs(1)
                    && matches!(p, ModelOutput::Text(t) if t == RELEASED_SENTENCE)),
            "a whole sentence is released after a pause"
        );
    }

    #[test]
    fn demo_pace_zero_has_no_pauses() {
        let script = DemoModel::new(0.0).script("x");
        assert!(script.iter().all(|(pause, _)| pause.is_zero()));
    }
}
