//! The shipped nginx configuration (`deploy/nginx.conf`) run by Debian's nginx in front of
//! two replicas, for `proxy.rs`, `rolling_deploy.rs` and `sso_replicas.rs`: the file over plain
//! http (without its lines marked `# tls`, its `# replica` lines replaced by the replicas and its
//! `# listen` line by a loopback port), and the replicas in users mode (alice of acme, with an
//! agent, and whatever else the test puts in their configuration folder).

#![allow(dead_code)]

use std::net::{IpAddr, Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use reqwest::header::{COOKIE, HeaderMap, HeaderValue, ORIGIN};
use reqwest::{RequestBuilder, StatusCode};
use serde_json::json;

use crate::common::{Server, session_cookie, until};
use crate::replica_support::{HUNG, Pair};

/// The configuration under test.
pub const SHIPPED: &str = include_str!("../../../../../deploy/nginx.conf");

pub const PASSWORD: &str = "correct horse battery";
/// Where the tests' clients connect to nginx from: not 127.0.0.1, which is nginx's own address
/// towards the replicas.
pub const CLIENT: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 3));

/// How long nginx may take to log a request it answered.
pub const LOGGED: Duration = Duration::from_secs(5);

/// `nginx` on PATH, else Debian's /usr/sbin/nginx (off a normal user's PATH); `None` with a note
/// when there is none, unless `PORTAL_REQUIRE_POSTGRES` is set.
pub fn nginx_program() -> Option<PathBuf> {
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
                // The shipped line's parameters after its address, such as fail_timeout.
                let shipped = line.trim().trim_end_matches("# replica").trim();
                let parameters = shipped
                    .trim_end_matches(';')
                    .split_whitespace()
                    .skip(2)
                    .collect::<Vec<_>>()
                    .join(" ");
                for replica in replicas {
                    lines.push(format!("{indent}server {replica} {parameters};"));
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
pub struct Nginx {
    child: Child,
    dir: tempfile::TempDir,
    /// Where it serves, `http://127.0.0.1:PORT`.
    pub base: String,
}

/// A loopback port free now, for nginx to listen on.
pub fn free_port() -> u16 {
    let free = TcpListener::bind("127.0.0.1:0").expect("a free port");
    free.local_addr().expect("its address").port()
}

impl Nginx {
    /// Starts nginx in front of `replicas` (their `http://` addresses) and waits until it
    /// answers.
    pub async fn start(program: &Path, replicas: &[&str]) -> Nginx {
        Nginx::start_on(program, replicas, free_port()).await
    }

    /// [`Nginx::start`] on `port`.
    pub async fn start_on(program: &Path, replicas: &[&str], port: u16) -> Nginx {
        let dir = tempfile::tempdir().expect("a folder for nginx");
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

    pub fn errors(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("error.log")).unwrap_or_default()
    }

    /// The replica (`host:port`) that answered each request so far, as `METHOD PATH STATUS
    /// UPSTREAM` lines.
    pub fn access_log(&self) -> String {
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
pub struct Deployment {
    pub nginx: Nginx,
    // Dropped after nginx: replicas, then their schema.
    pub pair: Pair,
    _config: tempfile::TempDir,
}

impl Deployment {
    /// `None` (with a note) without nginx or PostgreSQL.
    pub async fn start(pace: &str) -> Option<Deployment> {
        Deployment::start_with(pace, &[]).await
    }

    /// [`Deployment::start`] with `more` flags for both replicas.
    pub async fn start_with(pace: &str, more: &[&str]) -> Option<Deployment> {
        let config = tempfile::tempdir().expect("a configuration folder");
        Deployment::start_on(pace, more, config, free_port()).await
    }

    /// [`Deployment::start_with`] with nginx on `port` and the replicas on the configuration
    /// folder `config`, which may hold more (single sign-on providers): what the replicas must
    /// know of nginx's address (`--public-url`) can be known before they start.
    pub async fn start_on(
        pace: &str,
        more: &[&str],
        config: tempfile::TempDir,
        port: u16,
    ) -> Option<Deployment> {
        let program = nginx_program()?;
        portal_identity::add_user(config.path(), "acme", "alice", "Alice", PASSWORD)
            .expect("alice is added");
        let agents = config.path().join("organisations/acme/agents");
        std::fs::create_dir_all(&agents).expect("agents folder");
        std::fs::write(agents.join("assistant.toml"), "name = \"Assistant\"\n")
            .expect("agent written");
        let config_dir = config.path().to_str().expect("a UTF-8 path");
        // nginx reaches the replicas from 127.0.0.1; the tests' clients connect to it from
        // other loopback addresses, so the replicas can tell the proxy from its clients.
        let flags: Vec<&str> = ["--config", config_dir, "--trusted-proxy", "127.0.0.1"]
            .into_iter()
            .chain(more.iter().copied())
            .collect();
        let pair = Pair::start_with(pace, &flags)?;
        let nginx =
            Nginx::start_on(&program, &[&pair.a.server.base, &pair.b.server.base], port).await;
        Some(Deployment {
            nginx,
            pair,
            _config: config,
        })
    }

    /// Signs alice in through nginx as the portal's page does, and returns the answer.
    pub async fn sign_in(&self, password: &str) -> reqwest::Response {
        self.sign_in_from(CLIENT, "alice", password).await
    }

    /// Signs `user` of acme in through nginx from the client at `client`.
    pub async fn sign_in_from(
        &self,
        client: IpAddr,
        user: &str,
        password: &str,
    ) -> reqwest::Response {
        self.sign_in_request(client, user, password)
            .send()
            .await
            .expect("answered")
    }

    /// A sign-in as the portal's page sends it, through nginx from the client at `client`.
    pub fn sign_in_request(&self, client: IpAddr, user: &str, password: &str) -> RequestBuilder {
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
    pub async fn browser(&self) -> Server {
        self.browser_on(&self.nginx.base).await
    }

    /// A browser signed in through nginx whose requests go to `base` (nginx, or one replica
    /// directly, as a page served by that replica would send them), with its `Origin`.
    pub async fn browser_on(&self, base: &str) -> Server {
        let answer = self.sign_in(PASSWORD).await;
        assert_eq!(answer.status(), StatusCode::OK, "alice signs in");
        let cookie = format!(
            "portal_session={}",
            session_cookie(answer.headers()).expect("a session cookie")
        );
        let mut headers = HeaderMap::new();
        headers.insert(COOKIE, HeaderValue::from_str(&cookie).expect("a header"));
        headers.insert(ORIGIN, HeaderValue::from_str(base).expect("a header"));
        Server {
            base: base.to_string(),
            client: reqwest::Client::builder()
                .default_headers(headers)
                .build()
                .expect("a client"),
        }
    }

    /// The replicas (`host:port`) that answered `request` (`METHOD PATH STATUS`), in order,
    /// once at least `count` did: nginx logs a request just after it answers it.
    pub async fn answered_by(&self, request: &str, count: usize) -> Vec<String> {
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
    pub async fn assert_both_answered(&self, request: &str, count: usize) {
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
