//! What a turn does with one model reply, decided here for every host: the id each call is stored
//! under, each call gated by its tool (a clarification question pauses the turn and answers the
//! reply's other calls "not run"; an approval request pauses it until every request is decided;
//! otherwise the calls run), where a stored turn paused, whether a reply ended the turn (rule
//! B3), and how many model calls one turn may make.

use std::collections::HashSet;

use serde_json::Value;

use crate::block::Block;
use crate::model::BadArguments;
use crate::tools::NOT_RUN_FOR_A_QUESTION;
use crate::transcript::{Awaiting, Message, Role, Transcript};

/// How many model calls one run of a turn (from its start, or from where it paused, to its end or
/// its next pause) makes at most before the turn fails, saying the model made that many calls
/// without answering. **Decision:** 16.
pub const MODEL_CALL_LIMIT: usize = 16;

/// How a tool takes one call: at once, after the user approves it, or as a question to the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// Run it now.
    Run,
    /// Record an approval request with this summary and pause until the user decides.
    Approval { summary: String },
    /// Record this question as a clarification request instead of the call, and pause; the
    /// user answers with their next message.
    Clarification { question: String },
}

/// One call of a model's reply, its id settled.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub id: String,
    pub name: String,
    pub arguments: Result<Value, BadArguments>,
}

/// What to write for one reply's calls. Whether the turn then pauses is [`paused_after`]'s to
/// say, of the messages as written: the same rule decides it live and for a stored turn.
#[derive(Debug, Clone, PartialEq)]
pub struct GatePlan {
    /// The blocks that close the reply's assistant message, in the calls' order: each call, or
    /// the question it became, and after a call that needs approval, its approval request.
    pub blocks: Vec<Block>,
    /// Results for the calls a question keeps from running, written in a tool message after
    /// the blocks (none when there are none).
    pub not_run: Vec<Block>,
    /// The calls to run now, in order, each answered with its result in a tool message: every
    /// call, unless one needs approval or a question was asked.
    pub run: Vec<Call>,
}

/// Plans one reply's calls, each with its tool's gate, in the order the model made them.
pub fn gate_calls(calls: impl IntoIterator<Item = (Call, Gate)>) -> GatePlan {
    let mut blocks = Vec::new();
    let mut recorded = Vec::new();
    let mut question = false;
    let mut approvals = false;
    for (call, gate) in calls {
        match gate {
            Gate::Clarification { question: text } => {
                blocks.push(Block::ClarificationRequest {
                    id: call.id,
                    question: text,
                });
                question = true;
            }
            gate => {
                let input = call
                    .arguments
                    .as_ref()
                    .map_or_else(|bad| Value::String(bad.raw.clone()), Value::clone);
                blocks.push(Block::ToolUse {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    input,
                });
                if let Gate::Approval { summary } = gate {
                    blocks.push(Block::ApprovalRequest {
                        call_id: call.id.clone(),
                        summary,
                    });
                    approvals = true;
                }
                recorded.push(call);
            }
        }
    }
    let (not_run, run) = if question {
        let not_run = recorded
            .into_iter()
            .map(|call| Block::ToolResult {
                call_id: call.id,
                content: NOT_RUN_FOR_A_QUESTION.into(),
                is_error: true,
                pictures: Vec::new(),
            })
            .collect();
        (not_run, Vec::new())
    } else if approvals {
        (Vec::new(), Vec::new())
    } else {
        (Vec::new(), recorded)
    };
    GatePlan {
        blocks,
        not_run,
        run,
    }
}

/// The ids of every call stored in the transcript.
pub fn call_ids(transcript: &Transcript) -> HashSet<String> {
    transcript
        .turns
        .iter()
        .flat_map(|t| &t.messages)
        .flat_map(|m| &m.blocks)
        .filter_map(|b| match b {
            Block::ToolUse { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect()
}

/// The id a call is stored under, unique in the conversation by construction: its turn, the
/// place of the message it is in, and its place in the reply (`index`, the model's own, or
/// `position` among the reply's calls where that is `taken`).
pub fn call_id(
    turn: u32,
    transcript: &Transcript,
    position: usize,
    index: u32,
    taken: &HashSet<String>,
) -> String {
    let messages = transcript.turn(turn).map_or(0, |t| t.messages.len());
    let mut id = format!("call_{turn}_{messages}_{index}");
    let mut extra = position;
    while taken.contains(&id) {
        extra += 1;
        id = format!("call_{turn}_{messages}_{index}_{extra}");
    }
    id
}

/// Whether a turn's last message is the assistant's ending on text: a reply that ends the turn
/// (rule B3); anything else asks for another model call.
pub fn ends_on_text(messages: &[Message]) -> bool {
    messages.last().is_some_and(|m| {
        m.role == Role::Assistant && matches!(m.blocks.last(), Some(Block::Text { .. }))
    })
}

/// Whether a stored turn paused after its message `m`: after an assistant message with approval
/// requests, or with a question, after it or after the tool message that answers its other calls
/// "not run" ([`gate_calls`]).
pub fn paused_after(messages: &[Message], m: usize) -> bool {
    let asks = |i: usize| {
        messages
            .get(i)
            .filter(|message| message.role == Role::Assistant)
            .map(|message| Awaiting::of_blocks(&message.blocks))
            .filter(|awaiting| awaiting.question || !awaiting.approvals.is_empty())
    };
    let next_is_tool = messages.get(m + 1).is_some_and(|n| n.role == Role::Tool);
    match (asks(m), messages.get(m).map(|message| message.role)) {
        (Some(awaiting), _) => !(awaiting.question && next_is_tool),
        (None, Some(Role::Tool)) => m
            .checked_sub(1)
            .and_then(asks)
            .is_some_and(|awaiting| awaiting.question),
        (None, _) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A call, its gate written as `run`, `approve:<summary>` or `ask:<question>`, and
    /// `bad:<raw>` arguments standing for arguments that are not a JSON object.
    fn call(id: &str, name: &str, arguments: &str, gate: &str) -> (Call, Gate) {
        let arguments = match arguments.strip_prefix("bad:") {
            Some(raw) => Err(BadArguments {
                raw: raw.into(),
                reason: "not a JSON object".into(),
            }),
            None => Ok(serde_json::from_str(arguments).expect("test arguments")),
        };
        let gate = match gate.split_once(':') {
            Some(("approve", summary)) => Gate::Approval {
                summary: summary.into(),
            },
            Some(("ask", question)) => Gate::Clarification {
                question: question.into(),
            },
            _ => Gate::Run,
        };
        let call = Call {
            id: id.into(),
            name: name.into(),
            arguments,
        };
        (call, gate)
    }

    /// The plan as lines: each block, then what follows.
    fn render(plan: &GatePlan) -> String {
        let mut lines: Vec<String> = plan
            .blocks
            .iter()
            .map(|block| match block {
                Block::ToolUse { id, name, input } => format!("tool_use {id} {name} {input}"),
                Block::ApprovalRequest { call_id, summary } => {
                    format!("approval_request {call_id} {summary}")
                }
                Block::ClarificationRequest { id, question } => {
                    format!("clarification_request {id} {question}")
                }
                other => format!("unexpected {other:?}"),
            })
            .collect();
        if !plan.not_run.is_empty() {
            let answered: Vec<String> = plan
                .not_run
                .iter()
                .map(|b| match b {
                    Block::ToolResult {
                        call_id,
                        content,
                        is_error: true,
                        ..
                    } if content == NOT_RUN_FOR_A_QUESTION => call_id.clone(),
                    other => format!("unexpected {other:?}"),
                })
                .collect();
            lines.push(format!("then not run [{}]", answered.join(", ")));
        }
        let calls: Vec<String> = plan
            .run
            .iter()
            .map(|c| match &c.arguments {
                Ok(arguments) => format!("{} {arguments}", c.id),
                Err(bad) => format!("{} bad:{}", c.id, bad.raw),
            })
            .collect();
        lines.push(format!("then run [{}]", calls.join(", ")));
        lines.join("\n")
    }

    fn check(calls: Vec<(Call, Gate)>, expected: &str) {
        assert_eq!(render(&gate_calls(calls)), expected.trim());
    }

    #[test]
    fn gating_one_replys_calls() {
        // Calls that need nothing run, in order.
        check(
            vec![
                call("c1", "count", r#"{"text":"a"}"#, "run"),
                call("c2", "count", r#"{"text":"b"}"#, "run"),
            ],
            r#"
tool_use c1 count {"text":"a"}
tool_use c2 count {"text":"b"}
then run [c1 {"text":"a"}, c2 {"text":"b"}]"#,
        );
        // Arguments that are not an object are recorded as the raw text, and the call "runs"
        // with them (the turn loop answers it with the error).
        check(
            vec![call("c1", "count", "bad:{\"text\":", "run")],
            r#"
tool_use c1 count "{\"text\":"
then run [c1 bad:{"text":]"#,
        );
        // An approval runs nothing: its request follows its call, and the turn pauses after
        // the message (`paused_after`).
        check(
            vec![
                call("c1", "count", "{}", "run"),
                call("c2", "publish", "{}", "approve:Publish the note A"),
                call("c3", "publish", "{}", "approve:Publish the note B"),
            ],
            r#"
tool_use c1 count {}
tool_use c2 publish {}
approval_request c2 Publish the note A
tool_use c3 publish {}
approval_request c3 Publish the note B
then run []"#,
        );
        // A question alone runs nothing and answers nothing.
        check(
            vec![call("c1", "ask_user", "{}", "ask:Which part?")],
            r#"
clarification_request c1 Which part?
then run []"#,
        );
        // A question wins over approvals: every other call is answered "not run", even one
        // that needed approval.
        check(
            vec![
                call("c1", "count", "{}", "run"),
                call("c2", "publish", "{}", "approve:Publish"),
                call("c3", "ask_user", "{}", "ask:Which part?"),
            ],
            r#"
tool_use c1 count {}
tool_use c2 publish {}
approval_request c2 Publish
clarification_request c3 Which part?
then not run [c1, c2]
then run []"#,
        );
        // No calls: nothing to write, nothing to run.
        check(Vec::new(), "then run []");
    }

    /// The messages of a turn written one letter each: `u` the user's, `t` a tool message, `a`
    /// the assistant's with text, `q` with a question and `r` with an approval request.
    fn messages(letters: &str) -> Vec<Message> {
        letters
            .chars()
            .map(|letter| match letter {
                'u' => Message::new(Role::User, vec![Block::text("Hello")]),
                't' => Message::new(
                    Role::Tool,
                    vec![Block::ToolResult {
                        call_id: "c".into(),
                        content: NOT_RUN_FOR_A_QUESTION.into(),
                        is_error: true,
                        pictures: Vec::new(),
                    }],
                ),
                'a' => Message::new(Role::Assistant, vec![Block::text("Done")]),
                'q' => Message::new(
                    Role::Assistant,
                    vec![Block::ClarificationRequest {
                        id: "q".into(),
                        question: "Which one?".into(),
                    }],
                ),
                'r' => Message::new(
                    Role::Assistant,
                    vec![
                        Block::ToolUse {
                            id: "c".into(),
                            name: "publish".into(),
                            input: Value::Null,
                        },
                        Block::ApprovalRequest {
                            call_id: "c".into(),
                            summary: "Publish".into(),
                        },
                    ],
                ),
                other => panic!("no message is written {other}"),
            })
            .collect()
    }

    /// Where a stored turn written as `letters` paused: the positions after which it did.
    fn check_pauses(letters: &str, expected: &[usize]) {
        let messages = messages(letters);
        let paused: Vec<usize> = (0..messages.len() + 2)
            .filter(|&m| paused_after(&messages, m))
            .collect();
        assert_eq!(paused, expected, "{letters}");
    }

    #[test]
    fn a_stored_turn_paused_after_its_requests_and_after_a_questions_not_run_answers() {
        check_pauses("ua", &[]);
        check_pauses("ur", &[1]);
        check_pauses("uq", &[1]);
        // A question's other calls are answered "not run" before the pause.
        check_pauses("uqt", &[2]);
        // Resumed after a decision, then another request; positions past the end are not
        // pauses, and asking about them does not panic.
        check_pauses("urtra", &[1, 3]);
        check_pauses("", &[]);
    }

    #[test]
    fn b3_only_a_reply_ending_on_text_ends_the_turn() {
        assert!(ends_on_text(&messages("ua")));
        assert!(!ends_on_text(&messages("ur")));
        assert!(!ends_on_text(&messages("uq")));
        assert!(!ends_on_text(&messages("uat")));
        assert!(!ends_on_text(&messages("")));
    }

    #[test]
    fn a_calls_id_names_its_turn_message_and_place_and_steps_past_ids_taken() {
        let transcript = Transcript::new();
        let taken: HashSet<String> = ["call_3_0_1".to_string(), "call_3_0_1_3".to_string()].into();
        assert_eq!(call_id(3, &transcript, 0, 0, &taken), "call_3_0_0");
        assert_eq!(call_id(3, &transcript, 2, 1, &taken), "call_3_0_1_4");
    }
}
