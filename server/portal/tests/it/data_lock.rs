//! One `portal serve` per data folder: a second server on the same folder refuses to start,
//! naming the folder and what to do, and the first one's live turn streams on to its end. The
//! lock dies with the process that held it, however it stopped.

use crate::common;

use std::time::Duration;

use common::{Server, refused_portal, spawn_portal};
use portal_core::TurnStatus;
use portal_core::stream::TurnEvent;

#[tokio::test]
async fn a_second_server_on_a_data_folder_in_use_exits_at_start_and_the_live_turn_goes_on() {
    let data = tempfile::tempdir().expect("tempdir");
    let (mut first, base) = spawn_portal(data.path());
    let server = Server::at(base);
    let id = server.conversation().await;
    let turn = server.send(&id, "Tell me about scripts").await;
    let mut stream = server.stream(&id, turn, None).await;
    loop {
        match stream.next().await.expect("streaming").1 {
            TurnEvent::Delta { .. } => break,
            TurnEvent::TurnEnd { status, .. } => panic!("the turn ended ({status:?}) too soon"),
            _ => {}
        }
    }

    let (status, stderr) = refused_portal(data.path(), Duration::from_secs(30));
    assert!(!status.success(), "the second server failed: {stderr}");
    let folder = data.path().display().to_string();
    for words in [
        folder.as_str(),
        "in use by another `portal serve`",
        &format!("(process {})", first.id()),
        "stop that server first",
        "--data",
    ] {
        assert!(stderr.contains(words), "{words:?} in {stderr:?}");
    }

    let mut end = None;
    while let Some((_, event)) = stream.next().await {
        if let TurnEvent::TurnEnd { status, .. } = event {
            end = Some(status);
        }
    }
    assert_eq!(
        end,
        Some(TurnStatus::Completed),
        "the live turn was not cut off"
    );
    let transcript = server.transcript(&id).await;
    assert_eq!(transcript.turns[0].status, TurnStatus::Completed);

    first.kill().expect("SIGKILL");
    first.wait().expect("reaped");
    let (mut third, base) = spawn_portal(data.path());
    let after = Server::at(base).transcript(&id).await;
    third.kill().expect("stopped");
    third.wait().expect("reaped");
    assert_eq!(
        after, transcript,
        "a killed server's lock is released with it"
    );
}
