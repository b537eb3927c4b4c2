//! The header: the portal's name, the model, the agent (a picker for a new conversation) and the
//! context meter.

use leptos::prelude::*;
use portal_core::compaction::{CompactionConfig, context_meter};

use crate::compaction::Meter;
use crate::state::portal;

#[component]
pub fn Header() -> impl IntoView {
    let portal = portal();
    let meter = move || {
        let window = portal.info.get()?.context_window?;
        context_meter(portal.in_use.get()?, window, &CompactionConfig::default())
    };
    view! {
        <header class="portal-header">
            <h1>"Portal"</h1>
            {move || {
                portal.info.get().map(|i| {
                    view! {
                        <span class="model-label" class:demo=i.demo data-testid="model-label">
                            {if i.demo { format!("{} · demo, offline", i.model) } else { i.model }}
                        </span>
                    }
                })
            }}
            <AgentName />
            {move || meter().map(|meter| view! { <Meter meter /> })}
        </header>
    }
}

/// The conversation's agent; for a new conversation with more than one agent to choose from, a
/// picker.
#[component]
fn AgentName() -> impl IntoView {
    let portal = portal();
    move || {
        let list = portal.agents.get();
        let chosen = portal.shown_agent()?;
        if portal.conversation.get().is_some() || list.len() < 2 {
            return Some(
                view! { <span class="agent-label" data-testid="agent-name">{chosen.name}</span> }
                    .into_any(),
            );
        }
        let options = list
            .into_iter()
            .map(|a| {
                let selected = a.id == chosen.id;
                view! { <option value=a.id selected=selected>{a.name}</option> }
            })
            .collect_view();
        Some(
            view! {
                <select
                    class="agent-picker"
                    aria-label="Agent"
                    data-testid="agent-picker"
                    on:change=move |ev| portal.agent.set(Some(event_target_value(&ev)))
                >
                    {options}
                </select>
            }
            .into_any(),
        )
    }
}
