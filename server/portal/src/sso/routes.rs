//! The addresses of single sign-on: `GET /sso/buttons?organisation=&return_to=` writes the buttons
//! of the sign-in page, `GET /sso/start/{provider}?return_to=` sends the browser to its provider, and
//! the provider sends it back to `GET /sso/callback`, which signs the person in and sends them
//! on, or says in words why not. `GET /sign-out` ends a session, and the provider's too where it
//! offers that.

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use cookie::{Cookie, SameSite};
use serde::Deserialize;

use super::claims::Refusal;
use super::pending::{LIFETIME, return_path};
use super::relying::Failure;
use super::{CALLBACK, SsoError, random_binding};
use crate::api::AppState;

/// The cookie binding a sign-in under way to the browser that started it.
const BINDING: &str = "portal_sso";

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/sso/buttons", get(buttons))
        .route("/sso/start/{provider}", get(start))
        .route(CALLBACK, get(callback))
        .route(SIGN_OUT, get(sign_out))
}

/// Where the page sends the browser to sign out: the session ends, and the browser goes on to the
/// provider it signed in through, when that provider ends its own session too, or to `/`.
const SIGN_OUT: &str = "/sign-out";

async fn sign_out(State(state): State<AppState>, headers: HeaderMap) -> Response {
    // A navigation from another site carries no `SameSite=Strict` cookie anyway; one that says
    // it comes from another site ends nothing.
    let from_elsewhere = headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|site| site != "same-origin" && site != "none");
    let id = crate::sessions::cookie_value(&headers).filter(|_| !from_elsewhere);
    let (removal, provider) = match state.sessions.end(id.as_deref()).await {
        Ok(ended) => ended,
        Err(error) => return failed(&SsoError::Storage(error), None),
    };
    let mut next = "/".to_string();
    if let (Some(sso), Some(provider)) = (state.sso.as_deref(), provider)
        && let Ok(party) = sso.party(&provider)
        && let Some(home) = state.sessions.config().public_origin.as_deref()
        && let Some(address) = party.sign_out_address(&format!("{home}/")).await
    {
        next = address;
    }
    ([(header::SET_COOKIE, removal)], Redirect::to(&next)).into_response()
}

#[derive(Deserialize)]
struct ButtonsQuery {
    #[serde(default)]
    organisation: String,
    return_to: Option<String>,
}

/// The sign-in page's buttons for an organisation's providers, as HTML the page shows as it is:
/// a link per provider, marked `data-go` when it is the organisation's only way in (one provider,
/// passwords off), and a `data-no-passwords` mark when passwords are off. Empty for an
/// organisation that signs in with passwords only, or that does not exist.
///
/// Asked for no organisation (or for it), it answers for the portal's only organisation, named
/// in a `data-organisation` mark so the page fills it in and hides the field; asked for none, a
/// portal of several says what to type instead. **Decision:** a portal of one organisation tells its id to anyone
/// who opens the sign-in page, which asks for it; a portal of several names none of them.
async fn buttons(State(state): State<AppState>, Query(query): Query<ButtonsQuery>) -> Response {
    let mut organisation = query.organisation.trim();
    let mut html = String::new();
    let mut all = state.identity.organisations();
    match (all.next(), all.next()) {
        (Some(only), None) if organisation.is_empty() || organisation == only.id => {
            organisation = &only.id;
            html.push_str(&format!(
                "<span data-organisation=\"{}\" hidden></span>",
                escape(organisation)
            ));
        }
        _ if organisation.is_empty() => {
            return (
                [(header::CACHE_CONTROL, "no-store")],
                Html(
                    "<p class=\"sign-in-hint\">Type your organisation's id as your \
                     administrator gave it to you: one word in lowercase, such as \
                     <code>acme</code>.</p>",
                ),
            )
                .into_response();
        }
        _ => {}
    }
    let providers: Vec<_> = state
        .sso
        .iter()
        .flat_map(|sso| sso.providers_of(organisation))
        .collect();
    let passwords = providers.is_empty()
        || state
            .identity
            .organisation(organisation)
            .is_none_or(|o| o.passwords);
    let return_to = return_path(query.return_to.as_deref());
    let return_to =
        percent_encoding::utf8_percent_encode(&return_to, percent_encoding::NON_ALPHANUMERIC);
    let go = if providers.len() == 1 && !passwords {
        " data-go"
    } else {
        ""
    };
    html.extend(providers.iter().map(|p| {
        format!(
            "<a class=\"sso\" href=\"/sso/start/{}?return_to={return_to}\"{go}>Sign in with {}</a>",
            p.id,
            escape(&p.label)
        )
    }));
    if !passwords {
        html.push_str("<span data-no-passwords hidden></span>");
    }
    ([(header::CACHE_CONTROL, "no-store")], Html(html)).into_response()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[derive(Deserialize)]
struct StartQuery {
    return_to: Option<String>,
}

async fn start(
    State(state): State<AppState>,
    Path(provider): Path<String>,
    Query(query): Query<StartQuery>,
    request: axum::extract::Request,
) -> Response {
    let Some(sso) = state.sso.as_deref() else {
        return page(
            StatusCode::NOT_FOUND,
            "This portal has no single sign-on; sign in with your password.",
        );
    };
    let binding = match random_binding() {
        Ok(binding) => binding,
        Err(error) => return failed(&SsoError::Storage(error), None),
    };
    let client = request
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|info| {
            crate::sessions::client_address(
                info.0.ip(),
                request.headers(),
                &state.sessions.config().trusted_proxies,
            )
        });
    match sso
        .start(
            &provider,
            &binding,
            client,
            return_path(query.return_to.as_deref()),
        )
        .await
    {
        Ok(url) => {
            let cookie = binding_cookie(binding, LIFETIME.as_secs() as i64, sso.secure);
            ([(header::SET_COOKIE, cookie)], Redirect::to(&url)).into_response()
        }
        Err(error) => failed(&error, sso.party(&provider).ok().map(|p| p.provider())),
    }
}

#[derive(Deserialize)]
struct CallbackQuery {
    #[serde(default)]
    state: String,
    code: Option<String>,
    error: Option<String>,
}

async fn callback(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(query): Query<CallbackQuery>,
) -> Response {
    let Some(sso) = state.sso.as_deref() else {
        return page(
            StatusCode::NOT_FOUND,
            "This portal has no single sign-on; sign in with your password.",
        );
    };
    let binding = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(Cookie::split_parse)
        .filter_map(Result::ok)
        .find(|c| c.name() == BINDING)
        .map(|c| c.value().to_string());
    let code = match (query.code, query.error) {
        (_, Some(error)) => Err(error),
        (Some(code), None) => Ok(code),
        (None, None) => Err("no code".into()),
    };
    let clear = binding_cookie(String::new(), 0, sso.secure);
    let mut response = match sso.finish(&query.state, binding.as_deref(), code).await {
        Ok((caller, return_to, provider)) => {
            match state.sessions.start_sso(&caller, &provider.id).await {
                Ok(session) => {
                    tracing::info!(
                        "{}/{} signed in through provider {}",
                        caller.organisation,
                        caller.user,
                        provider.id
                    );
                    let mut response = Redirect::to(&return_to).into_response();
                    if let Ok(value) = session.parse() {
                        response.headers_mut().append(header::SET_COOKIE, value);
                    }
                    response
                }
                Err(error) => failed(&SsoError::Storage(error), Some(provider)),
            }
        }
        Err((error, provider)) => failed(&error, provider),
    };
    if let Ok(value) = clear.parse() {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    response
}

/// The binding cookie: `Lax`, as the provider's redirect back is a navigation from its site.
fn binding_cookie(value: String, max_age: i64, secure: bool) -> String {
    Cookie::build((BINDING, value))
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(secure)
        .path("/sso")
        .max_age(cookie::time::Duration::seconds(max_age))
        .build()
        .to_string()
}

/// The page a sign-in that did not work ends on, in words for the person.
fn failed(error: &SsoError, provider: Option<&super::Provider>) -> Response {
    let label = provider.map_or("Your identity provider", |p| p.label.as_str());
    tracing::warn!(
        "a single sign-on through {} failed: {error}",
        provider.map_or("an unknown provider", |p| p.id.as_str())
    );
    let (status, words) = match error {
        SsoError::NoProvider(_) => (
            StatusCode::NOT_FOUND,
            "This sign-in button leads nowhere: the provider is not configured. Sign in from the sign-in page again.".to_string(),
        ),
        SsoError::Cancelled => (
            StatusCode::FORBIDDEN,
            format!("You cancelled signing in at {label}. Sign in again when you are ready."),
        ),
        SsoError::Unknown => (
            StatusCode::BAD_REQUEST,
            "This sign-in has expired, was already used, or was started in another browser. Start again from the sign-in page.".to_string(),
        ),
        SsoError::Busy => (
            StatusCode::SERVICE_UNAVAILABLE,
            "Too many sign-ins are under way, from your network or in all. Try again in a few minutes.".to_string(),
        ),
        SsoError::Provider(Failure::Unreachable(_)) => (
            StatusCode::BAD_GATEWAY,
            format!("{label} could not be reached. Try again in a few minutes, and tell your administrator if it goes on."),
        ),
        SsoError::Provider(Failure::Refused(_)) => (
            StatusCode::FORBIDDEN,
            format!("{label} did not sign you in. Try again, and tell your administrator if it goes on."),
        ),
        SsoError::Provider(Failure::Untrusted(_)) => (
            StatusCode::FORBIDDEN,
            format!("{label}'s answer could not be trusted, so nobody was signed in. Try again, and tell your administrator if it happens again."),
        ),
        SsoError::Refused(Refusal::NotInGroup) => (
            StatusCode::FORBIDDEN,
            format!("Your {label} account is not in the group allowed to use this portal. Ask your administrator to add you."),
        ),
        SsoError::Refused(Refusal::EmailDomain) => (
            StatusCode::FORBIDDEN,
            "Your email address is not one of the domains allowed here. Sign in with your organisation's account.".to_string(),
        ),
        SsoError::Refused(Refusal::UnverifiedEmail) => (
            StatusCode::FORBIDDEN,
            format!("{label} has not verified your email address. Verify it there, then sign in again."),
        ),
        SsoError::Refused(Refusal::NoOrganisation) => (
            StatusCode::FORBIDDEN,
            format!("No organisation on this portal signs in your {label} account. Ask your administrator."),
        ),
        SsoError::NoAccount => (
            StatusCode::FORBIDDEN,
            "You have no account on this portal yet, and it does not make one on first sign-in. Ask your administrator for one.".to_string(),
        ),
        SsoError::Storage(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "The portal could not finish signing you in. Try again in a moment.".to_string(),
        ),
    };
    page(status, &words)
}

/// A small page saying `words`, with a way back to the sign-in page.
fn page(status: StatusCode, words: &str) -> Response {
    let escaped = escape(words);
    let body = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>Not signed in</title></head>\
         <body style=\"font-family: system-ui, sans-serif; background: #faf9f6; color: #1d1d1b; margin: 0\">\
         <main style=\"max-width: 26rem; margin: 15vh auto; padding: 2rem 1.75rem; background: #fff; \
         border: 1px solid #ddd; border-radius: 0.75rem\">\
         <h1 style=\"font-size: 1.3rem; margin-top: 0\">You are not signed in</h1>\
         <p id=\"sso-error\">{escaped}</p><p><a href=\"/\">Back to the sign-in page</a></p>\
         </main></body></html>"
    );
    (status, Html(body)).into_response()
}
