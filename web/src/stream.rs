//! A turn's server-sent events, decoded into portal-core's `TurnEvent`s.

use portal_core::stream::TurnEvent;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use web_sys::{Event, EventSource, MessageEvent};

/// A turn being followed. Dropping it stops following: the page has moved on to another
/// conversation.
pub struct Following {
    source: EventSource,
    _on_message: Closure<dyn Fn(MessageEvent)>,
    _on_error: Closure<dyn Fn(Event)>,
    _on_open: Closure<dyn Fn(Event)>,
}

impl std::fmt::Debug for Following {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Following")
            .field("url", &self.source.url())
            .finish()
    }
}

impl Drop for Following {
    fn drop(&mut self) {
        self.source.close();
    }
}

/// Follows turn `turn` of `conversation` after event `after` (0: from its start), calling
/// `on_event` with each event's id and the event, in order; it answers whether the event ended
/// or paused the turn, which closes the stream. The browser reconnects on its own
/// after a dropped connection, sending `Last-Event-ID`, so nothing is lost or repeated; when the
/// server refuses the stream (an ended session, a deleted conversation) the browser gives up and
/// `on_refused` is called. `on_connected` hears whether the stream is up: `false` while the
/// browser reconnects, `true` once it is back or has given up. A resumed turn is followed again after the last id read; one read
/// from storage is followed from its start, and the pauses it brings again do not close it.
pub fn follow(
    conversation: &str,
    turn: u32,
    after: usize,
    on_event: impl Fn(usize, TurnEvent) -> bool + 'static,
    on_refused: impl Fn() + 'static,
    on_connected: impl Fn(bool) + 'static,
) -> Result<Following, String> {
    let url = format!("/api/conversations/{conversation}/turns/{turn}/events?after={after}");
    let source = EventSource::new(&url)
        .map_err(|_| "the reply cannot be followed; reload the page to see it".to_string())?;
    let closer = source.clone();
    let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |message: MessageEvent| {
        let Some(data) = message.data().as_string() else {
            return;
        };
        match serde_json::from_str::<TurnEvent>(&data) {
            Ok(event) => {
                if on_event(message.last_event_id().parse().unwrap_or(0), event) {
                    closer.close();
                }
            }
            Err(error) => {
                web_sys::console::warn_1(&format!("unreadable turn event: {error}").into())
            }
        }
    });
    for name in TurnEvent::NAMES {
        source
            .add_event_listener_with_callback(name, on_message.as_ref().unchecked_ref())
            .map_err(|_| "the reply cannot be followed; reload the page to see it".to_string())?;
    }
    let watched = source.clone();
    let on_connected = std::rc::Rc::new(on_connected);
    let lost = std::rc::Rc::clone(&on_connected);
    let on_error = Closure::<dyn Fn(Event)>::new(move |_: Event| {
        if watched.ready_state() == EventSource::CLOSED {
            lost(true);
            on_refused();
        } else {
            lost(false);
        }
    });
    source.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    let on_open = Closure::<dyn Fn(Event)>::new(move |_: Event| on_connected(true));
    source.set_onopen(Some(on_open.as_ref().unchecked_ref()));
    Ok(Following {
        source,
        _on_message: on_message,
        _on_error: on_error,
        _on_open: on_open,
    })
}
