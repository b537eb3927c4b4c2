//! How compaction is drawn (rules R11–R13): the divider while a summary is written, the
//! "Context summarised" divider, the `/compact` pill and the context meter. What each shows is
//! decided by `portal_core::compaction`; this module only draws it.

use std::time::Duration;

use leptos::prelude::*;
use portal_core::compaction::{CompactionConfig, ContextMeter, Divider, summarising_clock};
use portal_drawer::draw_reply;
use portal_drawer::page::now_ms;

use crate::highlight;

/// A summary being written (R11): the divider's two rules draw in toward a shimmering
/// "Summarising conversation", with the elapsed time once it has taken three seconds. It stands
/// where the turn's next block would, in place of the thinking indicator.
#[component]
pub fn Summarising(started_ms: f64) -> impl IntoView {
    let clock = RwSignal::new(None::<String>);
    let config = CompactionConfig::default();
    let tick = move || {
        let elapsed = (now_ms() - started_ms).max(0.0) as u64;
        clock.set(summarising_clock(elapsed, &config));
    };
    tick();
    if let Ok(handle) = set_interval_with_handle(tick, Duration::from_millis(250)) {
        on_cleanup(move || handle.clear());
    }
    view! {
        <div class="divider writing" role="status" data-testid="summarising">
            <span class="rule left" aria-hidden="true"></span>
            <span class="label shimmer">"Summarising conversation"</span>
            {move || clock.get().map(|c| view! { <span class="clock" data-testid="summarising-clock">{c}</span> })}
            <span class="rule right" aria-hidden="true"></span>
        </div>
    }
}

/// A compaction (R12): a divider labelled "Context summarised", marked automatic when the agent
/// chose it, which opens to show the summary with its references taken out (C12).
#[component]
pub fn Summarised(divider: Divider) -> impl IntoView {
    let trigger = if divider.automatic { "auto" } else { "manual" };
    let title = format!(
        "Summary of turns {}–{}",
        divider.covers.first, divider.covers.last
    );
    // The summary is markdown, drawn as a reply is (portal-drawer).
    let summary = NodeRef::<leptos::html::Div>::new();
    Effect::new(move || {
        if let Some(body) = summary.get() {
            draw_reply(&body, &divider.summary, &highlight::drawing());
        }
    });
    view! {
        <details class="divider summarised" data-trigger=trigger data-testid="divider">
            <summary title=title>
                <span class="rule left" aria-hidden="true"></span>
                <span class="label">"Context summarised"</span>
                {divider.automatic.then(|| view! { <span class="automatic">"automatic"</span> })}
                <span class="rule right" aria-hidden="true"></span>
            </summary>
            <div class="summary body" data-testid="summary" dir="auto" node_ref=summary></div>
        </details>
    }
}

/// A sent `/compact` (R13): a pill reading "Compact", then the instructions if there are any.
#[component]
pub fn CompactPill(instructions: Option<String>) -> impl IntoView {
    view! {
        <p class="compact-command" data-testid="compact-pill">
            <span class="pill">"Compact"</span>
            {instructions.map(|i| view! { <span class="instructions">{i}</span> })}
        </p>
    }
}

/// The context meter: the share of the model's window in use and the line at which the agent
/// compacts on its own (C1).
#[component]
pub fn Meter(meter: ContextMeter) -> impl IntoView {
    let label = format!(
        "Context window: {} % in use ({} of {} tokens); summarised automatically at {} %",
        meter.used_percent, meter.tokens, meter.window, meter.threshold_percent
    );
    let near = meter.used_percent >= meter.threshold_percent;
    view! {
        <div
            class="context-meter"
            class:near=near
            role="meter"
            aria-label="Context window in use"
            aria-valuemin="0"
            aria-valuemax="100"
            aria-valuenow=meter.used_percent
            title=label
            data-testid="context-meter"
        >
            <span class="meter-name" aria-hidden="true">"Context"</span>
            <span class="track">
                <span class="fill" style=format!("width: {}%", meter.used_percent)></span>
                <span class="line" style=format!("left: {}%", meter.threshold_percent)></span>
            </span>
            <span class="percent">{format!("{} %", meter.used_percent)}</span>
        </div>
    }
}
