//! The app: the shared state provided as context, the sign-in page for nobody, and for someone
//! signed in the shell, with the conversation list beside the header, the conversation and the
//! composer. A shared conversation's link opens its own page, signed in or not.

use leptos::ev;
use leptos::html;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::composer::Composer;
use crate::drop_zone::{DropTarget, DropZone};
use crate::greeting::Greeting;
use crate::header::Header;
use crate::route::Route;
use crate::scroll::FollowReply;
use crate::shared_page::SharedPage;
use crate::sidebar::Sidebar;
use crate::sign_in_page::SignInPage;
use crate::state::{Portal, SignIn};
use crate::turn::turns;
use crate::unknown_conversation::UnknownConversation;
use crate::{api, drafts, opening, session, sign_in};

#[component]
pub fn App() -> impl IntoView {
    let signed_in = RwSignal::new(SignIn::Asking);
    // The person's agents and skills, read again for whoever signs in.
    let person = Memo::new(move |_| match signed_in.get() {
        SignIn::SignedIn(person) => Some((person.organisation, person.user)),
        _ => None,
    });
    let agents = RwSignal::new(Vec::new());
    let skills = RwSignal::new(Vec::new());
    // Plain signals filled by a task rather than resources: each resource type costs the wasm its
    // own copy of Leptos' async machinery. An answer for someone no longer signed in is dropped.
    Effect::new(move || {
        agents.set(Vec::new());
        skills.set(Vec::new());
        let Some(asked_for) = person.get() else {
            return;
        };
        let still = move || person.get_untracked().as_ref() == Some(&asked_for);
        let still_too = still.clone();
        leptos::task::spawn_local(async move {
            let list = api::agents().await.unwrap_or_default();
            if still() {
                agents.set(list);
            }
        });
        leptos::task::spawn_local(async move {
            let list = api::skills().await.unwrap_or_default();
            if still_too() {
                skills.set(list);
            }
        });
    });
    // A shared conversation's link opens its page for whoever it lets in, signed in or not, and
    // the sign-in page when it needs someone signed in (web/src/shared_page.rs).
    let shared = match Route::current() {
        Route::Shared(token) => Some(token),
        _ => None,
    };
    let portal = Portal::new(signed_in, agents.into(), skills.into(), shared.is_some());
    provide_context(portal);
    if shared.is_none() {
        // The draft is kept in the tab as it is typed, for a reload or a session that ends.
        Effect::new(move || {
            let text = portal.draft.get();
            let conversation = portal.conversation.get();
            if let SignIn::SignedIn(person) = portal.sign_in.get() {
                drafts::save(&person, conversation.as_deref(), &text);
            }
        });
        // Back and Forward show the conversation the address names.
        let popstate = window_event_listener(ev::popstate, move |_| {
            if portal.person().is_some() {
                opening::show(portal, &Route::current());
            }
        });
        on_cleanup(move || popstate.remove());
        sign_in::check(portal);
    }

    let page = Memo::new(move |_| portal.sign_in.get());
    move || match (page.get(), shared.clone()) {
        (SignIn::Needed { ended }, _) => view! { <SignInPage ended /> }.into_any(),
        (_, Some(token)) => view! { <SharedPage token /> }.into_any(),
        (SignIn::Asking, None) => ().into_any(),
        (SignIn::Unknown(problem), None) => view! { <Unreachable problem /> }.into_any(),
        (SignIn::SignedIn(_), None) => view! { <Shell /> }.into_any(),
    }
}

/// The portal for someone signed in.
#[component]
fn Shell() -> impl IntoView {
    let portal = crate::state::portal();
    // Ctrl+Shift+O (Cmd+Shift+O on a Mac) opens a new chat; Esc stops the latest turn until its
    // reply has settled, as Stop does, unless it closes something first (the drawer, a dialog,
    // the skill completion) or leaves an edit (the composer takes that Esc).
    let keys = window_event_listener(ev::keydown, move |ev| {
        if (ev.ctrl_key() || ev.meta_key()) && ev.shift_key() && ev.code() == "KeyO" {
            ev.prevent_default();
            opening::go(portal, Route::NewChat);
        } else if ev.key() == "Escape"
            && !ev.default_prevented()
            && !portal.drawer.get_untracked()
            && !closes_something(&ev)
            && let Some(turn) = portal.unsettled_turn()
        {
            session::stop(portal, turn);
        }
    });
    on_cleanup(move || keys.remove());
    crate::tabs::listen(move |conversation, turn| {
        session::opened_elsewhere(portal, conversation, turn)
    });
    let zone = DropZone::new();
    view! {
        <div
            class="shell"
            on:dragenter=move |ev| zone.enter(&ev)
            on:dragover=move |ev| zone.over(&ev)
            on:dragleave=move |ev| zone.leave(&ev)
            on:drop=move |ev| zone.drop(portal, &ev)
        >
            <DropTarget zone />
            <Sidebar />
            <main class="portal">
                <Header />
                {move || {
                    if portal.missing.get() {
                        view! { <UnknownConversation /> }.into_any()
                    } else {
                        view! { <Conversation /> }.into_any()
                    }
                }}
            </main>
        </div>
    }
}

/// Whether an Esc goes to something it closes: an open dialog, or the composer's open skill
/// completion.
fn closes_something(ev: &web_sys::KeyboardEvent) -> bool {
    let Some(target) = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
    else {
        return false;
    };
    let within = |selector: &str| target.closest(selector).ok().flatten().is_some();
    within("dialog[open]")
        || (within(".composer")
            && document()
                .query_selector(".skill-completion")
                .ok()
                .flatten()
                .is_some())
}

/// The open conversation's turns (a new chat's greeting before the first), and docked at the
/// window's bottom "Jump to latest", the page's alert and the composer.
#[component]
fn Conversation() -> impl IntoView {
    let portal = crate::state::portal();
    let section = NodeRef::<html::Section>::new();
    let greets = move || portal.conversation.get().is_none() && portal.turns.with(Vec::is_empty);
    view! {
        <section class="conversation" aria-label="Conversation" node_ref=section>
            {move || greets().then(|| view! { <Greeting /> })}
            {turns()}
        </section>
        <div class="dock">
            <FollowReply follow=portal.follow conversation=section />
            <ConnectionNote />
            {move || portal.problem.get().map(|p| view! { <p class="problem" role="alert">{p}</p> })}
            <Composer
                draft=portal.draft
                effort=portal.effort
                default_effort=Signal::derive(move || portal.shown_agent().map(|a| a.effort))
                skills=portal.skills
                running=Signal::derive(move || portal.running() || portal.sending.get())
                on_send=Callback::new(move |()| session::send(portal))
            />
        </div>
    }
}

/// While a reply's stream is down and the browser reconnects: since when, in words.
#[component]
fn ConnectionNote() -> impl IntoView {
    let portal = crate::state::portal();
    move || {
        portal.connection_lost.get().map(|since| {
            view! {
                <p class="connection" role="status" data-testid="reconnecting">
                    {format!("Reconnecting… the connection dropped at {since}; the reply goes on once it is back.")}
                </p>
            }
        })
    }
}

/// The server did not say who is signed in: why, and a button to ask again.
#[component]
fn Unreachable(problem: String) -> impl IntoView {
    let portal = crate::state::portal();
    view! {
        <main class="portal unreachable">
            <h1>"Portal"</h1>
            <p class="problem" role="alert">{problem}</p>
            <button type="button" on:click=move |_| sign_in::check(portal)>"Try again"</button>
        </main>
    }
}
