//! Golden files for the summary prompt (rules C8–C10) and the extractive summariser.
//! Regenerate with `UPDATE_EXPECT=1 cargo test -p portal-core --test it compaction_prompt::`.

use crate::compaction_support;

use compaction_support::*;
use expect_test::expect_file;
use portal_core::attachment::{Attachment, Document, ReadingStatus};
use portal_core::compaction::{Cause, CompactionPlan, Outcome, extractive, plan, settle};
use portal_core::{Block, Message, Role, Transcript, TurnStatus};
use serde_json::json;

const WINDOW: u64 = 200_000;

/// The one driver: the plan's request and its extractive summary against their golden files.
fn check(name: &str, plan: &CompactionPlan) {
    expect_file![format!(
        "../../../tests/golden/compaction/{name}.prompt.txt"
    )]
    .assert_eq(&plan.request.text());
    expect_file![format!(
        "../../../tests/golden/compaction/{name}.extractive.txt"
    )]
    .assert_eq(&extractive::summarise(&plan.request));
}

fn planned(transcript: &Transcript, cause: Cause, instructions: Option<&str>) -> CompactionPlan {
    plan(transcript, cause, instructions, WINDOW, &config(), &COUNTER).expect("a plan")
}

/// Tool work of every kind: an attachment, parallel calls, an error, an approval, a cut-off
/// turn with a call that never returned, thinking, and the turn in progress.
fn tool_work() -> Transcript {
    let mut request = user("Compare the two offers in the attached PDF and the vendor sheet");
    request.attachments.push(Attachment::Document(Document {
        id: "doc_7".into(),
        filename: "offers \"2024\".pdf".into(),
        media_type: "application/pdf".into(),
        status: ReadingStatus::Finished,
        pages_read: 12,
        pages_total: 12,
        stopped_by: None,
        unreadable_pages: vec![],
        headings: vec!["Offer A".into(), "Offer B".into()],
        text: Some("…".into()),
    }));
    transcript(vec![
        done(vec![
            request,
            Message::new(
                Role::Assistant,
                vec![
                    Block::Thinking {
                        text: "Read both first.".into(),
                    },
                    Block::text("Reading both sources."),
                    call_block(
                        "call_1",
                        "read_document",
                        json!({ "id": "doc_7", "pages": [1, 2] }),
                    ),
                    call_block(
                        "call_2",
                        "read_sheet",
                        json!({ "path": "shared/vendors.xlsx" }),
                    ),
                ],
            ),
            Message::new(
                Role::Tool,
                vec![
                    result_block(
                        "call_1",
                        "Offer A: 12,400 EUR, delivery in 6 weeks.\nOffer B: 11,900 EUR, delivery in 10 weeks.",
                    ),
                    Block::ToolResult {
                        call_id: "call_2".into(),
                        content: "Sheet is locked by another user.".into(),
                        is_error: true,
                        pictures: Vec::new(),
                    },
                ],
            ),
            say(
                "Offer B is cheaper by 500 EUR but arrives four weeks later. I recommend offer A if the deadline matters.",
            ),
        ]),
        exchange("The deadline matters. Go with offer A.", "Agreed: offer A."),
        turn(
            TurnStatus::CutOff,
            vec![
                user("Draft the order for offer A"),
                Message::new(
                    Role::Assistant,
                    vec![
                        call_block(
                            "call_3",
                            "write_file",
                            json!({ "path": "orders/2024-031.md", "content": "Order for offer A" }),
                        ),
                        Block::ApprovalRequest {
                            call_id: "call_3".into(),
                            summary: "Write orders/2024-031.md".into(),
                        },
                    ],
                ),
            ],
        ),
        running(vec![
            user("Approve it and also send it to Ana"),
            call("call_4", "write_file", "orders/2024-031.md"),
            result("call_4", "Created artifact art_88 at orders/2024-031.md."),
            call("call_5", "send_mail", "ana@example.com"),
            result("call_5", "Sent."),
        ]),
    ])
}

#[test]
fn c8_golden_tool_work() {
    check("tool-work", &planned(&tool_work(), Cause::Overflow, None));
}

#[test]
fn c9_golden_earlier_summary_carried_over() {
    let mut t = tool_work();
    let first = planned(&t, Cause::Overflow, None);
    let summary = extractive::summarise(&first.request);
    let Outcome::Commit(commit) = settle(&first, Ok(summary), &t, &COUNTER) else {
        panic!("a commit");
    };
    let turn = t.turns.last_mut().expect("turn");
    turn.messages.push(Message::new(
        Role::Assistant,
        vec![
            commit.block,
            Block::text("The order is written and sent to Ana."),
        ],
    ));
    turn.status = TurnStatus::Completed;
    for (request, answer) in [
        (
            "Thanks. When does offer A arrive exactly?",
            "Six weeks after the order: mid-May.",
        ),
        (
            "Put that date in the project calendar",
            "Added to the calendar.",
        ),
    ] {
        let mut next = exchange(request, answer);
        next.index = t.turns.len() as u32 + 1;
        t.turns.push(next);
    }
    check(
        "earlier-summary",
        &planned(&t, Cause::Threshold { projected: 180_000 }, None),
    );
}

#[test]
fn c10_golden_spanish_then_japanese() {
    let mut turns = vec![
        exchange(
            "Hola, necesito ayuda con el informe trimestral de ventas",
            "Claro, empecemos.",
        ),
        exchange(
            "Incluye Madrid, Barcelona y Valencia en el informe",
            "Incluidas.",
        ),
    ];
    for japanese in [
        "来週の会議の資料を準備してください",
        "予算の表を更新しました",
        "/fact-check 東京支社の数字を確認して",
        "東京支社の数字も入れてください",
        "締め切りは金曜日の午後です",
        "OK",
        "グラフの色を変えてもらえますか",
        "最後のページに要約を追加してください",
        "田中さんにも送ってください",
        "ありがとうございます、助かりました",
    ] {
        turns.push(exchange(japanese, "了解しました。"));
    }
    turns.push(running(vec![user("はい")]));
    check(
        "spanish-japanese",
        &planned(&transcript(turns), Cause::Overflow, None),
    );
}

#[test]
fn c6_golden_manual_with_instructions() {
    let mut t = transcript(vec![
        exchange(
            "Plan a trip to Kyoto in April",
            "Here is a three-day plan for Kyoto.",
        ),
        exchange(
            "Keep the budget under 900 EUR",
            "The plan now costs 860 EUR.",
        ),
    ]);
    let mut compact = done(vec![user("/compact keep the budget figures exact")]);
    compact.kind = portal_core::TurnKind::Compact;
    compact.status = TurnStatus::Running;
    compact.index = 3;
    t.turns.push(compact);
    check(
        "manual-instructions",
        &planned(&t, Cause::Command, Some("keep the budget figures exact")),
    );
}
