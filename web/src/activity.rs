//! What a running turn shows below what it drew, as core's `activity` decides: a pending
//! indicator while the model is asked and nothing of its answer streams yet, and "Still waiting
//! for the model…" once nothing has come for a while (the turn's Stop is right below). Mounted
//! only while the turn runs.

use std::time::Duration;

use leptos::prelude::*;
use portal_core::activity::{Activity, ActivityConfig, activity};
use portal_drawer::page::now_ms;

use crate::turn_view::TurnView;

/// How often the silence is measured. Events are not timed as they arrive, so the stream's path
/// does no more work; the silence is known to within this.
const TICK: Duration = Duration::from_millis(1000);

#[component]
pub fn TurnActivity(turn: TurnView) -> impl IntoView {
    let silent_ms = RwSignal::new(0.0);
    let heard = StoredValue::new((turn.seen.get_value(), now_ms()));
    let tick = move || {
        let seen = turn.seen.get_value();
        let (last, since) = heard.get_value();
        if seen != last {
            heard.set_value((seen, now_ms()));
            silent_ms.set(0.0);
        } else {
            silent_ms.set(now_ms() - since);
        }
    };
    if let Ok(handle) = set_interval_with_handle(tick, TICK) {
        on_cleanup(move || handle.clear());
    }
    let shown = Memo::new(move |_| {
        turn.state
            .with(|s| activity(s, silent_ms.get(), &ActivityConfig::default()))
    });
    move || match shown.get()? {
        Activity::Pending => Some(
            view! {
                <div class="pending" role="status" data-testid="pending">
                    <span class="dot" aria-hidden="true"></span>
                    <span class="dot" aria-hidden="true"></span>
                    <span class="dot" aria-hidden="true"></span>
                    <span class="visually-hidden">"Waiting for the reply"</span>
                </div>
            }
            .into_any(),
        ),
        Activity::StillWaiting => Some(
            view! {
                <p class="still-waiting" role="status" data-testid="still-waiting">
                    "Still waiting for the model…"
                </p>
            }
            .into_any(),
        ),
    }
}
