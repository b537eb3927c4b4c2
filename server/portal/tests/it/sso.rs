//! Single sign-on attack tests (docs/security.md, "Single sign-on"): a real server in users
//! mode signs people in through a fake OpenID provider that hands out forged ID tokens. Each
//! forgery is refused and signs nobody in; the genuine sign-in makes an account once and signs
//! in to it after.

use crate::common;
use crate::sso_support;

use std::time::{SystemTime, UNIX_EPOCH};

use reqwest::StatusCode;
use reqwest::header::{COOKIE, LOCATION, SET_COOKIE};
use serde_json::{Value, json};

use sso_support::{CLIENT_ID, CLIENT_SECRET, FakeProvider, Signer};

const PASSWORD: &str = "correct horse battery";

struct Portal {
    base: String,
    /// A browser that does not follow redirects, so each hop is seen.
    client: reqwest::Client,
    fake: FakeProvider,
    _dir: tempfile::TempDir,
}

/// Where `/sso/start` sent the browser, and the cookie binding it.
struct Started {
    state: String,
    nonce: String,
    challenge: String,
    binding: String,
}

/// What the callback answered.
struct Ended {
    status: StatusCode,
    location: Option<String>,
    session: Option<String>,
    body: String,
}

async fn start_portal() -> Portal {
    start_portal_with("sign_up = true\n", "").await
}

/// A portal whose provider's file ends with `provider_rules` and whose organisation's with
/// `organisation_rules`; it has a password user, `pat`.
async fn start_portal_with(provider_rules: &str, organisation_rules: &str) -> Portal {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config");
    std::fs::create_dir_all(config.join("organisations/acme")).expect("organisation folder");
    std::fs::write(
        config.join("organisations/acme/organisation.toml"),
        format!("name = \"Acme\"\n{organisation_rules}"),
    )
    .expect("organisation written");
    portal_identity::add_user(&config, "acme", "pat", "Pat", PASSWORD).expect("user added");
    std::fs::create_dir_all(config.join("providers")).expect("providers folder");
    std::fs::write(config.join("idp.secret"), format!("{CLIENT_SECRET}\n")).expect("secret");
    std::fs::write(
        config.join("providers/idp.toml"),
        format!(
            "label = \"Acme Login\"\nissuer = \"{}\"\nclient_id = \"{CLIENT_ID}\"\n\
             client_secret_file = \"idp.secret\"\nscopes = [\"email\", \"profile\"]\n\
             organisation = \"acme\"\nrequired_claim = \"groups\"\n\
             required_value = \"portal\"\nemail_domains = [\"acme.com\"]\n{provider_rules}",
            fake.issuer
        ),
    )
    .expect("provider written");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("loopback port");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    let server_config = portal_server::Config {
        identity: Some(portal_identity::Identity::load(&config).expect("identity")),
        sessions: portal_server::sessions::SessionConfig {
            public_origin: Some(base.clone()),
            ..Default::default()
        },
        ..common::config(&dir.path().join("data"), 0.0, None)
    };
    tokio::spawn(async move {
        if let Err(error) = portal_server::serve(listener, server_config).await {
            panic!("server failed: {error:#}");
        }
    });
    let ready = common::Server::at(base.clone());
    let probe = ready.url("/readyz");
    common::until(
        "the server to be ready",
        std::time::Duration::from_secs(60),
        || {
            let answer = ready.client.get(&probe).send();
            async move { answer.await.ok()?.status().is_success().then_some(()) }
        },
    )
    .await;
    Portal {
        base,
        client: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client"),
        fake,
        _dir: dir,
    }
}

fn query(url: &str, name: &str) -> Option<String> {
    reqwest::Url::parse(url)
        .ok()?
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("time")
        .as_secs() as i64
}

impl Portal {
    async fn start(&self, return_to: &str) -> Started {
        let response = self
            .client
            .get(format!("{}/sso/start/idp", self.base))
            .query(&[("return_to", return_to)])
            .send()
            .await
            .expect("start");
        assert_eq!(response.status(), StatusCode::SEE_OTHER);
        let location = response.headers()[LOCATION].to_str().expect("location");
        assert!(location.starts_with(&format!("{}/authorize?", self.fake.issuer)));
        assert_eq!(
            query(location, "code_challenge_method").as_deref(),
            Some("S256")
        );
        assert_eq!(
            query(location, "redirect_uri"),
            Some(format!("{}/sso/callback", self.base))
        );
        let binding = response
            .headers()
            .get_all(SET_COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find_map(|c| c.strip_prefix("portal_sso="))
            .and_then(|c| c.split(';').next())
            .expect("binding cookie")
            .to_string();
        Started {
            state: query(location, "state").expect("state"),
            nonce: query(location, "nonce").expect("nonce"),
            challenge: query(location, "code_challenge").expect("challenge"),
            binding,
        }
    }

    async fn callback(&self, state: &str, code: &str, binding: Option<&str>) -> Ended {
        let mut request = self
            .client
            .get(format!("{}/sso/callback", self.base))
            .query(&[("state", state), ("code", code)]);
        if let Some(binding) = binding {
            request = request.header(COOKIE, format!("portal_sso={binding}"));
        }
        let response = request.send().await.expect("callback");
        ended(response).await
    }

    /// The claims of a genuine ID token for the sign-in `started`.
    fn claims(&self, started: &Started, subject: &str) -> Value {
        json!({
            "iss": self.fake.issuer,
            "aud": CLIENT_ID,
            "sub": subject,
            "iat": now(),
            "exp": now() + 300,
            "nonce": started.nonce,
            "email": format!("{subject}@acme.com"),
            "email_verified": true,
            "name": "Ada Lovelace",
            "preferred_username": subject,
            "groups": ["staff", "portal"],
        })
    }

    /// Starts a sign-in, has the provider issue `code` for the ID token `forge` makes of the
    /// genuine claims, and returns to the portal with it.
    async fn sign_in(&self, code: &str, signer: &Signer, forge: impl Fn(&mut Value)) -> Ended {
        self.sign_in_told(code, signer, forge, json!({"sub": "ada"}))
            .await
    }

    /// [`Portal::sign_in`], the provider's userinfo answering `userinfo`.
    async fn sign_in_told(
        &self,
        code: &str,
        signer: &Signer,
        forge: impl Fn(&mut Value),
        userinfo: Value,
    ) -> Ended {
        let started = self.start("/").await;
        let mut claims = self.claims(&started, "ada");
        forge(&mut claims);
        let token = self.fake.mint(signer, &claims);
        self.fake.grant(code, &started.challenge, token, userinfo);
        self.callback(&started.state, code, Some(&started.binding))
            .await
    }

    async fn who(&self, session: &str) -> Option<Value> {
        let response = self
            .client
            .get(format!("{}/api/session", self.base))
            .header(COOKIE, format!("portal_session={session}"))
            .send()
            .await
            .expect("session");
        response
            .status()
            .is_success()
            .then_some(response.json().await.expect("json"))
    }
}

async fn ended(response: reqwest::Response) -> Ended {
    let status = response.status();
    let location = response
        .headers()
        .get(LOCATION)
        .map(|v| v.to_str().expect("location").to_string());
    let session = common::session_cookie(response.headers()).filter(|s| !s.is_empty());
    Ended {
        status,
        location,
        session,
        body: response.text().await.expect("body"),
    }
}

fn refused(ended: &Ended, words: &str, case: &str) {
    assert!(ended.session.is_none(), "{case}: signed someone in");
    assert!(
        ended.status.is_client_error() || ended.status.is_server_error(),
        "{case}: {}",
        ended.status
    );
    assert!(ended.body.contains(words), "{case}: {}", ended.body);
}

#[tokio::test]
async fn a_genuine_sign_in_makes_the_account_once_and_signs_in_to_it() {
    let portal = start_portal().await;
    let first = portal.sign_in("code-1", &Signer::Rsa("a"), |_| {}).await;
    assert_eq!(first.status, StatusCode::SEE_OTHER, "{}", first.body);
    assert_eq!(first.location.as_deref(), Some("/"));
    let session = first.session.expect("a session cookie");
    let who = portal.who(&session).await.expect("signed in");
    assert_eq!(who["organisation"], "acme");
    assert_eq!(who["name"], "Ada Lovelace");
    let user = who["user"].as_str().expect("user").to_string();
    assert!(user.starts_with("ada-"), "{user}");
    let again = portal.sign_in("code-2", &Signer::Rsa("a"), |_| {}).await;
    let who = portal
        .who(&again.session.expect("a session cookie"))
        .await
        .expect("signed in");
    assert_eq!(who["user"], user.as_str(), "the same account");
    let signed_out = portal
        .client
        .delete(format!("{}/api/session", portal.base))
        .header(COOKIE, format!("portal_session={session}"))
        .header("origin", &portal.base)
        .send()
        .await
        .expect("sign out");
    assert_eq!(signed_out.status(), StatusCode::NO_CONTENT);
    assert!(portal.who(&session).await.is_none(), "signed out");
}

#[tokio::test]
async fn forged_id_tokens_sign_nobody_in() {
    let portal = start_portal().await;
    let untrusted = "answer could not be trusted";
    type Forge = fn(&mut Value);
    let cases: [(&str, Signer, Forge, &str); 9] = [
        (
            "a wrong nonce",
            Signer::Rsa("a"),
            |c| c["nonce"] = json!("other"),
            untrusted,
        ),
        (
            "another audience",
            Signer::Rsa("a"),
            |c| c["aud"] = json!("another-client"),
            untrusted,
        ),
        (
            "another issuer",
            Signer::Rsa("a"),
            |c| c["iss"] = json!("https://evil.example"),
            untrusted,
        ),
        (
            "an expired token",
            Signer::Rsa("a"),
            |c| c["exp"] = json!(now() - 3600),
            untrusted,
        ),
        ("alg none", Signer::Unsigned, |_| {}, untrusted),
        (
            "HMAC keyed by the client secret",
            Signer::ClientSecret,
            |_| {},
            untrusted,
        ),
        (
            "a key the provider never published",
            Signer::Rsa("b"),
            |_| {},
            untrusted,
        ),
        (
            "an unverified email",
            Signer::Rsa("a"),
            |c| c["email_verified"] = json!(false),
            "not verified your email",
        ),
        (
            "a user outside the required group",
            Signer::Rsa("a"),
            |c| c["groups"] = json!(["staff"]),
            "not in the group allowed",
        ),
    ];
    for (n, (case, signer, forge, words)) in cases.into_iter().enumerate() {
        let ended = portal.sign_in(&format!("forged-{n}"), &signer, forge).await;
        refused(&ended, words, case);
    }
}

#[tokio::test]
async fn keys_are_fetched_again_when_the_provider_rotates_them() {
    let portal = start_portal().await;
    let before = portal.sign_in("rotate-1", &Signer::Rsa("a"), |_| {}).await;
    assert!(before.session.is_some(), "{}", before.body);
    portal.fake.publish(&["b"]);
    let after = portal.sign_in("rotate-2", &Signer::Rsa("b"), |_| {}).await;
    assert!(after.session.is_some(), "{}", after.body);
    let retired = portal.sign_in("rotate-3", &Signer::Rsa("a"), |_| {}).await;
    refused(&retired, "could not be trusted", "a retired key");
}

#[tokio::test]
async fn forged_replayed_and_foreign_states_and_reused_codes_sign_nobody_in() {
    let portal = start_portal().await;
    let expired = "has expired, was already used";
    // A state the portal never issued.
    let started = portal.start("/").await;
    let forged = portal
        .callback("forged-state", "code", Some(&started.binding))
        .await;
    refused(&forged, expired, "a forged state");
    // The state of a sign-in, returned by a browser without its cookie, or another one's.
    let started = portal.start("/").await;
    let foreign = portal
        .callback(&started.state, "code", Some("another-browser"))
        .await;
    refused(&foreign, expired, "another browser's state");
    let started = portal.start("/").await;
    let bare = portal.callback(&started.state, "code", None).await;
    refused(&bare, expired, "a state without its cookie");
    // A genuine sign-in, then its callback replayed.
    let started = portal.start("/").await;
    let claims = portal.claims(&started, "ada");
    let token = portal.fake.mint(&Signer::Rsa("a"), &claims);
    portal
        .fake
        .grant("once", &started.challenge, token, json!({"sub": "ada"}));
    let first = portal
        .callback(&started.state, "once", Some(&started.binding))
        .await;
    assert!(first.session.is_some(), "{}", first.body);
    let replayed = portal
        .callback(&started.state, "once", Some(&started.binding))
        .await;
    refused(&replayed, expired, "a replayed state");
    // The used code, brought back with a fresh state.
    let fresh = portal.start("/").await;
    let reused = portal
        .callback(&fresh.state, "once", Some(&fresh.binding))
        .await;
    refused(&reused, "did not sign you in", "a reused code");
}

#[tokio::test]
async fn the_return_address_stays_on_the_portal_and_cancelling_says_so() {
    let portal = start_portal().await;
    for (asked, kept) in [
        ("/c/42?x=1", "/c/42?x=1"),
        ("https://evil.example/", "/"),
        ("//evil.example/", "/"),
        ("/\\evil.example", "/"),
    ] {
        let started = portal.start(asked).await;
        let claims = portal.claims(&started, "ada");
        let token = portal.fake.mint(&Signer::Rsa("a"), &claims);
        let code = format!("return-{asked}");
        portal
            .fake
            .grant(&code, &started.challenge, token, json!({"sub": "ada"}));
        let ended = portal
            .callback(&started.state, &code, Some(&started.binding))
            .await;
        assert_eq!(ended.location.as_deref(), Some(kept), "{asked}");
    }
    let started = portal.start("/").await;
    let cancelled = portal
        .client
        .get(format!("{}/sso/callback", portal.base))
        .query(&[
            ("state", started.state.as_str()),
            ("error", "access_denied"),
        ])
        .header(COOKIE, format!("portal_sso={}", started.binding))
        .send()
        .await
        .expect("callback");
    refused(
        &ended(cancelled).await,
        "You cancelled signing in at Acme Login",
        "cancelled",
    );
}

#[tokio::test]
async fn claims_missing_from_the_id_token_are_asked_of_userinfo_about_the_same_person() {
    let portal = start_portal().await;
    let without_groups = |c: &mut Value| {
        c.as_object_mut().expect("claims").remove("groups");
    };
    let told = portal
        .sign_in_told(
            "userinfo-1",
            &Signer::Rsa("a"),
            without_groups,
            json!({"sub": "ada", "groups": ["portal"]}),
        )
        .await;
    assert!(told.session.is_some(), "{}", told.body);
    let someone_else = portal
        .sign_in_told(
            "userinfo-2",
            &Signer::Rsa("a"),
            without_groups,
            json!({"sub": "eve", "groups": ["portal"]}),
        )
        .await;
    refused(
        &someone_else,
        "could not be trusted",
        "userinfo about someone else",
    );
    let not_told = portal
        .sign_in_told(
            "userinfo-3",
            &Signer::Rsa("a"),
            without_groups,
            json!({"sub": "ada"}),
        )
        .await;
    refused(&not_told, "not in the group allowed", "no groups anywhere");
}

#[tokio::test]
async fn without_sign_up_a_first_sign_in_makes_no_account() {
    let portal = start_portal_with("", "").await;
    let ended = portal
        .sign_in("no-sign-up", &Signer::Rsa("a"), |_| {})
        .await;
    refused(
        &ended,
        "You have no account on this portal yet",
        "sign-up off",
    );
}

#[tokio::test]
async fn an_organisation_without_passwords_signs_in_only_through_its_provider() {
    for (rules, passwords) in [("", true), ("passwords = false\n", false)] {
        let portal = start_portal_with("sign_up = true\n", rules).await;
        let buttons = portal
            .client
            .get(format!(
                "{}/sso/buttons?organisation=acme&return_to=/c/1",
                portal.base
            ))
            .send()
            .await
            .expect("buttons")
            .text()
            .await
            .expect("text");
        let only = if passwords { "" } else { " data-go" };
        // Acme is the portal's only organisation: the page fills it in and hides the field.
        let mut expected = format!(
            "<span data-organisation=\"acme\" hidden></span><a class=\"sso\" href=\"/sso/start/idp?return_to=%2Fc%2F1\"{only}>Sign in with Acme Login</a>"
        );
        if !passwords {
            expected.push_str("<span data-no-passwords hidden></span>");
        }
        assert_eq!(buttons, expected, "{rules}");
        let signed = portal
            .client
            .post(format!("{}/api/session", portal.base))
            .header("origin", &portal.base)
            .json(&json!({"organisation": "acme", "user": "pat", "password": PASSWORD}))
            .send()
            .await
            .expect("sign in");
        let expected = if passwords {
            StatusCode::OK
        } else {
            StatusCode::UNAUTHORIZED
        };
        assert_eq!(signed.status(), expected, "{rules}");
    }
}

#[tokio::test]
async fn signing_out_ends_the_session_here_and_at_the_provider() {
    let portal = start_portal().await;
    let sign_out = |session: String| {
        portal
            .client
            .get(format!("{}/sign-out", portal.base))
            .header(COOKIE, format!("portal_session={session}"))
            .header("sec-fetch-site", "same-origin")
            .send()
    };
    let session = portal
        .sign_in("sign-out", &Signer::Rsa("a"), |_| {})
        .await
        .session
        .expect("signed in");
    let from_elsewhere = portal
        .client
        .get(format!("{}/sign-out", portal.base))
        .header(COOKIE, format!("portal_session={session}"))
        .header("sec-fetch-site", "cross-site")
        .send()
        .await
        .expect("sign out");
    assert_eq!(from_elsewhere.headers()[LOCATION], "/");
    assert!(
        portal.who(&session).await.is_some(),
        "another site signed them out"
    );
    let ended = sign_out(session.clone()).await.expect("sign out");
    assert_eq!(ended.status(), StatusCode::SEE_OTHER);
    let next = ended.headers()[LOCATION].to_str().expect("location");
    assert!(
        next.starts_with(&format!("{}/session/end?", portal.fake.issuer)),
        "{next}"
    );
    assert_eq!(query(next, "client_id").as_deref(), Some(CLIENT_ID));
    assert_eq!(
        query(next, "post_logout_redirect_uri"),
        Some(format!("{}/", portal.base))
    );
    assert!(portal.who(&session).await.is_none(), "still signed in");
    let password = portal
        .client
        .post(format!("{}/api/session", portal.base))
        .header("origin", &portal.base)
        .json(&json!({"organisation": "acme", "user": "pat", "password": PASSWORD}))
        .send()
        .await
        .expect("sign in");
    let session = common::session_cookie(password.headers()).expect("a session");
    let ended = sign_out(session.clone()).await.expect("sign out");
    assert_eq!(
        ended.headers()[LOCATION],
        "/",
        "a password session stays here"
    );
    assert!(portal.who(&session).await.is_none(), "still signed in");
}

#[tokio::test]
async fn one_address_cannot_hold_more_than_its_share_of_the_sign_ins_under_way() {
    let portal = start_portal().await;
    for _ in 0..portal_server::sso::pending::FROM_ONE_CLIENT {
        portal.start("/").await;
    }
    let refused = portal
        .client
        .get(format!("{}/sso/start/idp", portal.base))
        .send()
        .await
        .expect("start");
    let status = refused.status();
    let body = refused.text().await.expect("body");
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert!(body.contains("Too many sign-ins are under way"), "{body}");
}
