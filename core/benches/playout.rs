//! Playout cost for a 50,000-character mixed-script reply: time per pushed byte, and time per
//! tick early and late in the reply (equal times show that a tick does not depend on how long
//! the reply already is).

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use portal_core::playout::Playout;
use unicode_segmentation::UnicodeSegmentation;

const REPLY_CLUSTERS: usize = 50_000;
const FRAME_MS: f64 = 1000.0 / 60.0;

/// Prose in several scripts with emoji, flags, combining marks and conjuncts.
fn reply() -> String {
    const PARTS: &[&str] = &[
        "The quarterly figures were restated in March; ",
        "le café était fermé à l'heure prévue, ",
        "東京の天気は晴れです。",
        "مرحبا بكم في البوابة ",
        "नमस्ते, क्षमा कीजिए ",
        "ภาษาไทยน้ำ ",
        "한국어 텍스트 ",
        "👨\u{200d}👩\u{200d}👧\u{200d}👦 👍🏽 🇩🇪🇯🇵 1\u{fe0f}\u{20e3} e\u{301}\r\n",
    ];
    let mut text = String::new();
    let mut clusters = 0;
    let mut i = 0;
    while clusters < REPLY_CLUSTERS {
        let part = PARTS[i % PARTS.len()];
        clusters += part.graphemes(true).count();
        text.push_str(part);
        i += 1;
    }
    text
}

/// Chunks of about 24 bytes, cut at character boundaries anywhere (inside clusters too).
fn chunks(text: &str) -> Vec<&str> {
    let mut chunks = Vec::new();
    let mut from = 0;
    while from < text.len() {
        let mut to = (from + 24).min(text.len());
        while !text.is_char_boundary(to) {
            to += 1;
        }
        chunks.push(&text[from..to]);
        from = to;
    }
    chunks
}

/// A playout streamed at about 200 characters a second and ticked every frame until `shown`
/// clusters are visible.
fn streamed_until(chunks: &[&str], shown: usize) -> (Playout, f64, usize) {
    let mut playout = Playout::default();
    let mut at = 0.0;
    let mut next = 0;
    while playout.visible_clusters() < shown {
        at += FRAME_MS;
        for chunk in chunks.iter().skip(next).take(1) {
            playout.push(chunk, at);
            next += 1;
        }
        playout.tick(at);
    }
    (playout, at, next)
}

fn bench(c: &mut Criterion) {
    let text = reply();
    let chunks = chunks(&text);

    let mut push = c.benchmark_group("playout push");
    push.throughput(Throughput::Bytes(text.len() as u64));
    push.bench_function("50k-character reply in 24-byte chunks", |b| {
        b.iter_batched(
            Playout::default,
            |mut playout| {
                for (i, chunk) in chunks.iter().enumerate() {
                    playout.push(chunk, i as f64 * FRAME_MS);
                }
                playout
            },
            BatchSize::SmallInput,
        )
    });
    push.finish();

    let mut tick = c.benchmark_group("playout tick");
    for (name, shown) in [("early", 1_000), ("late", REPLY_CLUSTERS - 2_000)] {
        let (playout, at, next) = streamed_until(&chunks, shown);
        tick.bench_function(format!("push and tick, {name} in a 50k reply"), |b| {
            b.iter_batched(
                || playout.clone(),
                |mut playout| {
                    playout.push(chunks[next], at + FRAME_MS);
                    playout.tick(at + FRAME_MS)
                },
                BatchSize::SmallInput,
            )
        });
        tick.bench_function(format!("tick, {name} in a 50k reply"), |b| {
            b.iter_batched(
                || playout.clone(),
                |mut playout| playout.tick(at + FRAME_MS),
                BatchSize::SmallInput,
            )
        });
    }
    tick.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
