//! The conversation's traffic with the server: opening a stored conversation, sending a message,
//! following a turn's events and reading the conversation again after a turn.

use leptos::prelude::*;
use leptos::task::spawn_local;
use portal_core::compaction::{composer_refusal, context_in_use};
use portal_core::effort::{Effort, winning_effort};
use portal_core::stream::TurnEvent;
use portal_core::tokens::EstimateCounter;

use crate::state::Portal;
use crate::turn_view::TurnView;
use crate::{api, stream};

/// Opens the stored conversation `id`: its agent, its turns drawn settled, and the effort it last
/// ran with in the composer (rule E2).
pub fn open(portal: Portal, id: String) {
    portal.conversation.set(Some(id.clone()));
    let asked = id.clone();
    spawn_local(async move {
        match api::conversation_agent(&asked).await {
            Ok(agent) => portal.agent.set(Some(agent)),
            Err(error) => portal.problem.set(Some(error)),
        }
    });
    spawn_local(async move {
        match api::transcript(&id).await {
            Ok(transcript) => {
                portal
                    .in_use
                    .set(Some(context_in_use(&transcript, &EstimateCounter)));
                portal
                    .effort
                    .set(transcript.turns.iter().rev().find_map(|t| t.effort));
                portal
                    .turns
                    .set(transcript.turns.iter().map(TurnView::stored).collect());
            }
            Err(error) => portal.problem.set(Some(error)),
        }
    });
}

/// Sends the draft with its attachments, unless something stops it (a refused `/compact`, a
/// running turn, an upload still going). A refused message keeps its draft and attachments.
pub fn send(portal: Portal) {
    let text = portal.draft.get_untracked().trim().to_string();
    if let Some(refusal) = composer_refusal(&text, portal.latest_status()) {
        portal.problem.set(Some(refusal.to_string()));
        return;
    }
    if text.is_empty() || portal.running() || portal.sending.get_untracked() {
        return;
    }
    let chips = portal.attachments.get_untracked();
    if chips.iter().any(|c| c.uploaded.is_none()) {
        portal.problem.set(Some(
            "an attachment is still uploading; send once its chip shows it is attached".to_string(),
        ));
        return;
    }
    portal.problem.set(None);
    portal.sending.set(true);
    let message = Outgoing {
        text: text.clone(),
        effort: portal.effort.get_untracked(),
        agent: portal.shown_agent(),
        attachments: chips
            .iter()
            .filter_map(|c| c.uploaded.as_ref())
            .map(|a| (a.id().to_string(), a.filename().to_string()))
            .collect(),
    };
    spawn_local(async move {
        match send_turn(portal, message).await {
            Ok(()) => {
                if portal.draft.get_untracked().trim() == text {
                    portal.draft.set(String::new());
                }
                portal.attachments.set(Vec::new());
            }
            Err(error) => portal.problem.set(Some(error)),
        }
        portal.sending.set(false);
    });
}

/// Follows `turn` after the last event it read, drawing what it streams; once it ends, reads
/// the conversation again for the meter and the effort the turn recorded.
pub fn follow(portal: Portal, turn: TurnView) -> Result<(), String> {
    let Some(id) = portal.conversation.get_untracked() else {
        return Ok(());
    };
    stream::follow(
        &id.clone(),
        turn.index,
        turn.seen.get_value(),
        move |at, event| {
            turn.seen.set_value(at);
            turn.apply(&event);
            if matches!(event, TurnEvent::TurnEnd { .. }) {
                refresh_after(portal, id.clone(), turn);
            }
        },
    )
}

/// A message on its way: what was typed, the effort asked for, the agent it goes to, and its
/// attachments as (id, name).
struct Outgoing {
    text: String,
    effort: Option<Effort>,
    agent: Option<api::Agent>,
    attachments: Vec<(String, String)>,
}

async fn send_turn(portal: Portal, message: Outgoing) -> Result<(), String> {
    let id = match portal.conversation.get_untracked() {
        Some(id) => id,
        None => {
            let agent = message.agent.as_ref().map(|a| a.id.as_str());
            let id = api::create_conversation(agent).await?;
            if let Some(window) = web_sys::window() {
                let _ = window.location().set_hash(&id);
            }
            portal.conversation.set(Some(id.clone()));
            id
        }
    };
    let (ids, names): (Vec<String>, Vec<String>) = message.attachments.into_iter().unzip();
    let index = api::send_message(&id, &message.text, message.effort, &ids).await?;
    let turn = TurnView::sent(index, message.text, names);
    turn.effort.set(
        message
            .agent
            .map(|a| winning_effort(a.effort, message.effort)),
    );
    portal.turns.update(|t| t.push(turn));
    show_turn(index);
    follow(portal, turn)
}

/// Brings a just-sent turn to the top of the window once it is drawn, so the person sees their
/// message and the reply growing under it, whatever they had scrolled to.
fn show_turn(index: u32) {
    request_animation_frame(move || {
        let turn = web_sys::window().and_then(|w| w.document()).and_then(|d| {
            d.query_selector(&format!("[data-turn=\"{index}\"]"))
                .ok()
                .flatten()
        });
        if let Some(turn) = turn {
            turn.scroll_into_view_with_bool(true);
        }
    });
}

/// Reads the stored conversation again after a turn, for the context meter and the effort the
/// turn recorded (rule E2).
fn refresh_after(portal: Portal, id: String, turn: TurnView) {
    spawn_local(async move {
        if let Ok(transcript) = api::transcript(&id).await {
            portal
                .in_use
                .set(Some(context_in_use(&transcript, &EstimateCounter)));
            if let Some(stored) = transcript.turn(turn.index) {
                turn.effort.set(stored.effort);
            }
        }
    });
}
