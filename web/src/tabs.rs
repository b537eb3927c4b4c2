//! The person's other tabs of the portal: a turn opened in one is announced to the others of the
//! same browser (a `BroadcastChannel`), which refresh their conversation list and, showing its
//! conversation, draw the new turn and follow it.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use web_sys::{BroadcastChannel, MessageEvent};

use crate::state::Portal;
use crate::{conversation_list, session};

const CHANNEL: &str = "portal-turns";

/// A turn opened in a tab.
#[derive(Debug, Serialize, Deserialize)]
struct Opened {
    conversation: String,
    turn: u32,
}

/// Tells the other tabs that turn `turn` of `conversation` opened here.
pub fn announce(conversation: &str, turn: u32) {
    let Ok(channel) = BroadcastChannel::new(CHANNEL) else {
        return;
    };
    let opened = Opened {
        conversation: conversation.to_string(),
        turn,
    };
    if let Ok(text) = serde_json::to_string(&opened) {
        let _ = channel.post_message(&text.into());
    }
    channel.close();
}

/// Listens for turns opened in other tabs, for as long as the portal is shown.
pub fn listen(portal: Portal) {
    let Ok(channel) = BroadcastChannel::new(CHANNEL) else {
        return;
    };
    let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |message: MessageEvent| {
        let Some(opened) = message
            .data()
            .as_string()
            .and_then(|text| serde_json::from_str::<Opened>(&text).ok())
        else {
            return;
        };
        conversation_list::refresh(portal);
        let shows = portal.conversation.get_untracked().as_deref() == Some(&opened.conversation);
        let known = portal
            .turns
            .with_untracked(|turns| turns.last().map_or(0, |t| t.index));
        if shows && opened.turn > known {
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
