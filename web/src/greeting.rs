//! A new chat's greeting: the agent's name, what it is for, messages to start from, each of
//! which becomes the draft with a click, and the agent's MCP servers with their status and tools.

use leptos::prelude::*;

use crate::focus;
use crate::state::portal;

/// What the greeting says of an agent whose file does not say what it is for.
const NO_DESCRIPTION: &str = "Ask a question or describe a task to begin.";

#[component]
pub fn Greeting() -> impl IntoView {
    let portal = portal();
    move || {
        let agent = portal.shown_agent()?;
        let description = if agent.description.is_empty() {
            NO_DESCRIPTION.to_string()
        } else {
            agent.description
        };
        let examples = agent
            .examples
            .into_iter()
            .map(|example| {
                let text = example.clone();
                view! {
                    <li>
                        <button
                            type="button"
                            class="example"
                            on:click=move |_| {
                                portal.draft.set(text.clone());
                                focus::composer();
                            }
                        >
                            {example}
                        </button>
                    </li>
                }
            })
            .collect_view();
        let servers = (!agent.servers.is_empty()).then(|| {
            view! {
                <ul class="servers" aria-label="MCP servers" data-testid="mcp-servers">
                    {agent.servers.into_iter().map(|line| view! { <li dir="auto">{line}</li> }).collect_view()}
                </ul>
            }
        });
        Some(view! {
            <section class="greeting" aria-labelledby="greeting-name" data-testid="greeting">
                <h2 id="greeting-name">{agent.name}</h2>
                <p dir="auto">{description}</p>
                <ul class="examples" aria-label="Start from">{examples}</ul>
                {servers}
            </section>
        })
    }
}
