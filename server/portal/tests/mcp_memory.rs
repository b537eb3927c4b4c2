//! The memory an MCP server's flood takes, measured alone in this test binary so that no other
//! test's work moves the process's peak: a 100 MB result is refused at the message limit.

#[path = "it/common/mod.rs"]
mod common;
#[path = "it/mcp_support/mod.rs"]
mod mcp_support;

use std::time::Duration;

use common::until;
use mcp_support::{Fixture, hostile, quick};
use serde_json::json;

/// This process's peak resident memory, in bytes (`VmHWM`).
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .expect("VmHWM")
        * 1024
}

#[tokio::test]
async fn a_flood_of_100_mb_is_refused_at_the_message_limit_and_memory_stays_bounded() {
    let fixture = Fixture::start(
        |_| vec![("flood", hostile("flood", ""))],
        r#"{ flood = ["flood"] }"#,
        quick(),
    )
    .await;
    let before = peak_rss();
    let (text, error) = fixture.call("flood__flood", json!({})).await;
    let grown = peak_rss().saturating_sub(before);
    println!(
        "peak RSS grew by {} MB reading a 100 MB flood",
        grown / 1024 / 1024
    );
    assert!(error, "{text}");
    assert!(
        text.contains("the MCP server `flood` failed the call"),
        "{text}"
    );
    assert!(
        grown < 48 * 1024 * 1024,
        "reading a 100 MB flood grew the peak by {grown} bytes"
    );
    let down = until(
        "the flood server to be down",
        Duration::from_secs(10),
        || {
            let report = fixture.report("flood");
            async move { report.reason }
        },
    )
    .await
    .0;
    assert!(down.contains("larger than 4194304 bytes"), "{down}");
}
