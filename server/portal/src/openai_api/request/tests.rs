use expect_test::{Expect, expect};

use super::*;

/// Parses `body` with a limit of 4 messages and shows what came of it in one line.
fn check(body: &str, expected: Expect) {
    let shown = match parse(body.as_bytes(), 4) {
        Ok(r) => format!(
            "agent={} text={:?} earlier={:?} conversation={:?} stream={} usage={} store={} effort={:?}",
            r.agent,
            r.text,
            r.earlier,
            r.conversation,
            r.stream,
            r.include_usage,
            r.store,
            r.effort
        ),
        Err(r) => format!("refused {:?}: {}", r.param, r.message),
    };
    expected.assert_eq(&shown);
}

#[test]
fn a_first_message_runs_with_the_defaults() {
    check(
        r#"{"model":"default","messages":[{"role":"user","content":"hi"}]}"#,
        expect![[
            r#"agent=default text="hi" earlier=[] conversation=None stream=false usage=false store=true effort=None"#
        ]],
    );
}

#[test]
fn a_continued_conversation_carries_its_earlier_user_texts() {
    check(
        r#"{"model":"default","conversation":"c1","stream":true,"stream_options":{"include_usage":true},
            "reasoning_effort":"high","temperature":0.2,
            "messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
                        {"role":"assistant","content":"reply"},
                        {"role":"user","content":"next"}]}"#,
        expect![[
            r#"agent=default text="next" earlier=["ab"] conversation=Some("c1") stream=true usage=true store=true effort=Some(High)"#
        ]],
    );
}

#[test]
fn what_the_portal_does_not_take_is_refused_naming_the_field() {
    let user = r#""messages":[{"role":"user","content":"hi"}]"#;
    check(
        &format!(r#"{{"model":"default",{user},"tools":[]}}"#),
        expect![[
            r#"refused Some("tools"): the portal runs the agent's own tools on the server and passes none of the client's to the model; leave out `tools`, `tool_choice`, `functions` and `function_call` (docs/api.md, "Tools")"#
        ]],
    );
    check(
        &format!(r#"{{"model":"default",{user},"n":2}}"#),
        expect![[
            r#"refused Some("n"): the portal writes one answer a request; leave out `n` or send 1"#
        ]],
    );
    check(
        &format!(r#"{{"model":"default",{user},"frobnicate":1}}"#),
        expect![[
            r#"refused Some("frobnicate"): `frobnicate` is not a field the portal takes; docs/api.md lists those it does"#
        ]],
    );
    check(
        &format!(r#"{{"model":"default",{user},"stream_options":{{"include_usage":true}}}}"#),
        expect![[
            r#"refused Some("stream_options"): `stream_options` applies to a streamed answer; send it with `stream: true`"#
        ]],
    );
    check(
        &format!(r#"{{"model":"default",{user},"store":false,"conversation":"c1"}}"#),
        expect![[
            r#"refused Some("store"): `store: false` starts a conversation that is forgotten once answered; it cannot continue one, so leave out `conversation` or `store`"#
        ]],
    );
    check(
        &format!(r#"{{"model":"default",{user},"reasoning_effort":"minimal"}}"#),
        expect![[
            r#"refused Some("reasoning_effort"): `reasoning_effort` must be `low`, `medium` or `high` (the portal's efforts)"#
        ]],
    );
    check(
        &format!(r#"{{{user}}}"#),
        expect![[
            r#"refused Some("model"): `model` must name an agent; GET /v1/models lists those you may use"#
        ]],
    );
}

#[test]
fn messages_must_alternate_end_with_the_user_and_stay_within_the_limit() {
    check(
        r#"{"model":"m","messages":[{"role":"system","content":"be terse"},{"role":"user","content":"hi"}]}"#,
        expect![[
            r#"refused Some("messages[0]"): the agent's instructions are its author's (the portal's layered prompt); a request cannot add a system or developer message, so say it in the user's message"#
        ]],
    );
    check(
        r#"{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]}"#,
        expect![[r#"refused Some("messages"): the last message must be the user's new one"#]],
    );
    check(
        r#"{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}"#,
        expect![[
            r#"refused Some("messages[1]"): two user messages follow each other; join them into one message"#
        ]],
    );
    check(
        r#"{"model":"m","messages":[{"role":"tool","content":"42","tool_call_id":"x"}]}"#,
        expect![[
            r#"refused Some("messages[0]"): a message's `tool_call_id` is not something the portal takes; a message has `role` and `content` (tool calls run on the server, docs/api.md)"#
        ]],
    );
    check(
        r#"{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}"#,
        expect![[
            r#"refused Some("messages[0].content[0]"): the portal takes text parts only over this API; send pictures and files in the page, or with POST /api/attachments"#
        ]],
    );
    check(
        r#"{"model":"m","messages":[{"role":"user","content":"  "}]}"#,
        expect![[
            r#"refused Some("messages"): the new message is empty; write something before sending"#
        ]],
    );
    let five = r#"{"role":"user","content":"a"},{"role":"assistant","content":"b"}"#;
    check(
        &format!(r#"{{"model":"m","messages":[{five},{five},{{"role":"user","content":"c"}}]}}"#),
        expect![[
            r#"refused Some("messages"): the request carries 5 messages, past the limit of 4; continue the conversation with its new message alone and `conversation` (docs/api.md)"#
        ]],
    );
    check(
        "[1,2]",
        expect![[
            r#"refused None: the request body must be a JSON object with `model` and `messages`"#
        ]],
    );
}
