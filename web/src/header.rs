//! The header: the button opening the conversation list on a narrow screen, the conversation's
//! agent (a picker for a new conversation) and the model it runs on, the context meter, Share,
//! the theme toggle, and who is signed in with their API keys and the button signing them out.

use leptos::prelude::*;
use portal_core::compaction::{CompactionConfig, context_meter};

use crate::api::Mode;
use crate::compaction::Meter;
use crate::icon::Icon;
use crate::keys::KeysButton;
use crate::share::ShareButton;
use crate::sign_in;
use crate::state::portal;
use crate::theme::ThemeToggle;

#[component]
pub fn Header() -> impl IntoView {
    let portal = portal();
    let meter = move || {
        if portal.missing.get() {
            return None;
        }
        let window = portal.shown_agent()?.context_window;
        // A new conversation has nothing in its context yet; its meter is drawn from the start,
        // so the header does not grow as the first reply comes (issue 48).
        let in_use = portal.in_use.get().unwrap_or(0);
        context_meter(in_use, window, &CompactionConfig::default())
    };
    view! {
        <header class="portal-header">
            <button
                type="button"
                id="drawer-toggle"
                class="drawer-toggle"
                aria-label="Conversations"
                aria-controls="conversations"
                aria-expanded=move || portal.drawer.get().to_string()
                on:click=move |_| portal.drawer.update(|open| *open = !*open)
            >
                <Icon path="M3 5h14M3 10h14M3 15h14" />
            </button>
            <h1>"Portal"</h1>
            {move || (!portal.missing.get()).then(|| view! { <AgentName /> })}
            {move || {
                (!portal.missing.get())
                    .then(|| portal.shown_agent())
                    .flatten()
                    .map(|agent| {
                        view! {
                            <span class="model-label" class:demo=agent.demo data-testid="model-label" title="The model this agent runs on">
                                {if agent.demo {
                                    format!("{} · demo, offline", agent.model_label)
                                } else {
                                    agent.model_label
                                }}
                            </span>
                        }
                    })
            }}
            {move || meter().map(|meter| view! { <Meter meter /> })}
            <ConversationCost />
            // Local mode's portal answers this computer alone: nobody else could open a link.
            {portal.person().is_some_and(|p| p.mode == Mode::Users).then(|| view! { <ShareButton /> })}
            <ThemeToggle />
            <SignedIn />
        </header>
    }
}

/// What the conversation has cost so far, with its calls and tokens on hover; empty before its
/// first call. Its place is held from the start, so the header does not grow a row while a reply
/// streams (issue 48).
#[component]
fn ConversationCost() -> impl IntoView {
    let portal = portal();
    let total = move || {
        portal
            .usage
            .get()
            .map(|usage| usage.total)
            .filter(|total| total.calls > 0)
    };
    view! {
        <span
            class="conversation-cost"
            data-testid="conversation-cost"
            title=move || total().map(|t| format!("This conversation so far: {}", t.details()))
        >
            {move || total().map(|t| t.short())}
        </span>
    }
}

/// Who is signed in, the button opening their API keys and the one signing them out; nothing in
/// local mode, whose one person needs no key.
#[component]
fn SignedIn() -> impl IntoView {
    let portal = portal();
    let person = portal.person().filter(|p| p.mode == Mode::Users);
    person.map(|person| view! {
        <div class="person">
            <span class="person-name" data-testid="person-name" title=format!("{} · {}", person.user, person.organisation)>
                {person.name}
            </span>
            <KeysButton />
            <button type="button" class="sign-out" on:click=move |_| sign_in::sign_out(portal)>
                "Sign out"
            </button>
        </div>
    })
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
