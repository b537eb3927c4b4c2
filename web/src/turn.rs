//! One turn: the user's message (or the `/compact` pill) with its Edit button, the assistant's
//! blocks, the sources its answer was given, what a running turn is doing, why a failed one
//! failed, the turn's notes, its controls and what can be done with the reply.

use leptos::prelude::*;
use portal_core::TurnStatus;
use portal_core::attachment::Attachment;
use portal_core::compaction::compact_pill;
use portal_core::display::has_answer;

use crate::activity::TurnActivity;
use crate::api;
use crate::block::BlockSlot;
use crate::compaction::CompactPill;
use crate::controls::TurnControls;
use crate::sources::Sources;
use crate::state::portal;
use crate::turn_actions::{EditMessage, ReplyActions};
use crate::turn_failure::TurnFailure;
use crate::turn_view::TurnView;

#[component]
pub fn Turn(turn: TurnView) -> impl IntoView {
    let newest_divider = portal().newest_divider;
    let status = Memo::new(move |_| turn.state.with(|s| s.status));
    let running = Memo::new(move |_| status.get() == TurnStatus::Running);
    // The answer, announced once when the whole turn has settled: until the turn ends, a text
    // block may still turn out to be narration before a tool call (R14).
    let announcement = move || {
        (turn.announces && turn.settled())
            .then(|| turn.drawn_answer())
            .flatten()
    };
    let pill = move || turn.state.with(|s| compact_pill(&s.user_text));
    // A turn above the newest divider is dimmed; in the divider's own turn, what precedes it.
    // The `/compact` pill opening the divider's turn is the command, not conversation: not dimmed.
    let above = move |position: usize| match newest_divider.get() {
        Some((at, _)) if at > turn.index => true,
        Some((at, block)) if at == turn.index => position < block,
        _ => false,
    };
    let user_dimmed = move || match newest_divider.get() {
        Some((at, _)) if at > turn.index => true,
        Some((at, _)) if at == turn.index => pill().is_none(),
        _ => false,
    };
    view! {
        <article
            class="turn"
            class:has-answer=move || turn.state.with(|s| has_answer(&s.blocks.iter().map(|b| b.kind).collect::<Vec<_>>()))
            data-turn=turn.index
            hidden=move || !portal().versions.shown(turn.index)
            data-turn-status=move || status.get().as_str()
            data-settled=move || turn.settled().to_string()
        >
            <div class="message user" class:dimmed=user_dimmed class:compact=move || pill().is_some()>
                {move || match pill() {
                    Some(instructions) => view! { <CompactPill instructions /> }.into_any(),
                    None => view! { <p dir="auto">{turn.state.with(|s| s.user_text.clone())}</p> }.into_any(),
                }}
                <AttachmentNames turn />
                <EditMessage turn />
            </div>
            <div class="message assistant" aria-busy=move || (!turn.settled()).to_string()>
                // A block's place is taken again after a withdrawal (C2), so the key is the
                // place with the view drawn there.
                <For
                    each=move || turn.blocks.get().into_iter().enumerate()
                    key=|(position, block)| (*position, block.body)
                    let((at, block))
                >
                    <BlockSlot turn at block dimmed=Signal::derive(move || above(at)) />
                </For>
                {move || running.get().then(|| view! { <TurnActivity turn /> })}
            </div>
            <Sources turn />
            <TurnFailure turn />
            <p class="turn-note">
                {move || {
                    status.track();
                    turn.state
                        .with(|s| s.cut_off_note())
                        .map(|note| view! { <span class="cut-off" data-testid="cut-off">{note}</span> })
                }}
                {move || {
                    turn.effort
                        .get()
                        .filter(|_| pill().is_none())
                        .map(|e| view! { <span class="effort-label" data-testid="effort">"Effort: " {e.as_str()}</span> })
                }}
            </p>
            <TurnControls turn />
            <ReplyActions turn />
            <div class="announce" aria-live="polite">
                {announcement}
            </div>
        </article>
    }
}

/// The turns shown, each drawn by [`Turn`] and kept in place by its number: one function for the
/// conversation and a shared conversation's page (web/src/shared_page.rs), never inlined, so that
/// the wasm holds the list once.
#[inline(never)]
pub fn turns() -> AnyView {
    let portal = portal();
    view! {
        <For each=move || portal.turns.get() key=|turn| turn.index let(turn)>
            <Turn turn />
        </For>
    }
    .into_any()
}

/// The files the user's message carries, each a link that opens a picture or downloads anything
/// else, a picture with its thumbnail; in a shared conversation their names alone, as the files
/// are served to the conversation's owner only.
#[component]
fn AttachmentNames(turn: TurnView) -> impl IntoView {
    let owned = !portal().read_only;
    turn.attachments.with_value(|files| {
        (!files.is_empty()).then(|| {
            let names = files
                .iter()
                .map(|file| {
                    let address = owned.then(|| api::content_url(file.id()));
                    let thumbnail = address
                        .clone()
                        .filter(|_| matches!(file, Attachment::Picture(_)))
                        .map(|address| {
                            view! { <img class="thumbnail" src=address alt="" width="48" height="48" /> }
                        });
                    view! {
                        <li data-testid="attachment-name">
                            <a href=address target="_blank" rel="noopener">
                                {thumbnail}
                                <span class="name">{file.filename().to_string()}</span>
                            </a>
                        </li>
                    }
                })
                .collect_view();
            view! { <ul class="attachments" aria-label="Attachments">{names}</ul> }
        })
    })
}
