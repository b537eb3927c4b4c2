//! Portal's own export read back: the same conversation, refused whole when any of it is wrong.

use portal_exchange::import::{
    self, Exported, ImportError, Source, attachments_used, leave_out_attachments,
};

fn tour() -> portal_core::Transcript {
    let json = std::fs::read_to_string(format!(
        "{}/tests/data/markdown-tour.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("the fixture is there");
    portal_core::parse_transcript(&json).expect("the fixture is a valid transcript")
}

#[test]
fn an_exported_conversation_reads_back_equal() {
    let exported = Exported::new("Q3 numbers", "helper", tour());
    let json = serde_json::to_string_pretty(&exported).unwrap();
    let read = import::read(&json).expect("Portal's export is read");
    assert_eq!(read.source, Source::Portal);
    let [conversation] = read.conversations.as_slice() else {
        panic!("one conversation, not {}", read.conversations.len());
    };
    assert_eq!(conversation.title, "Q3 numbers");
    assert_eq!(conversation.agent.as_deref(), Some("helper"));
    assert_eq!(conversation.transcript, tour());
    assert_eq!(
        (conversation.project.as_deref(), conversation.pinned),
        (None, false)
    );
    assert!(conversation.notes.is_empty(), "{:?}", conversation.notes);

    let placed = Exported::new("Q3 numbers", "helper", tour()).placed(Some("Reports".into()), true);
    let json = serde_json::to_value(&placed).unwrap();
    assert_eq!(
        (&json["project"], &json["pinned"]),
        (&"Reports".into(), &true.into())
    );
    let read = import::read(&json.to_string()).expect("read");
    let conversation = &read.conversations[0];
    assert_eq!(
        (conversation.project.as_deref(), conversation.pinned),
        (Some("Reports"), true)
    );
}

#[test]
fn an_export_without_project_fields_is_read_in_no_project() {
    let mut json = serde_json::to_value(Exported::new("t", "a", tour())).unwrap();
    let fields = json.as_object_mut().unwrap();
    fields.remove("project");
    fields.remove("pinned");
    let read = import::read(&json.to_string()).expect("an export made before projects");
    let conversation = &read.conversations[0];
    assert_eq!(
        (conversation.project.as_deref(), conversation.pinned),
        (None, false)
    );
    assert!(read.projects.is_empty());
}

#[test]
fn a_bare_transcript_and_a_list_of_conversations_are_read_too() {
    let bare = serde_json::to_string(&tour()).unwrap();
    let read = import::read(&bare).unwrap();
    assert_eq!(read.conversations[0].title, "");
    assert_eq!(read.conversations[0].agent, None);
    let list = serde_json::to_string(&[
        Exported::new("one", "a", tour()),
        Exported::new("two", "b", tour()),
    ])
    .unwrap();
    let titles: Vec<String> = import::read(&list)
        .unwrap()
        .conversations
        .into_iter()
        .map(|c| c.title)
        .collect();
    assert_eq!(titles, ["one", "two"]);
}

#[test]
fn a_turn_that_was_running_or_paused_is_imported_as_stopped_with_a_note() {
    let mut transcript = tour();
    transcript.turns[1].status = portal_core::TurnStatus::Paused;
    let json = serde_json::to_string(&Exported::new("t", "a", transcript)).unwrap();
    let read = import::read(&json).unwrap();
    let conversation = &read.conversations[0];
    assert_eq!(
        conversation.transcript.turns[1].status,
        portal_core::TurnStatus::CutOff
    );
    assert_eq!(conversation.notes.len(), 1);
    assert!(
        conversation.notes[0].starts_with("Turn 2 was "),
        "{}",
        conversation.notes[0]
    );
}

#[test]
fn one_broken_conversation_refuses_the_whole_export_naming_it() {
    let mut broken = tour();
    broken.turns[0].index = 7;
    let list = serde_json::to_string(&[
        Exported::new("fine", "a", tour()),
        Exported::new("broken", "a", broken),
    ])
    .unwrap();
    let error = import::read(&list).unwrap_err();
    assert!(
        matches!(error, ImportError::Transcript { position: 2, .. }),
        "{error}"
    );
    assert!(
        error.to_string().contains("nothing was imported"),
        "{error}"
    );
}

#[test]
fn files_that_are_not_exports_are_refused_in_words() {
    let cases = [
        ("{\"portal\": ", "is not JSON"),
        ("[]", "holds no conversation"),
        ("42", "neither a conversation nor a list"),
        (
            "{\"title\": \"x\"}",
            "no `turns`, `mapping` or `chat_messages`",
        ),
        (
            "{\"portal\": \"project\", \"title\": \"x\", \"transcript\": {\"version\": 1, \"turns\": []}}",
            "its `portal` is `project`",
        ),
        (
            "{\"portal\": \"conversation\", \"title\": \"x\", \"transcript\": {\"version\": 1, \"turns\": []}, \"owner\": \"eve\"}",
            "unknown field `owner`",
        ),
    ];
    for (json, said) in cases {
        let error = import::read(json).unwrap_err().to_string();
        assert!(error.contains(said), "{json}: {error}");
    }
}

#[test]
fn attachments_not_kept_are_left_out_with_a_note_each() {
    let mut conversation = import::read(&serde_json::to_string(&tour()).unwrap())
        .unwrap()
        .conversations
        .remove(0);
    assert_eq!(
        attachments_used(&conversation.transcript),
        ["doc1", "pic1", "tp1"]
    );
    leave_out_attachments(&mut conversation, |id| id == "doc1");
    assert_eq!(attachments_used(&conversation.transcript), ["doc1"]);
    assert_eq!(
        conversation.notes,
        [
            "Turn 1's attachment chart.png was left out: its file is not yours in this portal.",
            "Turn 1: 1 picture(s) a tool answered with were left out: a tool's picture stays with the conversation it was made in."
        ]
    );
    portal_core::validate(&conversation.transcript).unwrap();
}
