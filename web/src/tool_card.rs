//! An agent's work, drawn as compact cards: a tool call with its tool's name (and its MCP
//! server's, for a server's tool), its arguments on one line, its state, the pictures it answered
//! with (served to the conversation's owner only) and, on demand, its result's opening lines; an
//! approval request with the action it asks for in plain words and, while the turn waits on it,
//! the decision. What each shows is decided by `portal_core::tool_card`.

use leptos::prelude::*;
use portal_core::BlockKind;
use portal_core::tool_card::{ToolCardConfig, ToolState, tool_card};

use crate::api;
use crate::decision::Decision;
use crate::state::portal;
use crate::turn_view::TurnView;

/// The call at block `at` of `turn`.
#[component]
pub fn ToolCard(turn: TurnView, at: usize, dimmed: Signal<bool>) -> impl IntoView {
    let card = Memo::new(move |_| {
        turn.state
            .with(|s| tool_card(s, at, &ToolCardConfig::default()))
    });
    move || {
        card.get().map(|card| {
            let state = card.state;
            let result = card.result.map(|opening| {
                view! {
                    <details class="tool-result">
                        <summary>"Result"</summary>
                        <pre dir="auto">{opening.text}{opening.cut.then_some("\n…")}</pre>
                    </details>
                }
            });
            let pictures = card
                .pictures
                .iter()
                .map(|picture| {
                    let alt = format!("Picture from {}, {}×{}", card.name, picture.width, picture.height);
                    view! { <img class="tool-picture" src=api::content_url(&picture.attachment_id) alt=alt /> }
                })
                .collect_view();
            view! {
                <div class="block tool-card" class:dimmed=dimmed data-testid="tool-card" data-state=state.as_str()>
                    <div class="tool-line">
                        <StateMark state />
                        {card.server.map(|server| view! { <span class="tool-server">{server}</span> })}
                        <span class="tool-name">{card.name}</span>
                        <span class="tool-summary" dir="auto">{card.summary}</span>
                        <span class="tool-state">{state.label()}</span>
                    </div>
                    {pictures}
                    {result}
                </div>
            }
        })
    }
}

/// The approval request at block `at` of `turn`: the action asked for, and where its call stands.
#[component]
pub fn ApprovalCard(turn: TurnView, at: usize, dimmed: Signal<bool>) -> impl IntoView {
    let request = Memo::new(move |_| {
        turn.state.with(|s| {
            let block = s.blocks.get(at)?;
            let call = block.call.as_ref()?;
            // The card of the call it asks about, for where the call stands now.
            let state = (0..s.blocks.len())
                .filter_map(|place| tool_card(s, place, &ToolCardConfig::default()))
                .find(|card| card.call_id == call.id)
                .map(|card| card.state);
            // The arguments in full, as the call carries them: what is approved.
            let arguments = s
                .blocks
                .iter()
                .find(|b| b.kind == BlockKind::ToolUse && b.call.as_ref() == Some(call))
                .map(|b| b.text.clone())
                .filter(|a| a != "{}");
            // The calls the turn waits on, when this card is the last of them: its decision.
            let awaiting = s.awaiting().approvals;
            let decides = (awaiting.last() == Some(&call.id)).then_some(awaiting);
            Some((block.text.clone(), arguments, state, decides))
        })
    });
    move || {
        request.get().map(|(action, arguments, state, decides)| {
            let state = state.unwrap_or(ToolState::AwaitingApproval);
            // A shared conversation's reader did not decide: the decision is not theirs.
            let outcome = match (state, portal().read_only) {
                (ToolState::AwaitingApproval, _) => "Waiting for your approval",
                (ToolState::Declined, false) => "You declined",
                (ToolState::Declined, true) => "Declined",
                (ToolState::NotRun, _) => "Not run",
                (_, false) => "You approved",
                (_, true) => "Approved",
            };
            view! {
                <div class="block approval-card" class:dimmed=dimmed data-testid="approval-card" data-state=state.as_str()>
                    <p class="approval-heading">"The assistant asks to"</p>
                    <p class="approval-action" dir="auto">{action}</p>
                    {arguments.map(|a| view! { <pre class="approval-arguments" data-testid="approval-arguments" tabindex="0" aria-label="Arguments">{a}</pre> })}
                    <p class="approval-state">{outcome}</p>
                    {decides.map(|calls| view! { <Decision turn calls /> })}
                </div>
            }
        })
    }
}

/// A small mark of a call's state: a breathing dot while it runs, a tick, a cross, a dash.
#[component]
fn StateMark(state: ToolState) -> impl IntoView {
    let path = match state {
        ToolState::Running | ToolState::AwaitingApproval => "",
        ToolState::Done => "M5 10.5l3.2 3.2L15 7",
        ToolState::Failed => "M6 6l8 8M14 6l-8 8",
        ToolState::NotRun | ToolState::Declined => "M6 10h8",
    };
    view! {
        <svg class="tool-mark" viewBox="0 0 20 20" width="14" height="14" aria-hidden="true">
            {if path.is_empty() {
                view! { <circle cx="10" cy="10" r="4" fill="currentColor" /> }.into_any()
            } else {
                view! {
                    <path d=path fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" />
                }
                    .into_any()
            }}
        </svg>
    }
}
