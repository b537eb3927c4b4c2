//! Streaming markdown cost for a 50,000-character reply revealed at 2,000 characters a second
//! and 60 frames a second (about 33 characters a frame): time per update over the whole reply,
//! per update over its first and last 1,000 characters (equal times show that a frame costs in
//! proportion to the open block, not the reply), and, for comparison, parsing the reply whole
//! (a reloaded reply) and parsing the whole prefix again on a late frame, as a renderer without
//! streaming would.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use portal_core::markdown::{StreamingMarkdown, parse};
use unicode_segmentation::UnicodeSegmentation;

const REPLY_CLUSTERS: usize = 50_000;
const CHARACTERS_PER_SECOND: usize = 2_000;
const FRAMES_PER_SECOND: usize = 60;
/// The stretch at each end of the reply whose updates are compared.
const WINDOW_CLUSTERS: usize = 1_000;

/// One section of a chat reply: a heading, prose with inline formatting in several scripts, a
/// list, code, a table and a quote.
fn section(n: usize) -> String {
    format!(
        "## Section {n}: results and next steps\n\n\
         The quarterly figures were **restated in March**; le café était *fermé* à l'heure \
         prévue. Run `cargo test -p portal-core` to check, read [the guide](https://docs.example.com/{n}) \
         or https://example.org/notes/{n}. 東京の天気は**晴れ**です。 مرحبا بكم في _البوابة_ \
         नमस्ते, क्षमा कीजिए 👨\u{200d}👩\u{200d}👧\u{200d}👦 👍🏽 🇩🇪.\n\n\
         - First point with **strong** text and ~~a correction~~\n\
         - Second point with `inline code` and a [link](https://example.com/{n})\n  \
         - A nested point, e\u{301}te\u{301} with marks\n\
         - [x] A finished task\n\n\
         1. Install the tools\n\
         2. Build the project\n\n\
         ```rust\n\
         fn section_{n}() -> usize {{\n    let total = (1..=10).sum::<usize>();\n    total * {n}\n}}\n\
         ```\n\n\
         | Step | Owner | Days |\n\
         |:-----|:-----:|-----:|\n\
         | Design | Ana | 3 |\n\
         | Build | Kenji | 5 |\n\
         | Review | Layla | 2 |\n\n\
         > **Note:** the numbers for section {n} are *estimates*.\n\n"
    )
}

fn reply() -> String {
    let mut text = String::new();
    let mut clusters = 0;
    let mut n = 1;
    while clusters < REPLY_CLUSTERS {
        let part = section(n);
        clusters += part.graphemes(true).count();
        text.push_str(&part);
        n += 1;
    }
    let end = text
        .grapheme_indices(true)
        .nth(REPLY_CLUSTERS)
        .map_or(text.len(), |(at, _)| at);
    text.truncate(end);
    text
}

/// The reply cut into what each frame reveals, and the cluster count at each frame's end.
fn frames(reply: &str) -> Vec<(&str, usize)> {
    let ends: Vec<usize> = reply
        .grapheme_indices(true)
        .map(|(at, cluster)| at + cluster.len())
        .collect();
    let mut frames = Vec::new();
    let mut from = 0;
    let mut frame = 1;
    loop {
        let shown = (frame * CHARACTERS_PER_SECOND / FRAMES_PER_SECOND).min(ends.len());
        let to = ends[shown - 1];
        frames.push((&reply[from..to], shown));
        from = to;
        if shown == ends.len() {
            return frames;
        }
        frame += 1;
    }
}

fn played(frames: &[(&str, usize)]) -> StreamingMarkdown {
    let mut markdown = StreamingMarkdown::new();
    for (revealed, _) in frames {
        markdown.push(revealed);
    }
    markdown
}

fn bench(c: &mut Criterion) {
    let reply = reply();
    let frames = frames(&reply);

    let mut stream = c.benchmark_group("markdown stream");
    stream.sample_size(10);
    stream.throughput(Throughput::Elements(frames.len() as u64));
    stream.bench_function("update per frame, whole 50k reply at 2,000 chars/s", |b| {
        b.iter(|| {
            let mut markdown = played(&frames);
            markdown.finish();
            markdown
        })
    });
    stream.finish();

    let first: Vec<_> = frames
        .iter()
        .take_while(|(_, shown)| *shown <= WINDOW_CLUSTERS)
        .copied()
        .collect();
    let late = frames
        .iter()
        .position(|(_, shown)| *shown > REPLY_CLUSTERS - WINDOW_CLUSTERS)
        .unwrap_or(frames.len());
    let before_last = played(&frames[..late]);
    let last = &frames[late..];
    let mut update = c.benchmark_group("markdown update");
    for (name, start, window) in [
        ("first", StreamingMarkdown::new(), first.as_slice()),
        ("last", before_last, last),
    ] {
        update.throughput(Throughput::Elements(window.len() as u64));
        update.bench_function(format!("update per frame, {name} 1k characters"), |b| {
            b.iter_batched(
                || start.clone(),
                |mut markdown| {
                    for (revealed, _) in window {
                        markdown.push(revealed);
                    }
                    markdown
                },
                BatchSize::SmallInput,
            )
        });
    }
    update.finish();

    let mut whole = c.benchmark_group("markdown parse");
    whole.sample_size(20);
    whole.throughput(Throughput::Bytes(reply.len() as u64));
    whole.bench_function("whole 50k reply (reloaded)", |b| b.iter(|| parse(&reply)));
    let prefix = &reply[..reply.len() - last.iter().map(|(r, _)| r.len()).sum::<usize>()];
    whole.bench_function("whole prefix again on a late frame (no streaming)", |b| {
        b.iter(|| parse(prefix))
    });
    whole.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
