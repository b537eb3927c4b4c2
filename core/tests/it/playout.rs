//! The playout engine on virtual clocks (rules R3–R10). Nothing here sleeps: every time is an
//! argument.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use expect_test::{ExpectFile, expect_file};
use portal_core::playout::{Frame, Playout, PlayoutConfig, PlayoutConfigError};
use proptest::prelude::*;
use unicode_segmentation::UnicodeSegmentation;

/// Clusters that a careless cut would split.
const HARD: &[&str] = &[
    "👨\u{200d}👩\u{200d}👧\u{200d}👦", // ZWJ family
    "👍🏽",                               // skin tone
    "🇩🇪",                               // flag (two regional indicators)
    "🇯🇵",
    "1\u{fe0f}\u{20e3}",        // keycap
    "e\u{301}",                 // e + combining acute
    "ก\u{e48}",                 // Thai ko kai + mai ek
    "น\u{e49}\u{e33}",          // Thai no nu + mai tho + sara am
    "क\u{94d}ष",                // Devanagari conjunct ksa
    "स\u{94d}त\u{94d}र",        // Devanagari conjunct stra
    "\u{1100}\u{1161}\u{11a8}", // Hangul jamo L V T
    "\r\n",                     // CRLF
    "can't",
    " ",
    "3.14",
    "Hello",
    "你好",
    "مرحبا",
    "\n",
];

/// One input to the engine at a time.
#[derive(Debug, Clone)]
enum Input {
    Push(Vec<u8>),
    Finish,
    Tick,
}

/// What happened in one run.
#[derive(Debug)]
struct Trace {
    text: String,
    /// Every tick: its time, the frame, and the speed and target after it.
    frames: Vec<(f64, Frame, f64, f64, usize)>,
    /// Every push: its time and how many bytes had arrived after it.
    pushes: Vec<(f64, usize)>,
    playout: Playout,
}

/// Runs inputs in time order (pushes before finish before ticks at the same time).
fn run(config: PlayoutConfig, mut inputs: Vec<(f64, Input)>) -> Trace {
    let rank = |input: &Input| match input {
        Input::Push(_) => 0,
        Input::Finish => 1,
        Input::Tick => 2,
    };
    inputs.sort_by(|a, b| a.0.total_cmp(&b.0).then(rank(&a.1).cmp(&rank(&b.1))));
    let mut playout = Playout::new(config).expect("valid config");
    let mut bytes = Vec::new();
    let mut frames = Vec::new();
    let mut pushes = Vec::new();
    for (at, input) in inputs {
        match input {
            Input::Push(chunk) => {
                bytes.extend_from_slice(&chunk);
                playout.push_bytes(&chunk, at);
                pushes.push((at, bytes.len()));
            }
            Input::Finish => playout.finish(at),
            Input::Tick => {
                let frame = playout.tick(at);
                frames.push((
                    at,
                    frame,
                    playout.speed_cps(),
                    playout.target_cps(),
                    playout.waiting(),
                ));
            }
        }
    }
    Trace {
        text: String::from_utf8(bytes).expect("tests push valid UTF-8 overall"),
        frames,
        pushes,
        playout,
    }
}

/// Pushes `text` cut at `cuts` (byte offsets) at the given times.
fn pushes(text: &str, cuts: &[(f64, usize)]) -> Vec<(f64, Input)> {
    let mut from = 0;
    let mut inputs = Vec::new();
    for &(at, to) in cuts {
        let to = to.min(text.len());
        if to > from {
            inputs.push((at, Input::Push(text.as_bytes()[from..to].to_vec())));
            from = to;
        }
    }
    inputs
}

fn ticks(from: f64, to: f64, every: f64) -> Vec<(f64, Input)> {
    let mut inputs = Vec::new();
    let mut at = from;
    while at <= to {
        inputs.push((at, Input::Tick));
        at += every;
    }
    inputs
}

fn grapheme_ends(text: &str) -> Vec<usize> {
    text.grapheme_indices(true)
        .map(|(i, g)| i + g.len())
        .collect()
}

/// When each cluster of the final text arrived: when its last byte did.
fn arrivals(trace: &Trace) -> Vec<f64> {
    grapheme_ends(&trace.text)
        .into_iter()
        .map(|end| {
            trace
                .pushes
                .iter()
                .find(|(_, arrived)| *arrived >= end)
                .map_or(f64::INFINITY, |(at, _)| *at)
        })
        .collect()
}

/// When each cluster became visible.
fn displays(trace: &Trace) -> Vec<f64> {
    let mut shown = Vec::new();
    for (at, frame, ..) in &trace.frames {
        while shown.len() < frame.visible_clusters {
            shown.push(*at);
        }
    }
    shown
}

/// How many clusters each frame revealed.
fn counts(trace: &Trace) -> Vec<usize> {
    let mut before = 0;
    trace
        .frames
        .iter()
        .map(|(_, frame, ..)| {
            let count = frame.visible_clusters - before;
            before = frame.visible_clusters;
            count
        })
        .collect()
}

/// A text of hard clusters, from indices into `HARD`.
fn hard_text(pieces: &[usize]) -> String {
    pieces.iter().map(|&i| HARD[i % HARD.len()]).collect()
}

/// Checks the invariants every run must keep: frames end on boundaries of the final text, the
/// visible count never decreases and matches the visible text, no frame grows more than the
/// frame growth allows, and the speed never drops below the floor.
fn check_invariants(trace: &Trace, config: &PlayoutConfig) -> Result<(), TestCaseError> {
    let boundaries: Vec<usize> = std::iter::once(0)
        .chain(grapheme_ends(&trace.text))
        .collect();
    let mut previous_end = 0;
    let mut previous_count = 0;
    let mut visible = 0;
    let mut last_time = f64::NEG_INFINITY;
    for (at, frame, speed, ..) in &trace.frames {
        // R6: every frame shows whole clusters of the final text only.
        let boundary = boundaries.binary_search(&frame.revealed.end);
        prop_assert!(boundary.is_ok(), "frame at {at} ends inside a cluster");
        prop_assert_eq!(frame.revealed.start, previous_end);
        // R6: the visible count never decreases, and counts the clusters shown.
        prop_assert!(frame.visible_clusters >= visible);
        let count = frame.visible_clusters - visible;
        prop_assert_eq!(Ok(frame.visible_clusters), boundary);
        // R5: no frame reveals more than the growth rule allows after the previous frame.
        if *at > last_time {
            prop_assert!(
                count <= config.frame_allowance(previous_count),
                "frame at {at} reveals {count} after {previous_count}"
            );
            previous_count = count;
            last_time = *at;
        }
        // R4: never slower than the floor.
        prop_assert!(*speed >= config.min_cps - 1e-9);
        // R7: the words cover the revealed text exactly, in order.
        let mut cursor = frame.revealed.start;
        for word in &frame.words {
            prop_assert_eq!(word.start, cursor);
            prop_assert!(word.end > word.start);
            cursor = word.end;
        }
        prop_assert_eq!(cursor, frame.revealed.end);
        previous_end = frame.revealed.end;
        visible = frame.visible_clusters;
    }
    Ok(())
}

/// A schedule of random cuts and arrival gaps, then finish, with frames of random spacing.
fn random_run(
    text: &str,
    cut_points: &[usize],
    gaps: &[f64],
    frame_gaps: &[f64],
) -> Vec<(f64, Input)> {
    let mut cuts: Vec<usize> = cut_points.iter().map(|c| c % (text.len() + 1)).collect();
    cuts.sort_unstable();
    cuts.push(text.len());
    let mut at = 0.0;
    let mut schedule = Vec::new();
    for (i, cut) in cuts.iter().enumerate() {
        at += gaps[i % gaps.len()];
        schedule.push((at, *cut));
    }
    let finish_at = at + gaps[0];
    let mut inputs = pushes(text, &schedule);
    inputs.push((finish_at, Input::Finish));
    let mut tick_at = 0.0;
    let mut i = 0;
    while tick_at < finish_at + 30_000.0 {
        tick_at += frame_gaps[i % frame_gaps.len()];
        inputs.push((tick_at, Input::Tick));
        i += 1;
    }
    inputs
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    // R6, R9, R5, R4: hard clusters cut at random byte offsets (inside characters too) and
    // random arrival schedules: every frame ends on a cluster boundary, the count never drops,
    // the growth rule and the floor hold, and after finish all the text shows and done is set.
    #[test]
    fn r6_r9_frames_show_whole_clusters_and_everything_after_finish(
        pieces in prop::collection::vec(0..HARD.len(), 1..60),
        cut_points in prop::collection::vec(any::<usize>(), 0..25),
        gaps in prop::collection::vec(0.0..400.0f64, 1..10),
        frame_gaps in prop::collection::vec(4.0..120.0f64, 1..10),
    ) {
        let config = PlayoutConfig::default();
        let text = hard_text(&pieces);
        let inputs = random_run(&text, &cut_points, &gaps, &frame_gaps);
        let finish_at = inputs
            .iter()
            .find_map(|(at, input)| matches!(input, Input::Finish).then_some(*at))
            .expect("finish");
        let trace = run(config, inputs);
        check_invariants(&trace, &config)?;
        // R9: everything shows after finish, then done turns true and the caret stops (R8).
        let (_, last, ..) = trace.frames.last().expect("frames");
        prop_assert_eq!(trace.playout.visible(), text.as_str());
        prop_assert!(last.done && !last.caret);
        prop_assert_eq!(last.next_wake_ms, None);
        // R10: done exactly once the stream has finished and everything is shown.
        for (at, frame, ..) in &trace.frames {
            let settled = *at >= finish_at && frame.revealed.end == text.len();
            prop_assert_eq!(frame.done, settled);
        }
    }

    // R3: steady arrivals at 67 characters a second or faster settle to a lag of 0.6 s ± 50 ms:
    // every cluster arriving 1.5 s or more after the first shows 550–650 ms after it arrived.
    // Chunks come every 10–30 ms and may end inside a cluster; frames come every 14–20 ms.
    #[test]
    fn r3_steady_arrivals_settle_to_the_lag(
        pieces in prop::collection::vec(0..HARD.len(), 400),
        rate in 67.0..400.0f64,
        chunk_every in 10.0..30.0f64,
        cut_inside in prop::collection::vec(any::<bool>(), 16),
        frame_gaps in prop::collection::vec(14.0..20.0f64, 1..8),
    ) {
        let config = PlayoutConfig::default();
        let text = steady_text(&pieces, rate, 3.5);
        let ends = grapheme_ends(&text);
        let mut schedule = Vec::new();
        let mut at = 0.0;
        let mut due = 0.0;
        while (due as usize) < ends.len() {
            due += rate * chunk_every / 1000.0;
            let whole = (due as usize).min(ends.len());
            let mut cut = if whole == 0 { 0 } else { ends[whole - 1] };
            if cut_inside[schedule.len() % cut_inside.len()] && whole < ends.len() {
                let next = &text[cut..ends[whole]];
                if let Some((offset, _)) = next.char_indices().nth(1) {
                    cut += offset;
                }
            }
            schedule.push((at, cut));
            at += chunk_every;
        }
        let mut inputs = pushes(&text, &schedule);
        inputs.push((at, Input::Finish));
        let mut tick_at = 1.0;
        let mut i = 0;
        while tick_at < at + 3_000.0 {
            inputs.push((tick_at, Input::Tick));
            tick_at += frame_gaps[i % frame_gaps.len()];
            i += 1;
        }
        let trace = run(config, inputs);
        check_invariants(&trace, &config)?;
        let first = trace.pushes[0].0;
        for (arrived, shown) in arrivals(&trace).iter().zip(displays(&trace)) {
            if *arrived >= first + 1_500.0 {
                let lag = shown - arrived;
                prop_assert!(
                    (550.0..=650.0).contains(&lag),
                    "lag {lag} ms for a cluster arriving at {arrived}"
                );
            }
        }
    }

    // R4: a stream slower than the floor is shown sooner, never later: each line of up to 8
    // clusters, arriving after the previous one could play out at the floor, is fully visible
    // within its length at 40 characters a second plus a frame, well inside the lag.
    #[test]
    fn r4_slow_streams_play_at_least_at_the_floor(
        lines in prop::collection::vec(prop::collection::vec(0..HARD.len() - 1, 1..8), 1..12),
        gaps in prop::collection::vec(220.0..600.0f64, 1..6),
    ) {
        let config = PlayoutConfig::default();
        let mut text = String::new();
        let mut schedule = Vec::new();
        let mut at = 0.0;
        for (i, line) in lines.iter().enumerate() {
            // A line break cannot be extended, so each line is whole on arrival.
            let line: String = line.iter().map(|&p| HARD[p].replace(['\r', '\n'], "")).collect();
            text.extend(line.graphemes(true).take(7));
            text.push('\n');
            schedule.push((at, text.len()));
            at += gaps[i % gaps.len()];
        }
        let mut inputs = pushes(&text, &schedule);
        inputs.extend(ticks(0.0, at + 2_000.0, 16.0));
        let trace = run(config, inputs);
        check_invariants(&trace, &config)?;
        let ends = grapheme_ends(&text);
        let shown = displays(&trace);
        let mut first_cluster = 0;
        for &(arrived, bytes) in &trace.pushes {
            let last_cluster = ends
                .iter()
                .position(|&e| e == bytes)
                .expect("line ends on a boundary");
            let clusters = (last_cluster + 1 - first_cluster) as f64;
            let limit = arrived + clusters * 1000.0 / config.min_cps + 16.0 + 1e-6;
            prop_assert!(
                shown[last_cluster] <= limit,
                "line at {arrived} shown at {} > {limit}",
                shown[last_cluster]
            );
            prop_assert!(shown[last_cluster] - arrived <= config.lag_ms);
            first_cluster = last_cluster + 1;
        }
    }

    // R5: a 400-character burst after a quiet stream: the speed rises smoothly (it never falls
    // and nothing jumps in during the first 300 ms) and reaches 90 % of its target 300–700 ms
    // after the burst.
    #[test]
    fn r5_burst_after_quiet_stream_speeds_up_gradually(
        quiet_every in prop::option::of(60.0..400.0f64),
        pieces in prop::collection::vec(0..HARD.len(), 400),
        frame_gaps in prop::collection::vec(15.0..18.5f64, 1..6),
    ) {
        let config = PlayoutConfig::default();
        let burst_at = 2_000.0;
        let mut text = String::new();
        let mut schedule = Vec::new();
        if let Some(every) = quiet_every {
            let mut at = 0.0;
            while at < burst_at - every {
                text.push_str("ab");
                schedule.push((at, text.len() - 1));
                at += every;
            }
        }
        let pieces: String = pieces.iter().map(|&p| HARD[p]).collect();
        let burst: String = pieces.graphemes(true).take(400).collect();
        text.push_str(&burst);
        schedule.push((burst_at, text.len()));
        let mut inputs = pushes(&text, &schedule);
        let mut tick_at = 1.0;
        let mut i = 0;
        while tick_at < burst_at + 3_000.0 {
            inputs.push((tick_at, Input::Tick));
            tick_at += frame_gaps[i % frame_gaps.len()];
            i += 1;
        }
        let trace = run(config, inputs);
        check_invariants(&trace, &config)?;
        let after: Vec<_> = trace.frames.iter().filter(|(at, ..)| *at >= burst_at).collect();
        let reached = after
            .iter()
            .find(|(_, _, speed, target, _)| *speed >= 0.9 * *target)
            .map(|(at, ..)| at - burst_at)
            .expect("the speed reaches its target");
        prop_assert!((300.0..=700.0).contains(&reached), "90 % of target after {reached} ms");
        let mut speed = 0.0;
        for (at, _, now_speed, ..) in after.iter().filter(|(at, ..)| *at < burst_at + 300.0) {
            prop_assert!(*now_speed >= speed, "speed fell at {at}");
            speed = *now_speed;
        }
        let visible_at = |t: f64| {
            trace
                .frames
                .iter()
                .rev()
                .find(|(at, ..)| *at <= t)
                .map_or(0, |f| f.1.visible_clusters)
        };
        let early = visible_at(burst_at + 100.0) - visible_at(burst_at - 1.0);
        prop_assert!(early <= 40, "{early} clusters in the first 100 ms");
    }

    // R7: words are UAX #29 segments of the full text, clipped at frame edges: every boundary
    // inside a frame is a word boundary of the whole reply, and every word boundary of the reply
    // that falls inside a frame is reported.
    #[test]
    fn r7_words_follow_uax29_boundaries(
        pieces in prop::collection::vec(0..HARD.len(), 1..80),
        frame_gaps in prop::collection::vec(4.0..60.0f64, 1..6),
    ) {
        let config = PlayoutConfig::default();
        let text = hard_text(&pieces);
        let mut inputs = pushes(&text, &[(0.0, text.len())]);
        inputs.push((0.0, Input::Finish));
        let mut at = 0.0;
        let mut i = 0;
        while at < 30_000.0 {
            at += frame_gaps[i % frame_gaps.len()];
            inputs.push((at, Input::Tick));
            i += 1;
        }
        let trace = run(config, inputs);
        check_invariants(&trace, &config)?;
        let word_bounds: BTreeSet<usize> =
            text.split_word_bound_indices().map(|(i, _)| i).collect();
        for (_, frame, ..) in trace.frames.iter().filter(|f| !f.1.revealed.is_empty()) {
            let inside: BTreeSet<usize> = frame.words.iter().skip(1).map(|w| w.start).collect();
            let expected: BTreeSet<usize> = word_bounds
                .range(frame.revealed.start + 1..frame.revealed.end)
                .copied()
                .collect();
            prop_assert_eq!(inside, expected);
        }
    }
}

/// Hard clusters enough for `seconds` at `rate` clusters a second.
fn steady_text(pieces: &[usize], rate: f64, seconds: f64) -> String {
    let wanted = (rate * seconds) as usize;
    let mut text = String::new();
    let mut clusters = 0;
    let mut i = 0;
    // The pieces never join one another, so their cluster counts add up.
    while clusters < wanted {
        let piece = HARD[(pieces[i % pieces.len()] + i / pieces.len()) % HARD.len()];
        clusters += piece.graphemes(true).count();
        text.push_str(piece);
        i += 1;
    }
    text.graphemes(true).take(wanted).collect()
}

// R6: a hard text cut at every byte offset (into two chunks, through the byte interface) and at
// every character boundary (through the text interface) shows whole clusters only.
#[test]
fn r6_every_byte_offset_cut_keeps_clusters_whole() {
    let config = PlayoutConfig::default();
    let text: String = HARD.concat();
    for cut in 0..=text.len() {
        let mut inputs = vec![
            (0.0, Input::Push(text.as_bytes()[..cut].to_vec())),
            (40.0, Input::Push(text.as_bytes()[cut..].to_vec())),
            (80.0, Input::Finish),
        ];
        inputs.extend(ticks(1.0, 3_000.0, 16.0));
        let trace = run(config, inputs);
        check_invariants(&trace, &config).expect("invariants hold");
        assert_eq!(trace.playout.visible(), text, "cut at {cut}");
    }
    for (cut, _) in text.char_indices() {
        let mut playout = Playout::default();
        playout.push(&text[..cut], 0.0);
        let mut shown = 0;
        for step in 1..300 {
            let at = f64::from(step) * 16.0;
            if step == 3 {
                playout.push(&text[cut..], at);
            }
            if step == 5 {
                playout.finish(at);
            }
            let frame = playout.tick(at);
            assert!(text.is_char_boundary(frame.revealed.end));
            assert_eq!(
                frame.visible_clusters,
                playout.visible().graphemes(true).count()
            );
            assert!(frame.visible_clusters >= shown);
            shown = frame.visible_clusters;
        }
        assert_eq!(playout.visible(), text, "cut at {cut}");
    }
}

// R6: an undecided tail waits for the next chunk or for finish: half a ZWJ family, then the
// rest, shows as one cluster once it is whole.
#[test]
fn r6_undecided_tail_waits_for_the_next_chunk() {
    let mut playout = Playout::default();
    playout.push("ok 👨\u{200d}👩", 0.0);
    let mut at = 0.0;
    while at < 1_000.0 {
        at += 16.0;
        playout.tick(at);
    }
    assert_eq!(playout.visible(), "ok ");
    assert_eq!(
        playout.next_wake_ms(),
        None,
        "idle while only the tail is left"
    );
    playout.push("\u{200d}👧", at);
    for _ in 0..60 {
        at += 16.0;
        playout.tick(at);
    }
    assert_eq!(
        playout.visible(),
        "ok ",
        "still undecided: a ZWJ may follow"
    );
    playout.finish(at);
    let mut frames = Vec::new();
    for _ in 0..60 {
        at += 16.0;
        frames.push(playout.tick(at));
    }
    assert_eq!(playout.visible(), "ok 👨\u{200d}👩\u{200d}👧");
    assert_eq!(playout.visible_clusters(), 4);
    assert!(
        frames
            .iter()
            .any(|f| f.revealed == (3..playout.text().len()))
    );
}

// R6: a line break can never be extended, so a chunk ending in one is whole at once.
#[test]
fn r6_chunk_ending_in_a_line_break_is_whole_at_once() {
    let mut playout = Playout::default();
    playout.push("hi\n", 0.0);
    assert_eq!(playout.waiting(), 3);
    playout.push("a\r", 10.0);
    assert_eq!(playout.waiting(), 4, "CR may still be joined by LF");
    playout.push("\n", 20.0);
    assert_eq!(playout.waiting(), 5);
}

// R9, R8, R10: after finish what is left plays out over several frames at the eased speed, the
// caret breathes until the last cluster shows, then done turns true, no wake is needed, and
// later ticks change nothing.
#[test]
fn r9_what_is_left_plays_out_after_finish() {
    let config = PlayoutConfig::default();
    let text: String = std::iter::repeat_n("word ", 100).collect();
    let mut inputs = pushes(&text, &[(0.0, text.len())]);
    inputs.push((10.0, Input::Finish));
    inputs.extend(ticks(16.0, 3_000.0, 16.0));
    let trace = run(config, inputs);
    check_invariants(&trace, &config).expect("invariants hold");
    let counts = counts(&trace);
    let playing = counts.iter().filter(|&&c| c > 0).count();
    assert!(
        playing >= 20,
        "500 characters play out over {playing} frames"
    );
    assert!(counts.iter().max() < Some(&40));
    let done_at = trace
        .frames
        .iter()
        .position(|(_, f, ..)| f.done)
        .expect("done");
    for (i, (_, frame, ..)) in trace.frames.iter().enumerate() {
        assert_eq!(frame.caret, i < done_at, "R8 caret at frame {i}");
        assert_eq!(frame.done, i >= done_at, "R10 done at frame {i}");
        if i > done_at {
            assert!(frame.revealed.is_empty() && frame.words.is_empty());
            assert_eq!(frame.next_wake_ms, None);
        }
    }
    assert_eq!(trace.playout.visible(), text);
}

// R8: the caret breathes while more is coming, even while nothing waits to be shown.
#[test]
fn r8_caret_breathes_until_done() {
    let mut playout = Playout::default();
    assert!(playout.tick(0.0).caret, "before anything arrived");
    playout.push("Hi. ", 0.0);
    let mut at = 0.0;
    for _ in 0..100 {
        at += 16.0;
        let frame = playout.tick(at);
        assert!(frame.caret && !frame.done);
    }
    assert_eq!(
        playout.visible(),
        "Hi.",
        "the space waits: a mark may follow"
    );
    playout.finish(at);
    let mut last = playout.tick(at + 16.0);
    while !last.done {
        assert!(last.caret);
        at += 16.0;
        last = playout.tick(at);
    }
    assert!(!last.caret);
    assert!(playout.is_done());
}

// R3: a tab hidden during streaming (no frames for 5 s while chunks keep arriving) catches up
// within a second of becoming visible, never showing an empty bubble, and the growth rule still
// holds: it spreads the catch-up over a few frames rather than freezing.
#[test]
fn r3_hidden_tab_catches_up_within_a_second() {
    let config = PlayoutConfig::default();
    let text: String = std::iter::repeat_n("Le café ☕ est prêt. ", 60).collect();
    let ends = grapheme_ends(&text);
    let schedule: Vec<(f64, usize)> = ends
        .chunks(2)
        .enumerate()
        .map(|(i, chunk)| (i as f64 * 20.0, *chunk.last().expect("non-empty")))
        .collect();
    let last_push = schedule.last().expect("pushes").0;
    let mut inputs = pushes(&text, &schedule);
    let hidden = 2_000.0..7_000.0;
    inputs.extend(
        ticks(1.0, last_push + 2_000.0, 16.0)
            .into_iter()
            .filter(|(at, _)| !hidden.contains(at)),
    );
    let trace = run(config, inputs);
    check_invariants(&trace, &config).expect("invariants hold");
    let resumed = trace
        .frames
        .iter()
        .position(|(at, ..)| *at >= hidden.end)
        .expect("frames after the gap");
    let (_, before, ..) = &trace.frames[resumed - 1];
    let (_, first, ..) = &trace.frames[resumed];
    assert!(before.visible_clusters > 0 && first.visible_clusters > before.visible_clusters);
    let arrived = arrivals(&trace);
    for (at, frame, ..) in &trace.frames[resumed..] {
        if *at >= hidden.end + 1_000.0 && *at < last_push {
            let newest = arrived[frame.visible_clusters - 1];
            let lag = at - newest;
            assert!((550.0..=670.0).contains(&lag), "lag {lag} ms at {at}");
        }
    }
}

// R3: a stream that starts while the tab is hidden shows text on the first visible frame.
#[test]
fn r3_stream_started_in_a_hidden_tab_never_shows_an_empty_bubble() {
    let mut playout = Playout::default();
    for i in 0..100 {
        playout.push("abc ", f64::from(i) * 30.0);
    }
    let frame = playout.tick(3_000.0);
    assert!(frame.visible_clusters > 0);
    assert!(frame.visible_clusters <= PlayoutConfig::default().frame_allowance(0));
}

// R3: a driver that ticks only when the engine asks (a virtual clock, or a server) reaches the
// end of a reply, and the engine is idle whenever nothing waits.
#[test]
fn r3_ticking_on_next_wake_plays_everything() {
    let mut playout = Playout::default();
    assert_eq!(playout.next_wake_ms(), None);
    playout.push("Héllo, wörld! 🇫🇷🇮🇹", 0.0);
    playout.finish(0.0);
    let mut ticks = 0;
    while let Some(at) = playout.next_wake_ms() {
        playout.tick(at);
        ticks += 1;
        assert!(ticks < 1_000, "wakes converge");
    }
    assert!(playout.is_done());
    assert_eq!(playout.visible(), "Héllo, wörld! 🇫🇷🇮🇹");
}

// Times that run backwards or are not numbers count as the last time seen.
#[test]
fn times_never_run_backwards() {
    let mut playout = Playout::default();
    playout.push("abcdef", 1_000.0);
    playout.tick(1_500.0);
    let shown = playout.visible_clusters();
    let frame = playout.tick(500.0);
    assert!(frame.revealed.is_empty());
    let frame = playout.tick(f64::NAN);
    assert!(frame.revealed.is_empty());
    assert_eq!(playout.visible_clusters(), shown);
}

#[test]
fn config_defaults_and_validation() {
    let config = PlayoutConfig::default();
    assert_eq!(
        (config.lag_ms, config.min_cps, config.ease_ms),
        (600.0, 40.0, 300.0)
    );
    assert_eq!(config.frame_allowance(5), 17);
    let bad = |config: PlayoutConfig| Playout::new(config).map(|_| ()).unwrap_err();
    assert_eq!(
        bad(PlayoutConfig {
            lag_ms: f64::NAN,
            ..config
        })
        .to_string(),
        "playout lag_ms is NaN; give a finite number of milliseconds, zero or more"
    );
    assert_eq!(
        bad(PlayoutConfig {
            min_cps: 0.0,
            ..config
        }),
        PlayoutConfigError::MinCps(0.0)
    );
    assert_eq!(
        bad(PlayoutConfig {
            ease_ms: -1.0,
            ..config
        }),
        PlayoutConfigError::Ease(-1.0)
    );
    assert!(matches!(
        bad(PlayoutConfig {
            frame_growth_extra: 0,
            ..config
        }),
        PlayoutConfigError::FrameGrowth { .. }
    ));
    let parsed: PlayoutConfig =
        serde_json::from_str(r#"{"lagMs": 300, "minCps": 60}"#).expect("camelCase options");
    assert_eq!(
        (parsed.lag_ms, parsed.min_cps, parsed.ease_ms),
        (300.0, 60.0, 300.0)
    );
}

// R5: without easing or lag the reveal still keeps to whole clusters and the growth rule.
#[test]
fn r5_zero_lag_and_ease_still_grow_frame_by_frame() {
    let config = PlayoutConfig {
        lag_ms: 0.0,
        ease_ms: 0.0,
        ..PlayoutConfig::default()
    };
    let text: String = std::iter::repeat_n("🇩🇪e\u{301} ", 50).collect();
    let mut inputs = pushes(&text, &[(0.0, text.len())]);
    inputs.push((0.0, Input::Finish));
    inputs.extend(ticks(16.0, 1_000.0, 16.0));
    let trace = run(config, inputs);
    check_invariants(&trace, &config).expect("invariants hold");
    assert_eq!(counts(&trace)[..4], [2, 8, 26, 80]);
    assert!(trace.playout.is_done());
}

/// Renders a run frame by frame: time, the revealed text split into words, and the flags.
fn render(trace: &Trace) -> String {
    let mut out = String::new();
    for (at, frame, speed, ..) in &trace.frames {
        if frame.revealed.is_empty() {
            continue;
        }
        let words: Vec<String> = frame
            .words
            .iter()
            .map(|w| format!("{:?}", &trace.text[w.clone()]))
            .collect();
        let _ = writeln!(
            out,
            "{at:>6.0} ms  {:>3} visible  {:>5.0} cps  {}{}{}",
            frame.visible_clusters,
            speed,
            words.join(" "),
            if frame.caret { "  caret" } else { "" },
            if frame.done { "  done" } else { "" },
        );
    }
    out
}

/// The golden driver: runs `inputs` with the default numbers and compares the rendering.
fn check(inputs: Vec<(f64, Input)>, expected: ExpectFile) {
    let config = PlayoutConfig::default();
    let trace = run(config, inputs);
    check_invariants(&trace, &config).expect("invariants hold");
    expected.assert_eq(&render(&trace));
}

// R3, R6, R7, R9: a short reply in uneven chunks, one cut inside a skin-toned thumb.
#[test]
fn golden_short_reply() {
    let text = "Sure 👍🏽 — the café's open until 9.30, isn't it?";
    let thumb = text.find('👍').expect("thumb") + 4;
    let mut inputs = pushes(
        text,
        &[(0.0, 3), (90.0, thumb), (180.0, 30), (400.0, text.len())],
    );
    inputs.push((450.0, Input::Finish));
    inputs.extend(ticks(0.0, 2_000.0, 16.0));
    check(
        inputs,
        expect_file!["../../../tests/golden/playout/short_reply.txt"],
    );
}

// R5: a sentence released at once by a guardrail after a slow start speeds up gradually.
#[test]
fn golden_guardrail_release() {
    let text = "Checking. The answer, after review, is that the quarterly figures were restated in \
                March; the restatement moved 2.4 million from services into licences.";
    let mut inputs = pushes(text, &[(0.0, 10), (1_000.0, text.len())]);
    inputs.push((1_000.0, Input::Finish));
    inputs.extend(ticks(0.0, 3_000.0, 16.0));
    check(
        inputs,
        expect_file!["../../../tests/golden/playout/guardrail_release.txt"],
    );
}
