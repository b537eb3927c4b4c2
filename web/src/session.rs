//! The conversation's traffic with the server once it is open: sending a message (typed, or an
//! earlier one again), stopping a turn, deciding on or answering a paused one, following a
//! turn's events, reading the conversation
//! again after a turn and catching up with a turn opened in another tab (opening one is
//! web/src/opening.rs).

use leptos::prelude::*;
use leptos::task::spawn_local;
use portal_core::TurnStatus;
use portal_core::attachment::Attachment;
use portal_core::compaction::{composer_refusal, context_in_use};
use portal_core::effort::{Effort, winning_effort};
use portal_core::tokens::EstimateCounter;

use crate::route::Route;
use crate::state::Portal;
use crate::turn_view::TurnView;
use crate::{api, drafts, editing, focus, listing, stream};

/// Sends the draft with its attachments and the effort chosen for it, unless something stops it
/// (a refused `/compact`, a running turn, an upload still going). A refused message keeps its
/// draft and attachments; a sent one leaves the composer with only what was typed after it,
/// with the agent's effort again (rule E1) and the cursor in the message box.
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
    if chips.iter().any(|c| c.is_uploading()) {
        portal.problem.set(Some(
            "a file is still uploading; send once it shows as attached".to_string(),
        ));
        return;
    }
    let message = Outgoing {
        text: text.clone(),
        effort: portal.effort.get_untracked(),
        agent: portal.shown_agent(),
        attachments: chips.iter().filter_map(|c| c.uploaded().cloned()).collect(),
        // An edit of a turn that is no longer the latest is sent as a new message.
        again: portal
            .editing
            .with_untracked(|e| e.as_ref().and_then(|e| e.again))
            .filter(|&turn| untrack(|| portal.latest_turn()) == Some(turn)),
    };
    dispatch(portal, message, move || {
        // What the person typed after pressing Enter, while the message was on its way, stays.
        let draft = portal.draft.get_untracked();
        if let Some(rest) = draft.trim_start().strip_prefix(text.as_str()) {
            portal.draft.set(rest.trim_start().to_string());
        }
        portal.attachments.set(Vec::new());
        portal.effort.set(None);
        // A sent edit gives the composer back what it held before, unless more was typed.
        if portal.draft.with_untracked(String::is_empty) {
            editing::end(portal);
        }
        portal.editing.set(None);
        focus::composer();
    });
}

/// Sends `turn`'s message with its files again as a new turn, at `effort` (a failed turn's
/// Retry, the last reply's Regenerate), a version of it when it is the latest: the transcript is
/// never rewritten. The draft stays as it is.
pub fn resend(portal: Portal, turn: TurnView, effort: Option<Effort>) {
    if portal.running() || portal.sending.get_untracked() {
        return;
    }
    let message = Outgoing {
        text: turn.state.with_untracked(|s| s.user_text.clone()),
        effort,
        agent: portal.shown_agent(),
        attachments: turn.attachments.get_value(),
        again: portal.answerable_again(&turn),
    };
    dispatch(portal, message, || {});
}

/// Sends `message` in the conversation shown, then calls `sent` unless the person moved on.
fn dispatch(portal: Portal, message: Outgoing, sent: impl FnOnce() + 'static) {
    portal.problem.set(None);
    portal.sending.set(true);
    let shown = portal.shown.get_value();
    spawn_local(async move {
        let done = send_turn(portal, shown, message).await;
        if !portal.still_shows(shown) {
            return;
        }
        match done {
            Ok(()) => sent(),
            Err(error) => portal.report(error),
        }
        portal.sending.set(false);
    });
}

/// Stops `turn`, running or waiting for the person; it is recorded cut off, and its stream says
/// so: a running turn's stream is still followed, a paused one's is followed again to hear it.
/// A turn that has ended while its reply still plays out has nothing left to stop but the
/// playout: the reply is drawn whole at once.
pub fn stop(portal: Portal, turn: TurnView) {
    if !turn.state.with_untracked(|s| s.status.is_open()) {
        turn.settle_now();
        return;
    }
    let Some(id) = portal.conversation.get_untracked() else {
        return;
    };
    let shown = portal.shown.get_value();
    spawn_local(async move {
        let stopped = api::cancel_turn(&id, turn.index).await;
        if !portal.still_shows(shown) {
            return;
        }
        match stopped {
            Ok(())
                if turn
                    .state
                    .with_untracked(|s| s.status == TurnStatus::Paused) =>
            {
                if let Err(error) = follow(portal, turn) {
                    portal.problem.set(Some(error));
                }
            }
            Ok(()) => {}
            Err(error) => portal.report(error),
        }
    });
}

/// What the person did to a paused turn.
#[derive(Debug, Clone, PartialEq)]
pub enum Resume {
    /// Approve or decline these calls, the ones the turn waits on.
    Decide(Vec<String>, bool),
    Answer(String),
}

/// Sends the person's decision or answer on paused `turn`, once while `acting`: it shows at once
/// (the controls go, so a double click sends it once), the turn is followed again after the last
/// event read, and the focus goes back to the composer. A refused one is undone and said.
pub fn resume(portal: Portal, turn: TurnView, action: Resume, acting: RwSignal<bool>) {
    let Some(id) = portal.conversation.get_untracked() else {
        return;
    };
    if acting.get_untracked() {
        return;
    }
    acting.set(true);
    turn.state.update(|s| match &action {
        Resume::Decide(calls, approve) => s.decide(calls, *approve),
        Resume::Answer(_) => s.answered(),
    });
    let shown = portal.shown.get_value();
    spawn_local(async move {
        let done = match &action {
            Resume::Decide(calls, approve) => api::decide(&id, turn.index, calls, *approve).await,
            Resume::Answer(text) => api::answer(&id, turn.index, text).await,
        };
        if !portal.still_shows(shown) {
            return;
        }
        acting.set(false);
        match done {
            // Answered here or elsewhere (another tab, a second click): the turn goes on.
            Ok(())
            | Err(api::Error {
                status: Some(409), ..
            }) => {
                if let Err(error) = follow(portal, turn) {
                    portal.problem.set(Some(error));
                }
                focus::composer();
            }
            Err(error) => {
                turn.state.update(|s| s.undecided());
                portal.report(error);
            }
        }
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
            let ended = turn.apply(&event);
            if ended {
                refresh_after(portal, shown, id.clone(), turn);
                listing::refresh(portal);
            }
            ended
        },
        move || refused(portal),
        move |up| {
            let lost = (!up).then(time_of_day);
            if portal.connection_lost.get_untracked().is_some() != lost.is_some() {
                portal.connection_lost.set(lost);
            }
        },
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
/// attachments.
struct Outgoing {
    text: String,
    effort: Option<Effort>,
    agent: Option<api::Agent>,
    attachments: Vec<Attachment>,
    /// The latest turn, when this message answers its message again (`crate::versions`).
    again: Option<u32>,
}

/// Sends `message` in the conversation shown as `shown`, opening it first for a new chat. The
/// new chat's address becomes the conversation's, in place of `/`.
async fn send_turn(portal: Portal, shown: u32, message: Outgoing) -> Result<(), api::Error> {
    let id = match portal.conversation.get_untracked() {
        Some(id) => id,
        None => {
            let agent = message.agent.as_ref().map(|a| a.id.as_str());
            let project = portal.list.project.get_untracked().map(|p| p.id);
            let id = api::create_conversation(agent, project.as_deref()).await?;
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
    let ids: Vec<String> = message
        .attachments
        .iter()
        .map(|a| a.id().to_string())
        .collect();
    let index = api::send_message(&id, &message.text, message.effort, &ids, message.again).await?;
    crate::tabs::announce(&id, index);
    listing::refresh(portal);
    if !portal.still_shows(shown) {
        return Ok(());
    }
    let turn = TurnView::sent(index, message.text, message.attachments, message.again);
    turn.effort.set(
        message
            .agent
            .map(|a| winning_effort(a.effort, message.effort)),
    );
    portal.turns.update(|t| t.push(turn));
    portal.versions.show_newest(index);
    portal.follow.to_end();
    follow(portal, turn).map_err(|message| api::Error {
        status: None,
        message,
    })
}

/// Turn `turn` of `conversation` opened in another tab: the list is read again for it, and when
/// this tab shows that conversation without the turn, the turns it lacks are drawn and the
/// running one followed.
pub fn opened_elsewhere(portal: Portal, conversation: &str, turn: u32) {
    listing::refresh(portal);
    let shows = portal.conversation.get_untracked().as_deref() == Some(conversation);
    let known = portal
        .turns
        .with_untracked(|turns| turns.last().map_or(0, |t| t.index));
    if shows && turn > known {
        catch_up(portal);
    }
}

/// Draws the turns of the open conversation that opened elsewhere (another tab) since it was
/// read, and follows the one still running.
fn catch_up(portal: Portal) {
    let Some(id) = portal.conversation.get_untracked() else {
        return;
    };
    let shown = portal.shown.get_value();
    spawn_local(async move {
        let Ok(transcript) = api::transcript(&id).await else {
            return;
        };
        if !portal.still_shows(shown) {
            return;
        }
        let known = portal
            .turns
            .with_untracked(|turns| turns.last().map_or(0, |t| t.index));
        let mut running = None;
        let new: Vec<TurnView> = transcript
            .turns
            .iter()
            .filter(|t| t.index > known)
            .map(|t| {
                if t.status == TurnStatus::Running {
                    let view = TurnView::resumed(t);
                    running = Some(view);
                    view
                } else {
                    TurnView::stored(t)
                }
            })
            .collect();
        if new.is_empty() {
            return;
        }
        portal.turns.update(|turns| turns.extend(new));
        portal
            .in_use
            .set(Some(context_in_use(&transcript, &EstimateCounter)));
        read_usage(portal, shown, id);
        if let Some(turn) = running
            && let Err(error) = follow(portal, turn)
        {
            portal.problem.set(Some(error));
        }
    });
}

/// The time of day now, as the person's browser writes it (`18:52:03`).
fn time_of_day() -> String {
    String::from(js_sys::Date::new_0().to_locale_time_string("default"))
}

/// Reads what the conversation's turns spent; when it cannot be read, the page shows no cost
/// rather than an old one.
pub fn read_usage(portal: Portal, shown: u32, id: String) {
    spawn_local(async move {
        let usage = api::usage(&id).await;
        if portal.still_shows(shown) {
            portal.usage.set(usage.ok());
        }
    });
}

/// Reads the stored conversation again after a turn, for the context meter, what the turns
/// spent and the effort the turn recorded (rule E2).
fn refresh_after(portal: Portal, shown: u32, id: String, turn: TurnView) {
    spawn_local(async move {
        let transcript = api::transcript(&id).await;
        if !portal.still_shows(shown) {
            return;
        }
        if let Ok(transcript) = transcript {
            read_usage(portal, shown, id.clone());
            portal
                .in_use
                .set(Some(context_in_use(&transcript, &EstimateCounter)));
            if let Some(stored) = transcript.turn(turn.index) {
                turn.effort.set(stored.effort);
            }
        }
    });
}
