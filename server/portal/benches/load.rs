//! The server under load: many conversations streaming from the demo model at once, over real HTTP
//! on loopback, against the real `portal` binary with its own data directory.
//!
//! Each conversation gets one message; its turn's events are read as server-sent events. A third
//! of the streams drop their connection midway and reconnect with `Last-Event-ID`. Every stream
//! must see each event id exactly once, in order (each id the one before plus the event's weight,
//! `server/host/src/turn_log/mod.rs`), ending with the turn's end, and the text it assembled must equal the
//! answer the server stored. Printed: time to the first event (post sent
//! → first event read), the run's length, and the server's memory per open stream.
//!
//! Then the mixed soak (`soak/mod.rs`): 500 workers for five minutes against a fresh server,
//! with uploads, reconnections and pinned readers, and the time to first event against an
//! unloaded start on the same server (`PORTAL_SOAK_STREAMS`, `PORTAL_SOAK_SECONDS`; 0 skips it).
//!
//! `cargo bench -p portal-server --bench load [-- --conversations N --pace F]`; run by
//! `cargo xtask bench`, never by CI.

use std::time::Instant;

mod soak;
mod streams;

use streams::{
    Route, Server, WireEvent, check_numbering, converse_all, first_events, parse_event, percentile,
    stored_text, streamed_text, text_problem,
};

struct Options {
    conversations: usize,
    pace: f64,
}

fn options() -> Options {
    let mut options = Options {
        conversations: 200,
        pace: 1.0,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--conversations" => {
                options.conversations = args.next().and_then(|v| v.parse().ok()).unwrap_or(200)
            }
            "--pace" => options.pace = args.next().and_then(|v| v.parse().ok()).unwrap_or(1.0),
            // cargo bench passes `--bench`; nothing else is ours.
            _ => {}
        }
    }
    options
}

fn main() {
    let options = options();
    let server = Server::start(options.pace, options.conversations.saturating_mul(2).max(1));
    let (idle, _) = server.memory();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let started = Instant::now();
    let routes = (0..options.conversations)
        .map(|_| Route::one(&server.url))
        .collect();
    let outcomes = runtime.block_on(converse_all(routes));
    let peak = server.memory().1;
    let elapsed = started.elapsed();

    let firsts = first_events(&outcomes);
    let problems: Vec<&String> = outcomes.iter().flat_map(|o| &o.problems).collect();
    let reconnected = outcomes.iter().filter(|o| o.reconnected).count();
    println!(
        "load: {} conversations streaming at once from the demo model (pace {}), {} of them \
         reconnecting midway with Last-Event-ID",
        options.conversations, options.pace, reconnected
    );
    println!("| | |\n|---|---|");
    println!("| run | {:.1} s |", elapsed.as_secs_f64());
    println!(
        "| time to first event p50 / p99 / max | {:.1} / {:.1} / {:.1} ms |",
        percentile(&firsts, 0.5).as_secs_f64() * 1e3,
        percentile(&firsts, 0.99).as_secs_f64() * 1e3,
        firsts.last().map_or(0.0, |d| d.as_secs_f64() * 1e3)
    );
    println!(
        "| server memory idle / peak | {:.1} / {:.1} MiB |",
        idle as f64 / 1024.0,
        peak as f64 / 1024.0
    );
    println!(
        "| memory per stream ((peak - idle) / conversations) | {:.1} KiB |",
        peak.saturating_sub(idle) as f64 / options.conversations as f64
    );
    println!(
        "| lost or duplicated events, text mismatches | {} |",
        problems.len()
    );
    for problem in problems.iter().take(10) {
        println!("  {problem}");
    }
    drop(server);
    let soaked = soak::run(options.pace);
    if !problems.is_empty() || !soaked {
        std::process::exit(1);
    }
}
