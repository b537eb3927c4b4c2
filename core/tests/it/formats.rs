//! The serde formats of core's configuration and output types: camelCase, defaults for what is
//! left out, unknown fields refused. Hosts (the JavaScript package first) convert with them
//! directly, so they are the shapes hosts read and write.

use portal_core::attachment::{AttachmentConfig, PictureRef};
use portal_core::effort::EffortConfig;
use portal_core::memory::{self, CompactionHint, MemoryConfig};
use portal_core::model::Provider;
use portal_core::prompt::{Answer, Diagnostic, EncodedPicture, Entry, Layer, Part};
use portal_core::skills::parse_command;
use portal_core::transcript::Role;
use serde_json::{from_value, json, to_value};

#[test]
fn configs_take_camel_case_and_keep_defaults_for_what_is_left_out() {
    let memory: MemoryConfig =
        from_value(json!({"maxTurns": 3, "attachments": {"headingChars": 50}})).unwrap();
    assert_eq!(
        memory,
        MemoryConfig {
            max_turns: 3,
            attachments: AttachmentConfig {
                heading_chars: 50,
                ..AttachmentConfig::default()
            },
            ..MemoryConfig::default()
        }
    );
    let budgets: EffortConfig = from_value(json!({"high": 4_096})).unwrap();
    assert_eq!(
        budgets,
        EffortConfig {
            high_budget: 4_096,
            ..EffortConfig::default()
        }
    );
    for (json, hint) in [
        (json!("search"), CompactionHint::Search),
        (json!("none"), CompactionHint::NoCompaction),
        (json!({"newestInTurn": 4}), CompactionHint::NewestInTurn(4)),
    ] {
        assert_eq!(from_value::<CompactionHint>(json.clone()).unwrap(), hint);
        assert_eq!(to_value(hint).unwrap(), json);
    }
    let picture: EncodedPicture =
        from_value(json!({"mediaType": "image/png", "base64": "QUJD"})).unwrap();
    assert_eq!(picture.media_type, "image/png");
    assert_eq!(to_value(Provider::OpenAi).unwrap(), "openai");
}

#[test]
fn configs_refuse_unknown_fields_by_name() {
    let error = from_value::<MemoryConfig>(json!({"maxTurn": 3})).unwrap_err();
    assert!(error.to_string().contains("`maxTurn`"), "{error}");
    assert!(error.to_string().contains("`maxTurns`"), "{error}");
    let error = from_value::<MemoryConfig>(json!({"attachments": {"headingChar": 3}})).unwrap_err();
    assert!(error.to_string().contains("`headingChar`"), "{error}");
    assert!(from_value::<EffortConfig>(json!({"low_budget": 1})).is_err());
    assert!(from_value::<EncodedPicture>(json!({"media_type": "x", "base64": ""})).is_err());
}

#[test]
fn prompt_entries_and_diagnostics_are_camel_case_and_tagged() {
    let entry = Entry {
        role: Role::Tool,
        layer: Layer::NewMessage,
        parts: vec![
            Part::Picture {
                picture: PictureRef {
                    attachment_id: "p1".into(),
                    media_type: "image/png".into(),
                    width: 800,
                    height: 600,
                    reduced: true,
                },
            },
            Part::Answer(Answer {
                call_id: "c1".into(),
                content: "done".into(),
                is_error: false,
                pictures: Vec::new(),
            }),
        ],
    };
    assert_eq!(
        to_value(&entry).unwrap(),
        json!({"role": "tool", "layer": "newMessage", "parts": [
            {"type": "picture", "attachmentId": "p1", "mediaType": "image/png", "width": 800,
             "height": 600, "reduced": true},
            {"type": "answer", "callId": "c1", "content": "done", "isError": false}
        ]})
    );
    assert_eq!(
        to_value([
            Diagnostic::Memory(memory::Diagnostic::KeptTailShort {
                kept_messages: 5,
                missing: 2
            }),
            Diagnostic::ToolNameTaken {
                name: "load_skill".into()
            },
        ])
        .unwrap(),
        json!([
            {"kind": "keptTailShort", "keptMessages": 5, "missing": 2},
            {"kind": "toolNameTaken", "name": "load_skill"}
        ])
    );
}

#[test]
fn parsed_commands_are_tagged_by_kind() {
    assert_eq!(
        to_value(parse_command("/a /b go")).unwrap(),
        json!({"kind": "message", "skills": ["a", "b"], "text": "go"})
    );
    assert_eq!(
        to_value(parse_command("/compact")).unwrap(),
        json!({"kind": "compact", "instructions": null})
    );
}
