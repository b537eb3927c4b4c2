//! One block of the assistant's output: a compaction's divider, a tool call's or an approval
//! request's card (a result is drawn in its call's card), or the element its text is drawn into,
//! classed by how core says it is drawn (R1, R2).

use leptos::html;
use leptos::prelude::*;
use portal_core::BlockKind;
use portal_core::display::Drawn;
use portal_core::turn_state::CompactionState;

use crate::compaction::{Summarised, Summarising};
use crate::tool_card::{ApprovalCard, ToolCard};
use crate::turn_view::{BlockView, TurnView};

/// A thinking block (R2): under a "Thinking" label, closed unless the reader opens it, its text
/// drawn into it all the same, smaller still and in the faintest ink.
#[component]
fn Thinking(block: BlockView, dimmed: Signal<bool>) -> impl IntoView {
    let slot = NodeRef::<html::Div>::new();
    Effect::new(move || {
        if let Some(slot) = slot.get() {
            block.body.with_value(|body| {
                let _ = slot.append_child(body);
            });
        }
    });
    view! {
        <details class="block thinking" class:dimmed=dimmed class:live=move || !block.settled.get() data-testid="thinking">
            <summary>{move || if block.settled.get() { "Thinking" } else { "Thinking…" }}</summary>
            <div class="thinking-body" node_ref=slot aria-hidden=move || (!block.settled.get()).then_some("true")></div>
        </details>
    }
}

/// Block `at` of `turn`, drawn from `block`.
#[component]
pub fn BlockSlot(
    turn: TurnView,
    at: usize,
    block: BlockView,
    dimmed: Signal<bool>,
) -> impl IntoView {
    if block.kind == BlockKind::Compaction {
        return view! {
            <div class="block compaction" class:dimmed=dimmed>
                {move || match turn.compaction(at) {
                    Some(CompactionState::Written(divider)) => view! { <Summarised divider /> }.into_any(),
                    Some(CompactionState::Writing) => {
                        view! { <Summarising started_ms=block.started_ms /> }.into_any()
                    }
                    // A summary that failed committed nothing, so nothing is drawn (C5).
                    _ => ().into_any(),
                }}
            </div>
        }
        .into_any();
    }
    match block.kind {
        BlockKind::ToolUse => return view! { <ToolCard turn at dimmed /> }.into_any(),
        BlockKind::ApprovalRequest => return view! { <ApprovalCard turn at dimmed /> }.into_any(),
        BlockKind::ToolResult => return ().into_any(),
        _ => {}
    }
    let slot = NodeRef::<html::Div>::new();
    if block.kind == BlockKind::Thinking {
        return view! { <Thinking block dimmed /> }.into_any();
    }
    Effect::new(move || {
        if let Some(slot) = slot.get() {
            block.body.with_value(|body| {
                let _ = slot.append_child(body);
            });
        }
    });
    let class = move || {
        let role = match turn.state.with(|s| s.drawn().get(at).copied()) {
            Some(Drawn::Answer) => "text answer",
            Some(Drawn::Narration) => "text narration",
            Some(Drawn::Thinking) => "thinking",
            _ => block.kind.as_str(),
        };
        let live = if block.settled.get() { "" } else { " live" };
        let dimmed = if dimmed.get() { " dimmed" } else { "" };
        format!("block {role}{live}{dimmed}")
    };
    let answer = (block.kind == BlockKind::ClarificationRequest).then(|| {
        view! { <PersonAnswer turn at /> }
    });
    view! {
        <div
            class=class
            node_ref=slot
            aria-hidden=move || (!block.settled.get()).then_some("true")
        ></div>
        {answer}
    }
    .into_any()
}

/// The person's answer to the question at block `at`, drawn as their message under it once it
/// is part of the turn.
#[component]
fn PersonAnswer(turn: TurnView, at: usize) -> impl IntoView {
    let text = Memo::new(move |_| {
        turn.state.with(|s| {
            let asked = s.blocks.get(at)?.message;
            s.answers
                .iter()
                .find(|a| a.message > asked)
                .filter(|a| !a.text.is_empty())
                .map(|a| a.text.clone())
        })
    });
    move || {
        text.get().map(|text| {
            view! {
                <div class="message user answer" data-testid="person-answer">
                    <p dir="auto">{text}</p>
                </div>
            }
        })
    }
}
