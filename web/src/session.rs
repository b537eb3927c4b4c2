//! The conversation's traffic with the server: opening a stored conversation or a new chat,
//! sending a message, following a turn's events and reading the conversation again after a turn.

use leptos::prelude::*;
use leptos::task::spawn_local;
use portal_core::TurnStatus;
use portal_core::compaction::{composer_refusal, context_in_use};
use portal_core::effort::{Effort, winning_effort};
use portal_core::stream::TurnEvent;
use portal_core::tokens::EstimateCounter;
use wasm_bindgen::JsCast;

use crate::route::Route;
use crate::state::Portal;
use crate::turn_view::TurnView;
use crate::{api, conversation_list, drafts, stream};

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
        focus_composer();
    }
}

/// Shows what `route` names: a stored conversation, or a new chat.
pub fn show(portal: Portal, route: &Route) {
    match route.conversation() {
        Some(id) => open(portal, id.to_string()),
        None => new_chat(portal),
    }
}

/// Opens a new chat: no conversation until the first message, and the composer focused.
pub fn new_chat(portal: Portal) {
    start_over(portal, None);
    focus_composer();
}

/// Puts the cursor in the message box once it is drawn.
fn focus_composer() {
    request_animation_frame(|| {
        let composer = document()
            .query_selector(".composer textarea")
            .ok()
            .flatten()
            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
        if let Some(composer) = composer {
            let _ = composer.focus();
        }
    });
}

/// Opens the stored conversation `id`: its agent, its turns drawn settled (a running turn
/// followed from its start), and the effort it last ran with in the composer (rule E2). A
/// conversation that does not exist for this person shows as missing.
pub fn open(portal: Portal, id: String) {
    start_over(portal, Some(id.clone()));
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
                portal
                    .effort
                    .set(transcript.turns.iter().rev().find_map(|t| t.effort));
                let mut turns: Vec<TurnView> =
                    transcript.turns.iter().map(TurnView::stored).collect();
                let running = transcript
                    .turns
                    .last()
                    .filter(|t| t.status == TurnStatus::Running);
                if let Some(stored) = running {
                    let turn = TurnView::running(stored);
                    turns.pop();
                    turns.push(turn);
                    portal.turns.set(turns);
                    if let Err(error) = follow(portal, turn) {
                        portal.problem.set(Some(error));
                    }
                } else {
                    portal.turns.set(turns);
                }
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
    portal.sending.set(false);
    portal.problem.set(None);
    portal.in_use.set(None);
    portal.draft.set(draft);
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
    let shown = portal.shown.get_value();
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
        let sent = send_turn(portal, shown, message).await;
        if !portal.still_shows(shown) {
            return;
        }
        match sent {
            Ok(()) => {
                if portal.draft.get_untracked().trim() == text {
                    portal.draft.set(String::new());
                }
                portal.attachments.set(Vec::new());
            }
            Err(error) => portal.report(error),
        }
        portal.sending.set(false);
    });
}

/// Follows `turn` after the last event it read, drawing what it streams, in place of any turn
/// followed before; once it ends, reads the conversation again for the meter and the effort the
/// turn recorded, and the list for its status.
pub fn follow(portal: Portal, turn: TurnView) -> Result<(), String> {
    let Some(id) = portal.conversation.get_untracked() else {
        return Ok(());
    };
    let shown = portal.shown.get_value();
    let following = stream::follow(
        &id.clone(),
        turn.index,
        turn.seen.get_value(),
        move |at, event| {
            turn.seen.set_value(at);
            turn.apply(&event);
            if matches!(event, TurnEvent::TurnEnd { .. }) {
                refresh_after(portal, shown, id.clone(), turn);
                conversation_list::refresh(portal);
            }
        },
        move || refused(portal),
    )?;
    portal.following.set_value(Some(following));
    Ok(())
}

/// The server refused a turn's stream: the session ended, or something else the page cannot
/// mend by itself.
fn refused(portal: Portal) {
    spawn_local(async move {
        match api::session().await {
            Err(error) if error.signed_out() => portal.ended(),
            _ => portal.problem.set(Some(
                "the server stopped sending this reply; open the conversation again to see the rest"
                    .to_string(),
            )),
        }
    });
}

/// A message on its way: what was typed, the effort asked for, the agent it goes to, and its
/// attachments as (id, name).
struct Outgoing {
    text: String,
    effort: Option<Effort>,
    agent: Option<api::Agent>,
    attachments: Vec<(String, String)>,
}

/// Sends `message` in the conversation shown as `shown`, opening it first for a new chat. The
/// new chat's address becomes the conversation's, in place of `/`.
async fn send_turn(portal: Portal, shown: u32, message: Outgoing) -> Result<(), api::Error> {
    let id = match portal.conversation.get_untracked() {
        Some(id) => id,
        None => {
            let agent = message.agent.as_ref().map(|a| a.id.as_str());
            let id = api::create_conversation(agent).await?;
            if !portal.still_shows(shown) {
                return Ok(());
            }
            Route::Conversation(id.clone()).replace();
            if let Some(person) = portal.person() {
                drafts::save(&person, None, "");
            }
            portal.conversation.set(Some(id.clone()));
            id
        }
    };
    let (ids, names): (Vec<String>, Vec<String>) = message.attachments.into_iter().unzip();
    let index = api::send_message(&id, &message.text, message.effort, &ids).await?;
    conversation_list::refresh(portal);
    if !portal.still_shows(shown) {
        return Ok(());
    }
    let turn = TurnView::sent(index, message.text, names);
    turn.effort.set(
        message
            .agent
            .map(|a| winning_effort(a.effort, message.effort)),
    );
    portal.turns.update(|t| t.push(turn));
    show_turn(index);
    follow(portal, turn).map_err(|message| api::Error {
        status: None,
        message,
    })
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
fn refresh_after(portal: Portal, shown: u32, id: String, turn: TurnView) {
    spawn_local(async move {
        let transcript = api::transcript(&id).await;
        if !portal.still_shows(shown) {
            return;
        }
        if let Ok(transcript) = transcript {
            portal
                .in_use
                .set(Some(context_in_use(&transcript, &EstimateCounter)));
            if let Some(stored) = transcript.turn(turn.index) {
                turn.effort.set(stored.effort);
            }
        }
    });
}
