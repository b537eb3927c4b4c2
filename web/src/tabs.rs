//! The person's other tabs of the portal: a turn opened in one is announced to the others of the
//! same browser (a `BroadcastChannel`); what a tab does when it hears of one is its listener's
//! (the app's listener is `session::opened_elsewhere`).

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use web_sys::{BroadcastChannel, MessageEvent};

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

/// Calls `opened` with the conversation and the turn of each turn opened in another tab, for as
/// long as the portal is shown.
pub fn listen(opened: impl Fn(&str, u32) + 'static) {
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
        opened(conversation, turn);
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
