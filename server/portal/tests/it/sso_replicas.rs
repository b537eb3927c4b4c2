//! Single sign-on across replicas (issue 42): two replicas on one PostgreSQL database behind the
//! shipped nginx (`deploy/nginx.conf`, run as `proxy.rs` runs it), against a real OpenID
//! provider, the npm `oidc-provider` (OpenID-certified; the browser tests' provider,
//! `tests/e2e/oidc.mjs`, run by `sso_support/oidc_provider.mjs`). nginx balances round robin
//! and sticks nobody to a replica, so a sign-in's return from the provider may reach either:
//! sign-ins under way are kept in the database, and any replica finishes one.
//!
//! Skipped with a note without PostgreSQL (`PORTAL_TEST_POSTGRES`) or nginx, as `proxy.rs` is;
//! with `PORTAL_REQUIRE_POSTGRES` set (`cargo xtask test`) either missing fails the test instead.
//! It needs node and `oidc-provider` (`cargo xtask setup`).

use crate::common;
use crate::databases;
use crate::mcp_support;
use crate::proxy_support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use reqwest::header::{COOKIE, LOCATION, SET_COOKIE};
use reqwest::{StatusCode, Url};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use proxy_support::{CLIENT, Deployment};

/// The client secret the provider and the portal share.
const SECRET: &str = "portal-replicas-client-secret";

/// The people who sign in, one sign-in each, and one more whose sign-in is left under way.
const LOGINS: [&str; 7] = ["ada", "bea", "cid", "dee", "eli", "fay", "gus"];

/// `oidc-provider` in a node process of its own, stopped when dropped.
struct Provider {
    child: Child,
    issuer: String,
}

impl Provider {
    /// Starts the provider for the portal at `portal`, knowing every person of [`LOGINS`] (in
    /// the group `portal`, with a verified email at acme.example).
    fn start(portal: &str) -> Provider {
        let accounts: serde_json::Map<String, Value> = LOGINS
            .iter()
            .map(|login| {
                let account = json!({
                    "name": login.to_uppercase(),
                    "email": format!("{login}@acme.example"),
                    "email_verified": true,
                    "groups": ["portal"],
                });
                (login.to_string(), account)
            })
            .collect();
        let mut child = Command::new(mcp_support::node())
            .arg(mcp_support::installed(
                "server/portal/tests/it/sso_support/oidc_provider.mjs",
            ))
            .args([portal, SECRET, &Value::Object(accounts).to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("node starts; run `cargo xtask setup`");
        // Its output is read to its end, so that what the provider writes later (its notices)
        // never finds the pipe closed.
        let stdout = child.stdout.take().expect("its output");
        let (found, issuer) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                match line.strip_prefix("issuer ") {
                    Some(issuer) => {
                        let _ = found.send(issuer.to_string());
                    }
                    None => println!("oidc-provider: {line}"),
                }
            }
        });
        let issuer = issuer
            .recv()
            .expect("oidc-provider says where it serves; run `cargo xtask setup` if it is missing");
        Provider { child, issuer }
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A browser: it connects from [`CLIENT`], follows no redirect by itself (the test follows
/// each, to see where it goes), and keeps the cookies it is given, by name (the portal's and the
/// provider's are on one host, 127.0.0.1, whose ports share cookies).
struct Browser {
    client: reqwest::Client,
    cookies: BTreeMap<String, String>,
}

impl Browser {
    fn new() -> Browser {
        Browser {
            client: reqwest::Client::builder()
                .local_address(CLIENT)
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("a client"),
            cookies: BTreeMap::new(),
        }
    }

    /// The `Cookie` header of every cookie held.
    fn cookie_header(&self) -> String {
        self.cookies
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// Sends `request` with the cookies held, keeps those the answer sets (an emptied one is
    /// dropped), and returns the answer.
    async fn send(&mut self, request: reqwest::RequestBuilder) -> reqwest::Response {
        let request = if self.cookies.is_empty() {
            request
        } else {
            request.header(COOKIE, self.cookie_header())
        };
        let answer = request.send().await.expect("answered");
        for set in answer.headers().get_all(SET_COOKIE) {
            let set = set.to_str().expect("a cookie");
            let pair = set.split(';').next().unwrap_or_default();
            let (name, value) = pair.split_once('=').expect("name=value");
            if value.is_empty() {
                self.cookies.remove(name);
            } else {
                self.cookies.insert(name.to_string(), value.to_string());
            }
        }
        answer
    }

    async fn get(&mut self, url: &Url) -> reqwest::Response {
        let request = self.client.get(url.clone());
        self.send(request).await
    }

    /// Starts a sign-in with the provider through nginx at `base`, and returns the provider's
    /// address the portal sent the browser to.
    async fn start(&mut self, base: &str, return_to: &str) -> Url {
        let start =
            Url::parse_with_params(&format!("{base}/sso/start/idp"), [("return_to", return_to)])
                .expect("an address");
        let answer = self.get(&start).await;
        assert_eq!(
            answer.status(),
            StatusCode::SEE_OTHER,
            "the start redirects"
        );
        assert!(self.cookies.contains_key("portal_sso"), "a binding cookie");
        next(&start, &answer)
    }

    /// Signs `login` in at the provider from `at` (its authorization address) as a person
    /// would, through its sign-in and consent pages, and returns the address it sends the
    /// browser back to: the portal's callback, not yet visited.
    async fn at_the_provider(&mut self, mut at: Url, issuer: &str, login: &str) -> Url {
        for _ in 0..12 {
            if !at.as_str().starts_with(issuer) {
                return at;
            }
            let answer = if at.path().starts_with("/interaction/") {
                let page = self.get(&at).await;
                assert_eq!(page.status(), StatusCode::OK, "{at}");
                let page = page.text().await.expect("a page");
                let action = at
                    .join(&between(&page, "action=\"", "\""))
                    .expect("the form's address");
                let form: Vec<(&str, &str)> =
                    match between(&page, "name=\"prompt\" value=\"", "\"").as_str() {
                        "login" => vec![("prompt", "login"), ("login", login), ("password", "any")],
                        "consent" => vec![("prompt", "consent")],
                        other => panic!("the provider asks for {other}: {page}"),
                    };
                let request = self.client.post(action).form(&form);
                self.send(request).await
            } else {
                self.get(&at).await
            };
            assert!(
                answer.status().is_redirection(),
                "{at} answered {}: {}",
                answer.status(),
                answer.text().await.unwrap_or_default()
            );
            at = next(&at, &answer);
        }
        panic!("the provider did not send the browser back within 12 steps");
    }
}

/// Where `answer`, to a request for `from`, redirects.
fn next(from: &Url, answer: &reqwest::Response) -> Url {
    let location = answer.headers()[LOCATION].to_str().expect("a location");
    from.join(location).expect("an address")
}

/// The text of `page` between the first `before` and the `after` that follows it.
fn between(page: &str, before: &str, after: &str) -> String {
    let start = page
        .find(before)
        .unwrap_or_else(|| panic!("no {before} in {page}"))
        + before.len();
    let length = page[start..].find(after).expect("its end");
    page[start..start + length].replace("&amp;", "&")
}

fn hex_sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether this test can run: nginx and the test PostgreSQL are there (a missing one is said,
/// and fails the test under `PORTAL_REQUIRE_POSTGRES`).
fn runnable() -> bool {
    proxy_support::nginx_program().is_some()
        && (std::env::var_os("PORTAL_TEST_POSTGRES").is_some()
            || databases::Database::postgres().is_some())
}

// Six people sign in through nginx, one after another. The shipped site sticks no client to a
// replica, and nginx takes turns between them, so each sign-in's return from the provider
// reaches the replica that did not start it (the test checks that it did, both ways round):
// each is signed in, sent where the sign-in asked, and their session works. With sign-ins under
// way kept in one replica's memory, the first return is told its sign-in expired. A state used
// once is then refused on both replicas, with the browser's own binding. Sign-ins under way are
// in the database by the digest of their state only, and none is left once finished.
#[tokio::test]
async fn every_sign_in_finishes_on_the_replica_that_did_not_start_it_and_a_used_state_fails_on_both()
 {
    if !runnable() {
        return;
    }
    let port = proxy_support::free_port();
    let public = format!("http://127.0.0.1:{port}");
    let provider = Provider::start(&public);
    let config = tempfile::tempdir().expect("a configuration folder");
    std::fs::create_dir_all(config.path().join("providers")).expect("providers folder");
    std::fs::write(config.path().join("idp.secret"), format!("{SECRET}\n")).expect("secret");
    std::fs::write(
        config.path().join("providers/idp.toml"),
        format!(
            "label = \"Acme ID\"\nissuer = \"{}\"\nclient_id = \"portal\"\n\
             client_secret_file = \"idp.secret\"\nscopes = [\"email\", \"profile\", \"groups\"]\n\
             organisation = \"acme\"\nsign_up = true\nrequired_claim = \"groups\"\n\
             required_value = \"portal\"\n",
            provider.issuer
        ),
    )
    .expect("provider written");
    let Some(deployment) =
        Deployment::start_on("0", &["--public-url", &public], config, port).await
    else {
        return;
    };
    let directives: Vec<&str> = proxy_support::SHIPPED
        .lines()
        .map(|line| line.split('#').next().unwrap_or_default().trim())
        .collect();
    assert!(
        !directives
            .iter()
            .any(|d| d.starts_with("ip_hash") || d.starts_with("hash ") || d.starts_with("sticky")),
        "the shipped nginx site sticks clients to a replica"
    );
    let base = &deployment.nginx.base;

    let mut replay = None;
    let mut directions = Vec::new();
    for (n, login) in LOGINS[..6].iter().enumerate() {
        let mut browser = Browser::new();
        let return_to = format!("/c/{n}");
        let authorize = browser.start(base, &return_to).await;
        let callback = browser
            .at_the_provider(authorize, &provider.issuer, login)
            .await;
        assert!(
            callback
                .as_str()
                .starts_with(&format!("{base}/sso/callback?")),
            "{callback}"
        );
        let binding = browser.cookies["portal_sso"].clone();
        let ended = browser.get(&callback).await;
        let started_on = deployment
            .answered_by("GET /sso/start/idp 303", n + 1)
            .await[n]
            .clone();
        let (status, location) = (ended.status(), ended.headers().get(LOCATION).cloned());
        let session = common::session_cookie(ended.headers());
        // Every callback so far signed someone in, or this is the first that did not.
        let so_far = if status == StatusCode::SEE_OTHER {
            n + 1
        } else {
            1
        };
        let finished_on = deployment
            .answered_by(&format!("GET /sso/callback {}", status.as_u16()), so_far)
            .await[so_far - 1]
            .clone();
        let page = ended.text().await.expect("body");
        assert_eq!(
            (status, location.as_ref().and_then(|l| l.to_str().ok())),
            (StatusCode::SEE_OTHER, Some(return_to.as_str())),
            "{login}'s sign-in, started on {started_on} and returning to {finished_on}, did not sign them in: {page}"
        );
        assert_ne!(
            started_on, finished_on,
            "{login}'s return from the provider reached the replica that started the sign-in; nginx was to send it to the other"
        );
        directions.push((started_on, finished_on));
        let session = session.expect("a session cookie");
        let who: Value = browser
            .client
            .get(format!("{base}/api/session"))
            .header(COOKIE, format!("portal_session={session}"))
            .send()
            .await
            .expect("answered")
            .json()
            .await
            .expect("json");
        assert_eq!(who["organisation"], "acme", "{who}");
        assert!(
            who["user"]
                .as_str()
                .is_some_and(|user| user.starts_with(&format!("{login}-"))),
            "{who}"
        );
        replay.get_or_insert((callback, binding));
    }
    directions.sort();
    directions.dedup();
    assert_eq!(
        directions.len(),
        2,
        "sign-ins went one way round only: {directions:?}"
    );

    // The first sign-in's return again, with its browser's binding: a replay, refused by
    // whichever replica it reaches, and nobody signed in.
    let (callback, binding) = replay.expect("a sign-in");
    let replayer = Browser::new();
    for _ in 0..2 {
        let again = replayer
            .client
            .get(callback.clone())
            .header(COOKIE, format!("portal_sso={binding}"))
            .send()
            .await
            .expect("answered");
        assert_eq!(again.status(), StatusCode::BAD_REQUEST);
        assert_eq!(common::session_cookie(again.headers()), None);
        let page = again.text().await.expect("body");
        assert!(page.contains("already used"), "{page}");
    }
    deployment
        .assert_both_answered("GET /sso/callback 400", 2)
        .await;

    let database = &deployment.pair.database;
    assert_eq!(
        database.count("SELECT count(*) FROM sso_sign_ins"),
        0,
        "finished sign-ins are not kept"
    );
    // A sign-in left under way is kept by the digest of its state; neither the state nor the
    // browser's cookie is in the database.
    let mut browser = Browser::new();
    let authorize = browser.start(base, "/").await;
    let state = authorize
        .query_pairs()
        .find(|(name, _)| name == "state")
        .map(|(_, value)| value.into_owned())
        .expect("a state");
    let binding = browser.cookies["portal_sso"].clone();
    assert_eq!(
        database.count(&format!(
            "SELECT count(*) FROM sso_sign_ins WHERE state_sha256 = '{}' AND binding_sha256 = '{}'",
            hex_sha256(&state),
            hex_sha256(&binding)
        )),
        1
    );
    for secret in [&state, &binding] {
        assert_eq!(
            database.count(&format!(
                "SELECT count(*) FROM sso_sign_ins WHERE '{secret}' IN \
                 (state_sha256, binding_sha256, client, provider, verifier, nonce, return_to)"
            )),
            0
        );
    }
}
