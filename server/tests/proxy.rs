//! The shipped nginx configuration, `docs/deploy/nginx.conf`, in front of two replicas
//! (`portal serve --database` on one PostgreSQL schema, users mode): Debian's nginx runs that
//! file over plain http (without its lines marked `# tls`, its `# replica` lines replaced by the
//! two replicas and its `# listen` line by a loopback port), and everything below goes through
//! it with a session cookie signed in through it.
//!
//! Skipped with a note without PostgreSQL (`PORTAL_TEST_POSTGRES`) or nginx; with
//! `PORTAL_REQUIRE_POSTGRES` set (`cargo xtask test`) either missing fails the test instead
//! (`cargo xtask setup` installs both).

mod common;
mod databases;
mod replica_support;

use std::net::{IpAddr, Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Server, assert_same_content, session_cookie, until};
use portal_core::TurnStatus;
use replica_support::{HUNG, Pair, Timed, end_status, read_to_end, read_until_text, untimed};
use reqwest::header::{COOKIE, HeaderMap, HeaderValue, ORIGIN};
use reqwest::{RequestBuilder, StatusCode};
use serde_json::json;

/// The configuration under test.
const SHIPPED: &str = include_str!("../../docs/deploy/nginx.conf");

const PASSWORD: &str = "correct horse battery";
/// Where the tests' clients connect to nginx from: not 127.0.0.1, which is nginx's own address
/// towards the replicas.
const CLIENT: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 3));

/// How long nginx may take to log a request it answered.
const LOGGED: Duration = Duration::from_secs(5);

/// A message the demo answers with thinking and a reply of a few scripts, streamed in small
/// pieces over seconds at pace 1.
const MESSAGE: &str = "Tell me about scripts";

/// `nginx` on PATH, else Debian's /usr/sbin/nginx (off a normal user's PATH); `None` with a note
/// when there is none, unless `PORTAL_REQUIRE_POSTGRES` is set.
fn nginx_program() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default();
    let found = on_path
        .into_iter()
        .chain([PathBuf::from("/usr/sbin")])
        .map(|dir| dir.join("nginx"))
        .find(|program| program.is_file());
    if found.is_none() {
        assert!(
            std::env::var_os("PORTAL_REQUIRE_POSTGRES").is_none(),
            "PORTAL_REQUIRE_POSTGRES is set but nginx is not installed; run `cargo xtask setup`"
        );
        eprintln!("nginx is not installed: the proxy tests are skipped");
    }
    found
}

/// `SHIPPED` as the test runs it: over plain http on `port`, in front of `replicas`.
fn rendered(replicas: &[&str], port: u16) -> String {
    let mut lines = Vec::new();
    let mut replaced = false;
    for line in SHIPPED.lines() {
        let indent = &line[..line.len() - line.trim_start().len()];
        if line.ends_with("# tls") {
            continue;
        } else if line.ends_with("# replica") {
            if !replaced {
                for replica in replicas {
                    lines.push(format!("{indent}server {replica};"));
                }
                replaced = true;
            }
        } else if line.ends_with("# listen") {
            lines.push(format!("{indent}listen 127.0.0.1:{port};"));
        } else {
            lines.push(line.to_string());
        }
    }
    assert!(
        replaced,
        "the shipped file marks its replicas with `# replica`"
    );
    lines.join("\n")
}

/// nginx running the shipped configuration in the foreground, all its files in a folder of its
/// own; stopped when dropped.
struct Nginx {
    child: Child,
    dir: tempfile::TempDir,
    /// Where it serves, `http://127.0.0.1:PORT`.
    base: String,
}

impl Nginx {
    /// Starts nginx in front of `replicas` (their `http://` addresses) and waits until it
    /// answers.
    async fn start(program: &Path, replicas: &[&str]) -> Nginx {
        let dir = tempfile::tempdir().expect("a folder for nginx");
        let port = {
            let free = TcpListener::bind("127.0.0.1:0").expect("a free port");
            free.local_addr().expect("its address").port()
        };
        let upstreams: Vec<&str> = replicas
            .iter()
            .map(|base| base.strip_prefix("http://").expect("an http address"))
            .collect();
        let site = dir.path().join("portal.conf");
        std::fs::write(&site, rendered(&upstreams, port)).expect("the site is written");
        let at = |name: &str| dir.path().join(name).display().to_string();
        // One process, no workers: it runs as whoever starts it, root or not, and stops with it.
        let main = format!(
            "master_process off;\n\
             pid {pid};\n\
             error_log {errors} notice;\n\
             events {{}}\n\
             http {{\n\
                 log_format upstream '$request_method $uri $status $upstream_addr';\n\
                 access_log {access} upstream;\n\
                 client_body_temp_path {body};\n\
                 proxy_temp_path {proxy};\n\
                 fastcgi_temp_path {fastcgi};\n\
                 uwsgi_temp_path {uwsgi};\n\
                 scgi_temp_path {scgi};\n\
                 include {site};\n\
             }}\n",
            pid = at("nginx.pid"),
            errors = at("error.log"),
            access = at("access.log"),
            body = at("client_body"),
            proxy = at("proxy"),
            fastcgi = at("fastcgi"),
            uwsgi = at("uwsgi"),
            scgi = at("scgi"),
            site = site.display(),
        );
        let conf = dir.path().join("nginx.conf");
        std::fs::write(&conf, main).expect("the configuration is written");
        let child = Command::new(program)
            .args(["-g", "daemon off;", "-e", &at("error.log"), "-p"])
            .arg(dir.path())
            .arg("-c")
            .arg(&conf)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx starts");
        let mut nginx = Nginx {
            child,
            dir,
            base: format!("http://127.0.0.1:{port}"),
        };
        let url = format!("{}/api/session", nginx.base);
        let client = reqwest::Client::new();
        until("nginx answers", HUNG, || {
            if let Some(status) = nginx.child.try_wait().expect("nginx can be waited on") {
                panic!("nginx exited ({status}): {}", nginx.errors());
            }
            let answered = client.get(&url).send();
            async move { answered.await.ok().map(|_| ()) }
        })
        .await;
        nginx
    }

    fn errors(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("error.log")).unwrap_or_default()
    }

    /// The replica (`host:port`) that answered each request so far, as `METHOD PATH STATUS
    /// UPSTREAM` lines.
    fn access_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("access.log")).unwrap_or_default()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "===== nginx error log =====\n{}\n===== nginx access log =====\n{}",
                self.errors(),
                self.access_log()
            );
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Two replicas in users mode (alice in organisation acme, with an agent) behind nginx.
struct Deployment {
    nginx: Nginx,
    // Dropped after nginx: replicas, then their schema.
    pair: Pair,
    _config: tempfile::TempDir,
}

impl Deployment {
    /// `None` (with a note) without nginx or PostgreSQL.
    async fn start(pace: &str) -> Option<Deployment> {
        let program = nginx_program()?;
        let config = tempfile::tempdir().expect("a configuration folder");
        portal_server::identity::add_user(config.path(), "acme", "alice", "Alice", PASSWORD)
            .expect("alice is added");
        let agents = config.path().join("organisations/acme/agents");
        std::fs::create_dir_all(&agents).expect("agents folder");
        std::fs::write(agents.join("assistant.toml"), "name = \"Assistant\"\n")
            .expect("agent written");
        let config_dir = config.path().to_str().expect("a UTF-8 path");
        // nginx reaches the replicas from 127.0.0.1; the tests' clients connect to it from
        // other loopback addresses, so the replicas can tell the proxy from its clients.
        let pair = Pair::start_with(
            pace,
            &["--config", config_dir, "--trusted-proxy", "127.0.0.1"],
        )?;
        let nginx = Nginx::start(&program, &[&pair.a.server.base, &pair.b.server.base]).await;
        Some(Deployment {
            nginx,
            pair,
            _config: config,
        })
    }

    /// Signs alice in through nginx as the portal's page does, and returns the answer.
    async fn sign_in(&self, password: &str) -> reqwest::Response {
        self.sign_in_from(CLIENT, "alice", password).await
    }

    /// Signs `user` of acme in through nginx from the client at `client`.
    async fn sign_in_from(&self, client: IpAddr, user: &str, password: &str) -> reqwest::Response {
        self.sign_in_request(client, user, password)
            .send()
            .await
            .expect("answered")
    }

    /// A sign-in as the portal's page sends it, through nginx from the client at `client`.
    fn sign_in_request(&self, client: IpAddr, user: &str, password: &str) -> RequestBuilder {
        reqwest::Client::builder()
            .local_address(client)
            .build()
            .expect("a client")
            .post(format!("{}/api/session", self.nginx.base))
            .header(ORIGIN, &self.nginx.base)
            .json(&json!({ "organisation": "acme", "user": user, "password": password }))
    }

    /// A browser signed in through nginx: every request carries the session cookie and the
    /// page's own `Origin`.
    async fn browser(&self) -> Server {
        let answer = self.sign_in(PASSWORD).await;
        assert_eq!(answer.status(), StatusCode::OK, "alice signs in");
        let cookie = format!(
            "portal_session={}",
            session_cookie(answer.headers()).expect("a session cookie")
        );
        let mut headers = HeaderMap::new();
        headers.insert(COOKIE, HeaderValue::from_str(&cookie).expect("a header"));
        headers.insert(
            ORIGIN,
            HeaderValue::from_str(&self.nginx.base).expect("a header"),
        );
        Server {
            base: self.nginx.base.clone(),
            client: reqwest::Client::builder()
                .default_headers(headers)
                .build()
                .expect("a client"),
        }
    }

    /// The replicas (`host:port`) that answered `request` (`METHOD PATH STATUS`), in order,
    /// once at least `count` did: nginx logs a request just after it answers it.
    async fn answered_by(&self, request: &str, count: usize) -> Vec<String> {
        let logged = || {
            self.nginx
                .access_log()
                .lines()
                .filter_map(|line| {
                    let (answered, replica) = line.rsplit_once(' ')?;
                    (answered == request).then(|| replica.to_string())
                })
                .collect::<Vec<_>>()
        };
        let what = format!("{count} requests {request} logged");
        until(&what, LOGGED, || {
            let answered = logged();
            async move { (answered.len() >= count).then_some(answered) }
        })
        .await
        .0
    }

    /// Fails the test unless both replicas answered the `count` requests `request`.
    async fn assert_both_answered(&self, request: &str, count: usize) {
        let answered = self.answered_by(request, count).await;
        for replica in [&self.pair.a, &self.pair.b] {
            let address = replica.server.base.trim_start_matches("http://");
            assert!(
                answered.iter().any(|a| a == address),
                "replica {} ({address}) answered no {request}: {answered:?}",
                replica.name
            );
        }
    }
}
// Through nginx a turn's events arrive as the turn streams, not when it ends: the first event is
// read while most of the turn is still to come. A reader that drops the stream mid-turn and
// reconnects with its Last-Event-ID (through nginx, so possibly to the other replica) gets the
// rest, nothing lost or repeated: what it read in two parts is what a reader got in one.
#[tokio::test]
async fn a_turn_streams_through_the_proxy_as_it_runs_and_resumes_with_last_event_id() {
    let Some(deployment) = Deployment::start("0.5").await else {
        return;
    };
    let browser = deployment.browser().await;
    let id = browser.conversation().await;
    let sent = Instant::now();
    let turn = browser.send(&id, MESSAGE).await;

    let whole = read_to_end(&browser, &id, turn, None);
    let parted = async {
        let mut stream = browser.stream(&id, turn, None).await;
        let mut first: Vec<Timed> = Vec::new();
        read_until_text(&mut stream, &mut first, 40).await;
        drop(stream);
        let last = first.last().expect("events were read").0;
        let rest = read_to_end(&browser, &id, turn, Some(last)).await;
        (first, rest)
    };
    let (whole, (first, rest)) = tokio::join!(whole, parted);

    let events = untimed(&whole);
    assert_eq!(end_status(&events), TurnStatus::Completed);
    let (first_at, end_at) = (whole[0].2, whole.last().expect("the end").2);
    let (to_first, to_end) = (first_at - sent, end_at - sent);
    println!(
        "through nginx: first event {to_first:?} after sending, the end after {to_end:?}, {} events",
        whole.len()
    );
    assert!(
        to_first * 4 < to_end,
        "the first event came {to_first:?} after sending, the end {to_end:?}: nginx held the stream back"
    );

    let mut resumed = untimed(&first);
    resumed.extend(untimed(&rest));
    let ids: Vec<u64> = resumed.iter().map(|(at, _)| *at).collect();
    assert!(
        ids.windows(2).all(|pair| pair[0] < pair[1]),
        "an event was repeated across the reconnection: {ids:?}"
    );
    assert_same_content(&resumed, &events);
    println!(
        "resumed after event {} of {}; the two reads were answered by {:?}",
        first.last().expect("read").0,
        whole.last().expect("read").0,
        deployment
            .answered_by(
                &format!("GET /api/conversations/{id}/turns/{turn}/events 200"),
                3
            )
            .await
    );
}

// nginx spreads requests over both replicas (round robin), and whichever answers, the
// conversation is one: a turn sent through nginx is read to its end through it, and both
// replicas answer the same transcript and the same list.
#[tokio::test]
async fn requests_spread_over_both_replicas_see_one_conversation() {
    let Some(deployment) = Deployment::start("0").await else {
        return;
    };
    let browser = deployment.browser().await;
    let id = browser.conversation().await;
    let turn = browser.send(&id, "Hello").await;
    let events = read_to_end(&browser, &id, turn, None).await;
    assert_eq!(end_status(&untimed(&events)), TurnStatus::Completed);

    // Requests of one kind in a row alternate between the replicas.
    let mut transcripts = Vec::new();
    for _ in 0..4 {
        transcripts.push(browser.transcript(&id).await);
    }
    assert!(
        transcripts.iter().all(|t| *t == transcripts[0]),
        "the replicas answered different transcripts"
    );
    for _ in 0..2 {
        assert_eq!(browser.conversation_ids().await, vec![id.clone()]);
    }
    deployment
        .assert_both_answered(&format!("GET /api/conversations/{id} 200"), 4)
        .await;
    deployment
        .assert_both_answered("GET /api/conversations 200", 2)
        .await;
}

// A session cookie signed in through nginx works on either replica, for reads and for changes
// sent with the page's Origin (nginx passes the Host it was sent to, which the portal compares
// with the Origin); the same change from another site's page is refused, and so is the cookie
// after signing out. An upload past the portal's limit is refused by nginx with the portal's
// JSON.
#[tokio::test]
async fn a_sign_in_cookie_works_through_the_proxy_on_either_replica() {
    let Some(deployment) = Deployment::start("0").await else {
        return;
    };
    let base = &deployment.nginx.base;
    assert_eq!(
        deployment.sign_in("wrong").await.status(),
        StatusCode::UNAUTHORIZED
    );
    let browser = deployment.browser().await;
    for _ in 0..2 {
        let session: serde_json::Value = browser
            .client
            .get(format!("{base}/api/session"))
            .send()
            .await
            .expect("answered")
            .json()
            .await
            .expect("json");
        assert_eq!(session["user"], "alice");
    }
    for _ in 0..2 {
        browser.conversation().await;
    }
    deployment
        .assert_both_answered("GET /api/session 200", 2)
        .await;
    deployment
        .assert_both_answered("POST /api/conversations 201", 2)
        .await;

    let cross_site = browser
        .client
        .post(format!("{base}/api/conversations"))
        .header(ORIGIN, "https://evil.example")
        .send()
        .await
        .expect("answered");
    assert_eq!(cross_site.status(), StatusCode::FORBIDDEN);

    let too_large = browser
        .client
        .post(format!("{base}/api/attachments?filename=big.txt"))
        .body(vec![b'a'; 20 * 1024 * 1024 + 1])
        .send()
        .await
        .expect("answered");
    assert_eq!(too_large.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let refusal: serde_json::Value = too_large.json().await.expect("a JSON refusal");
    assert!(
        refusal["error"]
            .as_str()
            .is_some_and(|e| e.contains("20 MiB")),
        "{refusal}"
    );

    let signed_out = browser
        .client
        .delete(format!("{base}/api/session"))
        .send()
        .await
        .expect("answered");
    assert_eq!(signed_out.status(), StatusCode::NO_CONTENT);
    for _ in 0..2 {
        let after = browser
            .client
            .get(format!("{base}/api/conversations"))
            .send()
            .await
            .expect("answered");
        assert_eq!(after.status(), StatusCode::UNAUTHORIZED);
    }
    deployment
        .assert_both_answered("GET /api/conversations 401", 2)
        .await;
}

// Behind nginx every connection to a replica comes from nginx. Trusting it (`--trusted-proxy`),
// the replicas count failed sign-ins against the client nginx names in `X-Forwarded-For`: a
// guesser waits, and everyone else signs in, on both replicas; what the guesser writes into
// `X-Forwarded-For` itself does not free it.
#[tokio::test]
async fn a_guesser_behind_the_proxy_waits_and_does_not_lock_out_anyone_else() {
    let Some(deployment) = Deployment::start("0").await else {
        return;
    };
    let guesser: IpAddr = "127.0.0.2".parse().expect("an address");
    // Five failures in all, nginx alternating between the replicas, for a user who does not
    // exist: the replicas count them together, in the database.
    for _ in 0..5 {
        let answer = deployment.sign_in_from(guesser, "nobody", "guess").await;
        assert_eq!(answer.status(), StatusCode::UNAUTHORIZED);
    }
    for _ in 0..2 {
        let answer = deployment.sign_in_from(guesser, "alice", PASSWORD).await;
        assert_eq!(
            answer.status(),
            StatusCode::TOO_MANY_REQUESTS,
            "the guesser waits"
        );
        let spoofed = deployment
            .sign_in_request(guesser, "alice", PASSWORD)
            .header("X-Forwarded-For", "198.51.100.1")
            .send()
            .await
            .expect("answered");
        assert_eq!(
            spoofed.status(),
            StatusCode::TOO_MANY_REQUESTS,
            "naming another address does not free the guesser"
        );
    }
    for _ in 0..2 {
        let answer = deployment.sign_in_from(CLIENT, "alice", PASSWORD).await;
        assert_eq!(answer.status(), StatusCode::OK, "another client signs in");
    }
    deployment
        .assert_both_answered("POST /api/session 200", 2)
        .await;
}
