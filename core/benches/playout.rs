//! Playout cost for a 50,000-character mixed-script reply: time per pushed byte, time per frame
//! (a push and a tick) over a whole 5,000- and 50,000-character reply, and time per tick early
//! and late in the reply. Equal per-frame and per-tick times show that the cost does not grow
//! with the length of the reply.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use portal_core::playout::Playout;
use unicode_segmentation::UnicodeSegmentation;

const REPLY_CLUSTERS: usize = 50_000;
const FRAME_MS: f64 = 1000.0 / 60.0;

/// Prose in several scripts with emoji, flags, combining marks and conjuncts.
fn reply(wanted: usize) -> String {
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
    while clusters < wanted {
        let part = PARTS[i % PARTS.len()];
        clusters += part.graphemes(true).count();
        text.push_str(part);
        i += 1;
    }
    text
}

/// Chunks of about 24 bytes, cut at character boundaries anywhere (inside clusters too).
fn chunked(text: &str) -> Vec<&str> {
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

/// A playout fed one chunk a frame and ticked every frame until `shown` clusters are visible.
fn streamed_until(chunks: &[&str], shown: usize) -> (Playout, f64) {
    let mut playout = Playout::default();
    let mut at = 0.0;
    let mut chunks = chunks.iter();
    while playout.visible_clusters() < shown {
        at += FRAME_MS;
        if let Some(chunk) = chunks.next() {
            playout.push(chunk, at);
        }
        playout.tick(at);
    }
    (playout, at)
}

/// Streams a whole reply, one chunk a frame, until it is done; returns the frame count.
fn stream_to_end(chunks: &[&str]) -> (Playout, u64) {
    let mut playout = Playout::default();
    let mut at = 0.0;
    let mut frames = 0;
    let mut chunks = chunks.iter();
    while !playout.is_done() {
        at += FRAME_MS;
        match chunks.next() {
            Some(chunk) => playout.push(chunk, at),
            None => playout.finish(at),
        }
        playout.tick(at);
        frames += 1;
    }
    (playout, frames)
}

fn bench(c: &mut Criterion) {
    let text = reply(REPLY_CLUSTERS);
    let chunks = chunked(&text);

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

    let mut stream = c.benchmark_group("playout stream");
    stream.sample_size(20);
    for clusters in [REPLY_CLUSTERS / 10, REPLY_CLUSTERS] {
        let reply = reply(clusters);
        let reply_chunks = chunked(&reply);
        let frames = stream_to_end(&reply_chunks).1;
        stream.throughput(Throughput::Elements(frames));
        stream.bench_function(
            format!("push and tick per frame, {clusters}-character reply"),
            |b| b.iter(|| stream_to_end(&reply_chunks)),
        );
    }
    stream.finish();

    let mut tick = c.benchmark_group("playout tick");
    for (name, shown) in [("early", 1_000), ("late", REPLY_CLUSTERS - 2_000)] {
        let playout_at = streamed_until(&chunks, shown);
        tick.bench_function(format!("tick, {name} in a 50k reply"), |b| {
            b.iter_batched(
                || playout_at.0.clone(),
                |mut playout| playout.tick(playout_at.1 + FRAME_MS),
                BatchSize::SmallInput,
            )
        });
    }
    tick.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
