//! What the person can do with a turn once it has ended: copy the reply as plain text, have the
//! last message answered again (Regenerate: a new turn, the transcript is never rewritten), and
//! take a message of theirs back into the composer to edit and send as a new turn. A shared
//! conversation's turns are only read: Copy and the versions' switch stay.

use std::time::Duration;

use leptos::prelude::*;
use portal_core::compaction::compact_pill;

use crate::inspector::InspectButton;
use crate::state::portal;
use crate::turn_view::TurnView;
use crate::version_switch::VersionSwitch;
use crate::{editing, session};

/// How long "Copied" shows after a copy.
const COPIED_FOR: Duration = Duration::from_secs(2);

/// Copy and Regenerate, under a turn that ended and settled.
#[component]
pub fn ReplyActions(turn: TurnView) -> impl IntoView {
    let portal = portal();
    let copied = RwSignal::new(false);
    let answer = Memo::new(move |_| {
        turn.settled()
            .then(|| turn.state.with(|s| s.answer()))
            .flatten()
    });
    let copy = move |_| {
        let Some(text) = answer.get_untracked() else {
            return;
        };
        let Some(window) = web_sys::window() else {
            return;
        };
        let _ = window.navigator().clipboard().write_text(&text);
        copied.set(true);
        set_timeout(move || copied.set(false), COPIED_FOR);
    };
    let regenerate = move |_| session::resend(portal, turn, turn.effort.get_untracked());
    // Regenerate asks again for the latest chat turn's reply, once it ended (a failed one offers
    // Retry instead); a shared conversation is only read.
    let regenerates = move || {
        !portal.read_only
            && portal.is_latest(&turn)
            && turn.settled()
            && turn
                .state
                .with(|s| s.retry_reason().is_none() && compact_pill(&s.user_text).is_none())
    };
    move || {
        let copies = answer.get().is_some();
        let regenerates = regenerates();
        let versions = portal.versions.of(turn.index).is_some();
        let settled = turn.settled();
        (copies || regenerates || versions || settled).then(|| {
            view! {
                <div class="reply-actions">
                    {copies.then(|| view! {
                        <button type="button" data-testid="copy" on:click=copy>
                            {move || if copied.get() { "Copied" } else { "Copy" }}
                        </button>
                    })}
                    {regenerates.then(|| view! {
                        <button
                            type="button"
                            data-testid="regenerate"
                            disabled=move || portal.running() || portal.sending.get()
                            on:click=regenerate
                        >
                            "Regenerate"
                        </button>
                    })}
                    {(settled && !portal.read_only).then(|| view! { <InspectButton index=turn.index /> })}
                    <VersionSwitch index=turn.index />
                    <TurnCost index=turn.index />
                </div>
            }
        })
    }
}

/// What the turn's calls cost, with their calls and tokens on hover and when opened; nothing
/// until the conversation's usage is read.
#[component]
fn TurnCost(index: u32) -> impl IntoView {
    let portal = portal();
    move || {
        let tally = portal.usage.with(|u| u.as_ref()?.turn(index).cloned())?;
        let details = tally.details();
        let title = format!("This reply: {details}");
        Some(view! {
            <details class="turn-cost" data-testid="turn-cost" title=title>
                <summary aria-label=format!("This reply cost {}", tally.short())>{tally.short()}</summary>
                <span class="turn-cost-details">{details}</span>
            </details>
        })
    }
}

/// Edit, beside a message the person sent: it becomes the composer's draft, with its files, to
/// change and send as a new turn (web/src/editing.rs); none in a shared conversation.
#[component]
pub fn EditMessage(turn: TurnView) -> impl IntoView {
    let portal = portal();
    (!portal.read_only).then(|| view! {
        <button type="button" class="edit-message" data-testid="edit" on:click=move |_| editing::begin(portal, turn)>
            "Edit"
        </button>
    })
}
