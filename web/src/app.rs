//! The shell: the shared state provided as context, the header, the conversation and the
//! composer.

use leptos::prelude::*;

use crate::composer::Composer;
use crate::header::Header;
use crate::state::Portal;
use crate::turn::Turn;
use crate::{api, session};

#[component]
pub fn App() -> impl IntoView {
    let info = LocalResource::new(api::info);
    let agents = LocalResource::new(api::agents);
    let skills = LocalResource::new(api::skills);
    let portal = Portal::new(
        Signal::derive(move || info.get().and_then(Result::ok)),
        Signal::derive(move || agents.get().and_then(Result::ok).unwrap_or_default()),
        Signal::derive(move || skills.get().and_then(Result::ok).unwrap_or_default()),
    );
    provide_context(portal);
    if let Some(id) = conversation_in_url() {
        session::open(portal, id);
    }
    view! {
        <main class="portal">
            <Header />
            <section class="conversation" aria-label="Conversation">
                <For each=move || portal.turns.get() key=|turn| turn.index let(turn)>
                    <Turn turn />
                </For>
            </section>
            {move || portal.problem.get().map(|p| view! { <p class="problem" role="alert">{p}</p> })}
            <Composer
                draft=portal.draft
                effort=portal.effort
                skills=portal.skills
                attachments=portal.attachments
                problem=portal.problem
                running=Signal::derive(move || portal.running() || portal.sending.get())
                on_send=Callback::new(move |()| session::send(portal))
            />
        </main>
    }
}

/// The conversation id in the page's address (`#c1`), so a reload reopens the conversation.
fn conversation_in_url() -> Option<String> {
    let hash = web_sys::window()?.location().hash().ok()?;
    let id = hash.trim_start_matches('#');
    (!id.is_empty()).then(|| id.to_string())
}
