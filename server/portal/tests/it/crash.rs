//! The server process killed with SIGKILL mid-stream and started again on the same data folder:
//! the turn it was streaming is recovered as cut off, with everything it streamed (rule M10).

use crate::common;

use common::{Server, spawn_portal};
use portal_core::stream::TurnEvent;
use portal_core::{Block, TurnStatus, validate};

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
