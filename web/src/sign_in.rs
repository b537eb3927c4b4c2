//! Signing in and out: the page asks the server who is signed in when it starts, shows the
//! sign-in page to nobody, and opens what the address names once someone is in.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::route::Route;
use crate::state::{Portal, SignIn};
use crate::{api, drafts, listing, opening};

/// Asks the server who is signed in.
pub fn check(portal: Portal) {
    portal.sign_in.set(SignIn::Asking);
    spawn_local(async move {
        match api::session().await {
            Ok(person) => signed_in(portal, person),
            Err(error) if error.signed_out() => portal.sign_in.set(SignIn::Needed { ended: None }),
            Err(error) => portal.sign_in.set(SignIn::Unknown(error.message)),
        }
    });
}

/// Signs in with what the person typed; the error says what was wrong, in the server's words.
pub async fn sign_in(
    portal: Portal,
    organisation: &str,
    user: &str,
    password: &str,
) -> Result<(), String> {
    let person = api::sign_in(organisation.trim(), user.trim(), password)
        .await
        .map_err(|e| e.message)?;
    signed_in(portal, person);
    Ok(())
}

/// Signs out, forgetting the person's drafts in this tab: the browser goes to `/sign-out`, which
/// ends the session and, for someone who signed in through a provider that offers it, the
/// provider's session too, and comes back to the sign-in page.
pub fn sign_out(portal: Portal) {
    if let Some(person) = portal.person() {
        drafts::forget(&person);
    }
    if let Some(window) = web_sys::window() {
        let _ = window.location().assign("/sign-out");
    }
}

/// `person` is in: the page opens what its address names, and their conversations. A shared
/// conversation's page has neither: it reads its link again itself (web/src/shared_page.rs).
fn signed_in(portal: Portal, person: api::Person) {
    portal.sign_in.set(SignIn::SignedIn(person));
    let route = Route::current();
    if !matches!(route, Route::Shared(_)) {
        opening::show(portal, &route);
        listing::restart(portal);
    }
}
