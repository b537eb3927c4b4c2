//! The person's other tabs of the portal: a turn opened in one is announced to the others of the
//! same browser (a `BroadcastChannel`), which refresh their conversation list and, showing its
//! conversation, draw the new turn and follow it.

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use web_sys::{BroadcastChannel, MessageEvent};

use crate::state::Portal;
use crate::{conversation_list, session};

const CHANNEL: &str = "portal-turns";

/// Tells the other tabs that turn `turn` of `conversation` opened here, as `TURN CONVERSATION`
/// (a conversation id holds no space).
pub fn announce(conversation: &str, turn: u32) {
    let Ok(channel) = BroadcastChannel::new(CHANNEL) else {
        return;
    };
    let _ = channel.post_message(&format!("{turn} {conversation}").into());
    channel.close();
}

/// Listens for turns opened in other tabs, for as long as the portal is shown.
pub fn listen(portal: Portal) {
    let Ok(channel) = BroadcastChannel::new(CHANNEL) else {
        return;
    };
    let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |message: MessageEvent| {
        let Some(text) = message.data().as_string() else {
            return;
        };
        let Some((turn, conversation)) = text
            .split_once(' ')
            .and_then(|(turn, conversation)| Some((turn.parse::<u32>().ok()?, conversation)))
        else {
            return;
        };
        conversation_list::refresh(portal);
        let shows = portal.conversation.get_untracked().as_deref() == Some(conversation);
        let known = portal
            .turns
            .with_untracked(|turns| turns.last().map_or(0, |t| t.index));
        if shows && turn > known {
            session::catch_up(portal);
        }
    });
    channel.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    let kept = StoredValue::new_local(Some((channel, on_message)));
    on_cleanup(move || {
        kept.update_value(|kept| {
            if let Some((channel, _on_message)) = kept.take() {
                channel.close();
            }
        })
    });
}
