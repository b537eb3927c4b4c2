//! What the turn loop does with the calls of one model reply, each gated by its tool: a
//! clarification question pauses the turn and answers every other call of the reply "not run";
//! an approval request pauses the turn until every request is decided; otherwise the calls run.
//! Pure: the turn loop writes the blocks and runs the calls.

use portal_core::Block;
use portal_core::tools::NOT_RUN_FOR_A_QUESTION;
use serde_json::Value;

use crate::model::BadArguments;
use crate::tools::Gate;

/// One call of a model's reply, its id settled.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Call {
    pub id: String,
    pub name: String,
    pub arguments: Result<Value, BadArguments>,
}

/// What to do with one reply's calls.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct GatePlan {
    /// The blocks that close the reply's assistant message, in the calls' order: each call, or
    /// the question it became, and after a call that needs approval, its approval request.
    pub blocks: Vec<Block>,
    pub next: Next,
}

/// What follows the reply's blocks.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Next {
    /// Run these calls now, in order, and answer each with its result in a tool message.
    Run(Vec<Call>),
    /// Pause until the user decides every approval request.
    AwaitDecisions,
    /// Pause until the user answers the question. The reply's other calls are answered first
    /// with these results, in a tool message (none when there are no other calls).
    AwaitAnswer { not_run: Vec<Block> },
}

/// Plans one reply's calls, each with its tool's gate, in the order the model made them.
pub(super) fn gate_calls(calls: impl IntoIterator<Item = (Call, Gate)>) -> GatePlan {
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
    let next = if question {
        Next::AwaitAnswer {
            not_run: recorded
                .into_iter()
                .map(|call| Block::ToolResult {
                    call_id: call.id,
                    content: NOT_RUN_FOR_A_QUESTION.into(),
                    is_error: true,
                })
                .collect(),
        }
    } else if approvals {
        Next::AwaitDecisions
    } else {
        Next::Run(recorded)
    };
    GatePlan { blocks, next }
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
        lines.push(match &plan.next {
            Next::Run(calls) => {
                let calls: Vec<String> = calls
                    .iter()
                    .map(|c| match &c.arguments {
                        Ok(arguments) => format!("{} {arguments}", c.id),
                        Err(bad) => format!("{} bad:{}", c.id, bad.raw),
                    })
                    .collect();
                format!("then run [{}]", calls.join(", "))
            }
            Next::AwaitDecisions => "then await decisions".into(),
            Next::AwaitAnswer { not_run } => {
                let answered: Vec<String> = not_run
                    .iter()
                    .map(|b| match b {
                        Block::ToolResult {
                            call_id,
                            content,
                            is_error: true,
                        } if content == NOT_RUN_FOR_A_QUESTION => call_id.clone(),
                        other => format!("unexpected {other:?}"),
                    })
                    .collect();
                format!("then await the answer, not run [{}]", answered.join(", "))
            }
        });
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
        // An approval pauses the turn; its request follows its call.
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
then await decisions"#,
        );
        // A question alone pauses the turn with nothing answered.
        check(
            vec![call("c1", "ask_user", "{}", "ask:Which part?")],
            r#"
clarification_request c1 Which part?
then await the answer, not run []"#,
        );
        // A question wins over approvals: every other call is answered "not run", even one
        // that needed approval, and no decision is awaited.
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
then await the answer, not run [c1, c2]"#,
        );
        // No calls: nothing to write, nothing to run.
        check(Vec::new(), "then run []");
    }
}
