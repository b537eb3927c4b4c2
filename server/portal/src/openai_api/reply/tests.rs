use expect_test::{Expect, expect};
use portal_core::stream::TurnEvent;
use portal_core::{BlockKind, Role, TurnStatus};

use super::Reply;

/// Events written short: `m0 assistant` starts message 0, `b0.1 text` block 1 of message 0,
/// `d0.1 hello` a delta, `w0.1` a withdrawal from block 1, `end completed`.
fn events(script: &str) -> Vec<TurnEvent> {
    script
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|line| {
            let (head, rest) = line.split_once(' ').unwrap_or((line, ""));
            let at = |s: &str| -> (usize, usize) {
                let (m, b) = s.split_once('.').expect("m.b");
                (m.parse().expect("m"), b.parse().expect("b"))
            };
            match head.chars().next().expect("a head") {
                'm' => TurnEvent::MessageStart {
                    message: head[1..].parse().expect("m"),
                    role: if rest == "assistant" {
                        Role::Assistant
                    } else {
                        Role::Tool
                    },
                },
                'b' => {
                    let (message, block) = at(&head[1..]);
                    TurnEvent::BlockStart {
                        message,
                        block,
                        kind: match rest {
                            "text" => BlockKind::Text,
                            "thinking" => BlockKind::Thinking,
                            "tool_use" => BlockKind::ToolUse,
                            _ => BlockKind::ToolResult,
                        },
                        call: None,
                        is_error: false,
                        pictures: Vec::new(),
                    }
                }
                'd' => {
                    let (message, block) = at(&head[1..]);
                    TurnEvent::Delta {
                        message,
                        block,
                        text: rest.replace("\\n", "\n"),
                    }
                }
                'w' => {
                    let (message, block) = at(&head[1..]);
                    TurnEvent::Withdrawn { message, block }
                }
                _ => TurnEvent::TurnEnd {
                    status: TurnStatus::Completed,
                    reason: None,
                },
            }
        })
        .collect()
}

/// Folds the script and shows what was handed out, delta by delta, and the reply's text.
fn check(script: &str, expected: Expect) {
    let mut reply = Reply::default();
    let handed: Vec<String> = events(script)
        .iter()
        .filter_map(|e| reply.handle(e))
        .collect();
    expected.assert_eq(&format!(
        "handed {handed:?}\ntext {:?}\nended {:?}",
        reply.text(),
        reply.ended()
    ));
}

#[test]
fn only_the_assistants_text_is_handed_out_and_blocks_are_set_apart_by_a_blank_line() {
    check(
        "m1 assistant
         b1.0 thinking
         d1.0 let me look
         b1.1 text
         d1.1 Checking
         d1.1 .
         b1.2 tool_use
         d1.2 {\"q\":1}
         m2 tool
         b2.0 tool_result
         d2.0 42
         m3 assistant
         b3.0 text
         d3.0 It is 42.
         end completed",
        expect![[r#"
            handed ["Checking", ".", "\n\nIt is 42."]
            text "Checking.\n\nIt is 42."
            ended Some((Completed, None))"#]],
    );
}

#[test]
fn an_empty_text_block_adds_no_blank_line() {
    check(
        "m1 assistant
         b1.0 text
         b1.1 text
         d1.1 Only this",
        expect![[r#"
            handed ["Only this"]
            text "Only this"
            ended None"#]],
    );
}

#[test]
fn a_withdrawn_call_leaves_the_text_and_keeps_what_came_before() {
    check(
        "m1 assistant
         b1.0 text
         d1.0 kept
         b1.1 text
         d1.1 too long
         w1.1
         b1.1 text
         d1.1 again",
        expect![[r#"
            handed ["kept", "\n\ntoo long", "\n\nagain"]
            text "kept\n\nagain"
            ended None"#]],
    );
}
