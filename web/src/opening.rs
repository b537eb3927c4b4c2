//! Opening what the page shows: a stored conversation, drawn as it is stored with a running turn
//! followed, or a new chat.

use leptos::prelude::*;
use leptos::task::spawn_local;
use portal_core::TurnStatus;
use portal_core::compaction::context_in_use;
use portal_core::tokens::EstimateCounter;

use crate::route::Route;
use crate::session::{follow, read_usage};
use crate::state::Portal;
use crate::turn_view::TurnView;
use crate::{api, drafts, focus};

/// Opens `route` at the person's request: the tab's history gains its address, and the page
/// shows it.
pub fn go(portal: Portal, route: Route) {
    portal.drawer.set(false);
    let here = route.conversation() == portal.conversation.get_untracked().as_deref()
        && !portal.missing.get_untracked();
    if !here {
        route.push();
        show(portal, &route);
    } else if route == Route::NewChat {
        focus::composer();
    }
}

/// Shows what `route` names: a stored conversation, or a new chat.
pub fn show(portal: Portal, route: &Route) {
    match route.conversation() {
        Some(id) => open(portal, id.to_string()),
        None => new_chat(portal),
    }
}

/// Opens a new chat: no conversation until the first message, with the agent of the project the
/// list shows (it opens in that project), and the composer focused.
pub fn new_chat(portal: Portal) {
    start_over(portal, None);
    portal
        .agent
        .set(portal.list.project.get_untracked().and_then(|p| p.agent));
    focus::composer();
}

/// Opens the stored conversation `id`: its agent, its turns drawn settled (a running turn drawn
/// as far as it is stored and followed from there), its end in view and the composer focused,
/// with the agent's effort (rule E1: an override was for its message alone; each turn shows the
/// effort it ran with, E2). A conversation that does not exist for this person shows as missing.
pub fn open(portal: Portal, id: String) {
    start_over(portal, Some(id.clone()));
    focus::composer();
    let shown = portal.shown.get_value();
    let asked = id.clone();
    spawn_local(async move {
        let agent = api::conversation_agent(&asked).await;
        if !portal.still_shows(shown) {
            return;
        }
        match agent {
            Ok(agent) => portal.agent.set(Some(agent)),
            // The transcript's answer says so.
            Err(error) if error.missing() => {}
            Err(error) => portal.report(error),
        }
    });
    spawn_local(async move {
        let transcript = api::transcript(&id).await;
        if !portal.still_shows(shown) {
            return;
        }
        match transcript {
            Ok(transcript) => {
                portal
                    .in_use
                    .set(Some(context_in_use(&transcript, &EstimateCounter)));
                read_usage(portal, shown, id.clone());
                let mut turns: Vec<TurnView> =
                    transcript.turns.iter().map(TurnView::stored).collect();
                let running = transcript
                    .turns
                    .last()
                    .filter(|t| t.status == TurnStatus::Running);
                if let Some(stored) = running {
                    let turn = TurnView::resumed(stored);
                    turns.pop();
                    turns.push(turn);
                    portal.turns.set(turns);
                    if let Err(error) = follow(portal, turn) {
                        portal.problem.set(Some(error));
                    }
                } else {
                    portal.turns.set(turns);
                }
                portal.follow.to_end();
            }
            Err(error) if error.missing() => portal.missing.set(true),
            Err(error) => portal.report(error),
        }
    });
}

/// Clears what the page shows for `conversation` (`None`: a new chat): no stream followed, no
/// turns, attachments, effort or problem, and the draft the person left there.
fn start_over(portal: Portal, conversation: Option<String>) {
    portal.shown.update_value(|s| *s += 1);
    portal.following.set_value(None);
    let draft = portal
        .person()
        .map(|person| drafts::load(&person, conversation.as_deref()))
        .unwrap_or_default();
    portal.conversation.set(conversation);
    portal.missing.set(false);
    portal.turns.set(Vec::new());
    portal.effort.set(None);
    portal.agent.set(None);
    portal.attachments.set(Vec::new());
    portal.editing.set(None);
    portal.sending.set(false);
    portal.problem.set(None);
    portal.connection_lost.set(None);
    portal.in_use.set(None);
    portal.usage.set(None);
    portal.draft.set(draft);
    portal.follow.to_end();
}
