//! The sign-in page: organisation, user and password. Someone whose session ended finds their
//! organisation and user filled in, and is told their draft is kept.

use leptos::html;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::api::Person;
use crate::sign_in;
use crate::state::portal;

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
    Effect::new(move || {
        let field = if again {
            password.get()
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
    let (known_organisation, known_user) =
        ended.map(|p| (p.organisation, p.user)).unwrap_or_default();
    view! {
        <main class="sign-in">
            <form class="sign-in-form" on:submit=submit aria-labelledby="sign-in-title">
                <h1 id="sign-in-title">"Sign in to Portal"</h1>
                {again
                    .then(|| {
                        view! {
                            <p class="notice" role="status">
                                "Your session ended. Sign in again to carry on where you were; your draft is kept."
                            </p>
                        }
                    })}
                <label for="sign-in-organisation">"Organisation"</label>
                <input
                    id="sign-in-organisation"
                    node_ref=organisation
                    name="organisation"
                    autocomplete="organization"
                    autocapitalize="none"
                    spellcheck="false"
                    required
                    value=known_organisation
                />
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
            </form>
        </main>
    }
}
