//! The sign-in page: organisation, user and password, and a button per single sign-on provider
//! of the organisation once it is known (typed, given as `?organisation=` in the address, or
//! the portal's only one, when the field is filled in and hidden); the server writes the
//! buttons, or what to type when the portal has several organisations. An organisation with one provider and no passwords goes
//! straight to its provider. Someone whose session ended finds their organisation and user
//! filled in, and is told their draft is kept; someone opening a shared conversation's link that
//! needs them signed in is told so, and comes back to it.

use leptos::html;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::api::Person;
use crate::route::Route;
use crate::state::portal;
use crate::{api, sign_in};

#[component]
pub fn SignInPage(
    /// Who was signed in when their session ended, if that is why the page shows.
    ended: Option<Person>,
) -> impl IntoView {
    let portal = portal();
    let busy = RwSignal::new(false);
    let problem = RwSignal::new(None::<String>);
    let organisation = NodeRef::<html::Input>::new();
    let user = NodeRef::<html::Input>::new();
    let password = NodeRef::<html::Input>::new();
    let again = ended.is_some();
    let notice = if again {
        Some("Your session ended. Sign in again to carry on where you were; your draft is kept.")
    } else if matches!(Route::current(), Route::Shared(_)) {
        Some("Sign in to see this conversation.")
    } else {
        None
    };
    let buttons = NodeRef::<html::Div>::new();
    let passwords = RwSignal::new(true);
    // The portal's only organisation, filled in by the server's answer, needs no field.
    let only_organisation = RwSignal::new(false);
    let look_up = move |asked: String| {
        spawn_local(async move {
            let Some(location) = web_sys::window().map(|w| w.location()) else {
                return;
            };
            let here = location.pathname().unwrap_or_default();
            let fragment = api::sign_in_buttons(asked.trim(), &here).await;
            passwords.try_set(!fragment.contains("data-no-passwords"));
            let Some(div) = buttons.try_get_untracked().flatten() else {
                return;
            };
            div.set_inner_html(&fragment);
            if let Ok(Some(mark)) = div.query_selector("[data-organisation]")
                && let Some(id) = mark.get_attribute("data-organisation")
                && let Some(field) = organisation.try_get_untracked().flatten()
            {
                field.set_value(&id);
                only_organisation.try_set(true);
            }
            if let Ok(Some(only)) = div.query_selector("[data-go]")
                && let Some(address) = only.get_attribute("href")
            {
                let _ = location.assign(&address);
            }
        });
    };
    Effect::new(move || {
        let field = if again {
            password.get()
        } else if only_organisation.get() {
            user.get()
        } else {
            organisation.get()
        };
        if let Some(field) = field {
            let _ = field.focus();
        }
    });
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if busy.get_untracked() {
            return;
        }
        let value = |field: NodeRef<html::Input>| field.get_untracked().map(|f| f.value());
        let (Some(o), Some(u), Some(p)) = (value(organisation), value(user), value(password))
        else {
            return;
        };
        busy.set(true);
        problem.set(None);
        spawn_local(async move {
            // Signed in, the page is gone: nothing is left to update.
            if let Err(error) = sign_in::sign_in(portal, &o, &u, &p).await {
                problem.try_set(Some(error));
                busy.try_set(false);
                if let Some(field) = password.try_get_untracked().flatten() {
                    field.select();
                    let _ = field.focus();
                }
            }
        });
    };
    let (known_organisation, known_user) = ended
        .map(|p| (p.organisation, p.user))
        .unwrap_or_else(|| (asked_organisation(), String::new()));
    look_up(known_organisation.clone());
    view! {
        <main class="sign-in">
            <form class="sign-in-form" on:submit=submit aria-labelledby="sign-in-title">
                <h1 id="sign-in-title">"Sign in to Portal"</h1>
                {notice.map(|notice| view! { <p class="notice" role="status">{notice}</p> })}
                <label for="sign-in-organisation" hidden=only_organisation>"Organisation"</label>
                <input
                    hidden=only_organisation
                    id="sign-in-organisation"
                    node_ref=organisation
                    name="organisation"
                    autocomplete="organization"
                    autocapitalize="none"
                    spellcheck="false"
                    required
                    value=known_organisation
                    on:change=move |ev| look_up(event_target_value(&ev))
                />
                <div class="sso-buttons" node_ref=buttons></div>
                <div class="passwords" hidden=move || !passwords.get()>
                <label for="sign-in-user">"User"</label>
                <input
                    id="sign-in-user"
                    node_ref=user
                    name="username"
                    autocomplete="username"
                    autocapitalize="none"
                    spellcheck="false"
                    required
                    value=known_user
                />
                <label for="sign-in-password">"Password"</label>
                <input
                    id="sign-in-password"
                    node_ref=password
                    type="password"
                    name="password"
                    autocomplete="current-password"
                    required
                />
                {move || problem.get().map(|p| view! { <p class="problem" role="alert">{p}</p> })}
                <button type="submit" disabled=busy>
                    {move || if busy.get() { "Signing in…" } else { "Sign in" }}
                </button>
                </div>
            </form>
        </main>
    }
}

/// The organisation the address names (`?organisation=acme`), if it names one.
fn asked_organisation() -> String {
    web_sys::window()
        .and_then(|w| w.location().search().ok())
        .and_then(|search| {
            search
                .split(['?', '&'])
                .find_map(|pair| pair.strip_prefix("organisation="))
                .and_then(|value| js_sys::decode_uri_component(value).ok())
        })
        .map(String::from)
        .unwrap_or_default()
}
