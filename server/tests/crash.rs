//! The server process killed with SIGKILL mid-stream and started again on the same data folder:
//! the turn it was streaming is recovered as cut off, with everything it streamed (rule M10).

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use common::Server;
use portal_core::stream::TurnEvent;
use portal_core::{Block, TurnStatus, validate};

/// Starts `target/debug/portal serve` on a free loopback port; returns the process and its
/// address once it says it is serving.
fn spawn_portal(data: &Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_portal"))
        .args(["serve", "--port", "0", "--demo-pace", "1"])
        .arg("--data")
        .arg(data)
        .arg("--dist")
        .arg(data.join("no-dist"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("portal starts");
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("portal says where it serves");
    let base = line
        .trim()
        .rsplit(' ')
        .next()
        .filter(|url| url.starts_with("http://"))
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    (child, base)
}

#[tokio::test]
async fn m10_server_killed_with_sigkill_mid_stream_restarts_with_the_cut_off_turn_intact() {
    let data = tempfile::tempdir().expect("tempdir");
    let (mut first, base) = spawn_portal(data.path());
    let server = Server::at(base);
    let id = server.conversation().await;
    let turn = server.send(&id, "Tell me about scripts").await;
    let mut stream = server.stream(&id, turn, None).await;
    let mut narration = String::new();
    while narration.chars().count() < 12 {
        match stream.next().await.expect("still streaming").1 {
            TurnEvent::Delta { block: 1, text, .. } => narration.push_str(&text),
            TurnEvent::TurnEnd { status, .. } => {
                panic!("the turn ended ({status:?}) before the kill")
            }
            _ => {}
        }
    }
    first.kill().expect("SIGKILL");
    first.wait().expect("the killed process is reaped");

    let (mut second, base) = spawn_portal(data.path());
    let server = Server::at(base);
    let transcript = server.transcript(&id).await;
    second.kill().expect("stopped");
    second.wait().expect("reaped");

    validate(&transcript).expect("the recovered transcript keeps the invariants");
    assert_eq!(transcript.turns.len(), 1);
    let cut = &transcript.turns[0];
    assert_eq!(cut.status, TurnStatus::CutOff, "recovered as cut off");
    let Block::Text { text } = &cut.messages[1].blocks[1] else {
        panic!("the narration was kept: {:?}", cut.messages[1]);
    };
    assert!(
        text.starts_with(&narration),
        "everything streamed before the kill was kept: {text:?} vs {narration:?}"
    );
}
