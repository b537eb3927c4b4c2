//! Replicas under load (issue 18): two `portal serve` replicas on one PostgreSQL, each sending
//! `--streams-per-replica` conversations' messages (default 500) while every turn's events are
//! read at once, half through the replica that runs the turn and half through the other one,
//! which follows it through the database. A third of the streams drop their connection after 12
//! events and resume with `Last-Event-ID` through the replica they did not start on. Next to it,
//! the same total load on one replica on SQLite.
//!
//! Every stream must see each event id exactly once, in order, ending with the turn's end, and
//! the text it assembled must equal the stored answer. Printed: time to first event (message
//! sent → first event read) p50 / p99 / max, the run's length, and each replica's resident
//! memory idle and at its peak.
//!
//! Needs `PORTAL_TEST_POSTGRES` (`cargo xtask bench` gives it a throwaway PostgreSQL); it makes
//! a schema of its own there as the storage tests do (`tests/databases`), dropped at the end.
//!
//! `cargo bench -p portal-server --bench replicas [-- --streams-per-replica N --pace F]`; run by
//! `cargo xtask bench`, never by CI.

use std::time::{Duration, Instant};

#[path = "../tests/it/databases/mod.rs"]
mod databases;
mod streams;

use databases::Database;
use streams::{Route, Server, converse_all, first_events, percentile};

/// The replicas' turn lease: short, so a bench that dies leaves nothing running for long.
const LEASE_SECONDS: &str = "5";

struct Options {
    streams_per_replica: usize,
    pace: f64,
}

fn options() -> Options {
    let mut options = Options {
        streams_per_replica: 500,
        pace: 1.0,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--streams-per-replica" => {
                options.streams_per_replica =
                    args.next().and_then(|v| v.parse().ok()).unwrap_or(500)
            }
            "--pace" => options.pace = args.next().and_then(|v| v.parse().ok()).unwrap_or(1.0),
            // cargo bench passes `--bench`; nothing else is ours.
            _ => {}
        }
    }
    options
}

/// What one setup measured.
struct Measured {
    label: String,
    streams: String,
    run: Duration,
    firsts: Vec<Duration>,
    /// Each replica's resident memory idle and at its peak, in KiB.
    memory: Vec<(u64, u64)>,
    /// The CPU time each replica used for the run.
    cpu: Vec<Duration>,
    problems: Vec<String>,
}

/// Runs `routes` at once against `servers` and measures them.
fn measure(
    runtime: &tokio::runtime::Runtime,
    label: &str,
    streams: String,
    servers: &[Server],
    routes: Vec<Route>,
) -> Measured {
    let idle: Vec<u64> = servers.iter().map(|s| s.memory().0).collect();
    let cpu_before: Vec<Duration> = servers.iter().map(Server::cpu).collect();
    let started = Instant::now();
    let outcomes = runtime.block_on(converse_all(routes));
    let run = started.elapsed();
    let memory = servers
        .iter()
        .zip(idle)
        .map(|(server, idle)| (idle, server.memory().1))
        .collect();
    let cpu = servers
        .iter()
        .zip(cpu_before)
        .map(|(server, before)| server.cpu().saturating_sub(before))
        .collect();
    Measured {
        label: label.to_string(),
        streams,
        run,
        firsts: first_events(&outcomes),
        memory,
        cpu,
        problems: outcomes.into_iter().flat_map(|o| o.problems).collect(),
    }
}

fn main() {
    let options = options();
    let per_replica = options.streams_per_replica;
    let total = per_replica * 2;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");

    let sqlite = {
        let server = Server::start(options.pace, total.saturating_mul(2).max(1));
        let routes = (0..total).map(|_| Route::one(&server.url)).collect();
        measure(
            &runtime,
            "1 replica, SQLite",
            format!("{total}"),
            std::slice::from_ref(&server),
            routes,
        )
    };

    let Some(database) = Database::postgres() else {
        eprintln!(
            "replicas: run `cargo xtask bench`, or `cargo xtask postgres` and export what it prints"
        );
        std::process::exit(1);
    };
    let url = database.url();
    let replicas = {
        let flags = ["--turn-lease-seconds", LEASE_SECONDS];
        let start = || {
            Server::start_on_database(
                &url,
                options.pace,
                per_replica.saturating_mul(2).max(1),
                &flags,
            )
            .unwrap_or_else(|error| panic!("{error}"))
        };
        let servers = [start(), start()];
        let urls = [servers[0].url.as_str(), servers[1].url.as_str()];
        // Conversation n is sent through replica n % 2 and read through n / 2 % 2: half of each
        // replica's turns are read through the other one. A dropped stream resumes through the
        // replica it was not read through.
        let routes = (0..total)
            .map(|n| Route {
                send: urls[n % 2].to_string(),
                read: urls[n / 2 % 2].to_string(),
                resume: urls[(n / 2 + 1) % 2].to_string(),
            })
            .collect();
        measure(
            &runtime,
            "2 replicas, PostgreSQL",
            format!("2 × {per_replica}"),
            &servers,
            routes,
        )
    };
    drop(database);

    report(&options, &[sqlite, replicas]);
}

fn report(options: &Options, measured: &[Measured]) {
    println!(
        "replicas: the same load on one replica on SQLite and on two replicas on PostgreSQL \
         (demo model, pace {}); on two replicas half the streams are read through the replica \
         that does not run the turn, and a third of all streams resume with Last-Event-ID \
         through the other replica",
        options.pace
    );
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mib = |kib: u64| kib as f64 / 1024.0;
    let row = |name: &str, cell: &dyn Fn(&Measured) -> String| {
        let cells: Vec<String> = measured.iter().map(cell).collect();
        println!("| {name} | {} |", cells.join(" | "));
    };
    let labels: Vec<&str> = measured.iter().map(|m| m.label.as_str()).collect();
    println!("| | {} |", labels.join(" | "));
    println!("|---|{}", "---|".repeat(measured.len()));
    row("concurrent streams", &|m| m.streams.clone());
    row("run", &|m| format!("{:.1} s", m.run.as_secs_f64()));
    row("time to first event p50 / p99 / max", &|m| {
        format!(
            "{:.1} / {:.1} / {:.1} ms",
            ms(percentile(&m.firsts, 0.5)),
            ms(percentile(&m.firsts, 0.99)),
            m.firsts.last().map_or(0.0, |d| ms(*d))
        )
    });
    row("memory per replica, idle → peak", &|m| {
        m.memory
            .iter()
            .map(|(idle, peak)| format!("{:.1} → {:.1} MiB", mib(*idle), mib(*peak)))
            .collect::<Vec<_>>()
            .join(", ")
    });
    row("CPU time per replica", &|m| {
        m.cpu
            .iter()
            .map(|cpu| format!("{:.1} s", cpu.as_secs_f64()))
            .collect::<Vec<_>>()
            .join(", ")
    });
    row("lost or repeated events, text mismatches", &|m| {
        m.problems.len().to_string()
    });
    let problems: Vec<&String> = measured.iter().flat_map(|m| &m.problems).collect();
    for problem in problems.iter().take(10) {
        println!("  {problem}");
    }
    if !problems.is_empty() {
        std::process::exit(1);
    }
}
