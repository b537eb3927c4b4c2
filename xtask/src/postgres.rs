//! A throwaway PostgreSQL cluster for the tests: `Cluster::start` makes a fresh one, listening only
//! on 127.0.0.1 at a free port, with the database `portal_test`; dropping the `Cluster` stops it
//! and deletes its data, on the error path too.
//!
//! - The programs come from Debian's `postgresql-15` (`cargo xtask setup` installs it), in
//!   /usr/lib/postgresql/<N>/bin, which is not on PATH (`bin_dir`).
//! - `initdb` and `postgres` refuse to run as root. When xtask is root (as in CI), they run as the
//!   `postgres` user that the Debian package creates (`runuser -u postgres --`), and the cluster's
//!   folder is given to that user; otherwise they run as the current user.
//! - The cluster lives in `target/postgres/run-<xtask's pid>/` (`data/` and `server.log`). Each run
//!   first removes the folders of runs whose xtask is gone, stopping any server still running in
//!   them; folders of an xtask still running (another checkout's command, `cargo xtask postgres`)
//!   are left alone, so two commands can each have their own cluster.
//! - The `postgres` user must reach that folder. A clone under a folder it cannot enter (say
//!   /root, mode 0700 on Debian) would need xtask to change the permissions of the user's own
//!   folders, which it must not; there, and only there, the cluster goes to
//!   `$TMPDIR/portal-postgres/run-<pid>/` instead (checked by trying, not by reading modes).
//! - The Unix socket is in the data folder (not /var/run/postgresql), unless that path is longer
//!   than a socket's path may be (107 bytes) or has a quote, a backslash or a comma; then the
//!   server has no socket, only TCP, which is all the tests use.
//! - Durability is off (`fsync`, `synchronous_commit`, `full_page_writes`): the data is thrown
//!   away. `max_connections` is 300 for tests running in parallel, each with a pool.
//! - A watchdog (`sh`, in its own process group so a terminal's Ctrl-C does not reach it) holds
//!   the read end of a pipe from xtask; when xtask ends without dropping the `Cluster` (Ctrl-C,
//!   `kill`, even `kill -9`), the pipe closes and the watchdog stops the server.
//! - TLS is on, with a certificate for `localhost` and 127.0.0.1 signed by a certificate
//!   authority made for this run (`ca.pem` beside `data/`; rcgen, no OpenSSL). The role
//!   `portal_tls` signs in with a password made for this run, over TLS only (`hostssl` in
//!   pg_hba.conf; its unencrypted connections are rejected): the TLS tests' URL,
//!   `PORTAL_TEST_POSTGRES_TLS`, names it with `sslmode=verify-full` and the authority's file.
//!   User `postgres` connects as before, with or without TLS.

use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};

use crate::run;

/// The oldest major version the cluster runs on: Debian 12's.
const MIN_MAJOR: u32 = 15;
/// The programs xtask runs from the bin folder.
const PROGRAMS: &[&str] = &["initdb", "pg_ctl", "postgres", "createdb", "psql"];
/// The database the tests use.
pub const DATABASE: &str = "portal_test";
/// The tests' variables: the URL, and that a missing URL fails a test instead of skipping it.
pub const URL_VAR: &str = "PORTAL_TEST_POSTGRES";
pub const REQUIRE_VAR: &str = "PORTAL_REQUIRE_POSTGRES";
/// The URL of the TLS-only role, with its password, `sslmode=verify-full` and the authority.
pub const TLS_URL_VAR: &str = "PORTAL_TEST_POSTGRES_TLS";
/// The role that connects only over TLS.
const TLS_ROLE: &str = "portal_tls";
/// The longest path a Unix socket may have on Linux (`sun_path` less its terminating zero).
const MAX_SOCKET_PATH: usize = 107;

/// The watchdog: reads its standard input (a pipe from xtask) to the end, then stops the server
/// if it is still running and deletes its data. `$1` is the data folder; the other arguments run
/// `pg_ctl`.
const WATCHDOG: &str = r#"trap '' INT HUP
data=$1; shift
cat >/dev/null
if "$@" status -D "$data" >/dev/null 2>&1; then
  echo "xtask: xtask ended before stopping the test PostgreSQL; stopping it" >&2
  "$@" stop -D "$data" -m immediate -s && rm -rf "$data"
fi"#;

/// The folder with PostgreSQL's programs: /usr/lib/postgresql/<N>/bin with the highest N ≥ 15
/// that has them all (Debian), else `pg_config --bindir` if it has them and its `postgres` is 15
/// or newer. Never PATH: links there may point anywhere.
pub fn bin_dir() -> anyhow::Result<PathBuf> {
    let complete = |dir: &Path| PROGRAMS.iter().all(|p| dir.join(p).is_file());
    let mut debian: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let major: u32 = entry.file_name().to_str()?.parse().ok()?;
            Some((major, entry.path().join("bin")))
        })
        .filter(|(major, dir)| *major >= MIN_MAJOR && complete(dir))
        .collect();
    debian.sort();
    if let Some((_, dir)) = debian.pop() {
        return Ok(dir);
    }
    if let Some(dir) = run::first_line("pg_config", &["--bindir"]).map(PathBuf::from)
        && complete(&dir)
        && version(&dir)
            .and_then(|v| major(&v))
            .is_some_and(|m| m >= MIN_MAJOR)
    {
        return Ok(dir);
    }
    bail!(
        "PostgreSQL {MIN_MAJOR} or newer is not installed: no /usr/lib/postgresql/<N>/bin \
         (N ≥ {MIN_MAJOR}) has {}, nor does `pg_config --bindir`; run `cargo xtask setup`, or \
         `apt-get install postgresql-15 postgresql-client-15` on Debian",
        PROGRAMS.join(", ")
    )
}

/// `PostgreSQL 15.18`, from the folder's `postgres --version`.
pub fn version(bin: &Path) -> Option<String> {
    let line = run::first_line(bin.join("postgres").to_str()?, &["--version"])?;
    let number = line.split_whitespace().nth(2)?;
    Some(format!("PostgreSQL {number}"))
}

fn major(version: &str) -> Option<u32> {
    version
        .split_whitespace()
        .nth(1)?
        .split('.')
        .next()?
        .parse()
        .ok()
}

/// A running cluster; dropping it stops the server and deletes its data.
#[derive(Debug)]
pub struct Cluster {
    url: String,
    /// The TLS-only role's URL ([`TLS_URL_VAR`]).
    tls_url: String,
    dir: PathBuf,
    runner: Runner,
    watchdog: Option<Child>,
}

impl Cluster {
    /// Makes and starts a fresh cluster with the database `portal_test`.
    pub fn start() -> anyhow::Result<Cluster> {
        let started = Instant::now();
        let runner = Runner::new()?;
        let dir = run_dir(&runner)?;
        let data = dir.join("data");
        let log = dir.join("server.log");
        let version = version(&runner.bin).unwrap_or_else(|| "PostgreSQL".to_string());
        println!(
            "\nxtask: Starting a throwaway {version} in {}",
            dir.display()
        );
        runner.run(
            "initdb",
            runner
                .command("initdb")
                .arg("-D")
                .arg(&data)
                .args(["--auth=trust", "-U", "postgres", "--encoding=UTF8"])
                .args(["--locale=C", "--no-sync", "--no-instructions"]),
        )?;
        let port = free_port()?;
        // postgresql.conf's quoting and list syntax are left out of it: a path with a quote, a
        // backslash or a comma gets no socket either.
        let socket_dir = data
            .to_str()
            .filter(|d| d.len() + "/.s.PGSQL.65535".len() <= MAX_SOCKET_PATH)
            .filter(|d| !d.contains(['\'', '\\', ',']))
            .unwrap_or("");
        let settings = format!(
            "\n# xtask: a throwaway cluster for tests\n\
             listen_addresses = '127.0.0.1'\n\
             port = {port}\n\
             unix_socket_directories = '{socket_dir}'\n\
             max_connections = 300\n\
             fsync = off\n\
             synchronous_commit = off\n\
             full_page_writes = off\n\
             ssl = on\n"
        );
        let conf = data.join("postgresql.conf");
        let mut text = fs::read_to_string(&conf).context("initdb wrote no postgresql.conf")?;
        text.push_str(&settings);
        fs::write(&conf, text).context("cannot write postgresql.conf")?;
        let ca = tls::write(&dir, &data, runner.postgres_user)?;
        // First lines win: the TLS role signs in with its password over TLS, and never without.
        let hba = data.join("pg_hba.conf");
        let text = fs::read_to_string(&hba).context("initdb wrote no pg_hba.conf")?;
        fs::write(
            &hba,
            format!(
                "# xtask: {TLS_ROLE} connects over TLS only\n\
                 hostssl all {TLS_ROLE} 127.0.0.1/32 scram-sha-256\n\
                 host    all {TLS_ROLE} 127.0.0.1/32 reject\n\n{text}"
            ),
        )
        .context("cannot write pg_hba.conf")?;
        let password = tls::password()?;
        // From here on, dropping `cluster` stops the server, whatever fails.
        let mut cluster = Cluster {
            url: format!("postgres://postgres@127.0.0.1:{port}/{DATABASE}"),
            tls_url: format!(
                "postgres://{TLS_ROLE}:{password}@localhost:{port}/{DATABASE}?sslmode=verify-full&sslrootcert={}",
                ca.display()
            ),
            dir,
            runner,
            watchdog: None,
        };
        cluster.watchdog = Some(cluster.watchdog()?);
        let pg_ctl = cluster
            .runner
            .command("pg_ctl")
            .args(["start", "-w", "-t", "60", "-s", "-D"])
            .arg(&data)
            .arg("-l")
            .arg(&log)
            .output();
        if let Err(e) = run::checked("pg_ctl start", pg_ctl) {
            let tail = fs::read_to_string(&log).unwrap_or_default();
            let tail: Vec<&str> = tail.lines().rev().take(20).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            return Err(e.context(format!(
                "the server did not start; the end of {}:\n{}",
                log.display(),
                tail.join("\n")
            )));
        }
        run::checked(
            "createdb",
            Command::new(cluster.runner.bin.join("createdb"))
                .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "postgres"])
                .arg(DATABASE)
                .current_dir("/")
                .output(),
        )?;
        run::checked(
            "psql",
            Command::new(cluster.runner.bin.join("psql"))
                .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "postgres"])
                .args(["-d", DATABASE, "-v", "ON_ERROR_STOP=1", "-q", "-c"])
                .arg(format!(
                    "CREATE ROLE {TLS_ROLE} LOGIN PASSWORD '{password}'; \
                     GRANT CREATE ON DATABASE {DATABASE} TO {TLS_ROLE}"
                ))
                .current_dir("/")
                .output(),
        )?;
        println!(
            "xtask: PostgreSQL is at {} (started in {:.1?}; log: {})",
            cluster.url,
            started.elapsed(),
            log.display()
        );
        Ok(cluster)
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// The tests' environment: the URLs, and that tests must not skip for want of them.
    pub fn test_env(&self) -> [(&'static str, &str); 3] {
        [
            (URL_VAR, &self.url),
            (TLS_URL_VAR, &self.tls_url),
            (REQUIRE_VAR, "1"),
        ]
    }

    /// Starts the watchdog that stops the server if xtask ends without dropping the cluster.
    fn watchdog(&self) -> anyhow::Result<Child> {
        let pg_ctl = self.runner.argv("pg_ctl");
        Command::new("sh")
            .arg("-c")
            .arg(WATCHDOG)
            .arg("xtask-postgres-watchdog")
            .arg(self.dir.join("data"))
            .args(pg_ctl)
            .stdin(Stdio::piped())
            .current_dir("/")
            .process_group(0)
            .spawn()
            .context("cannot start the watchdog (sh)")
    }

    fn stop(&mut self) -> anyhow::Result<()> {
        let started = Instant::now();
        let data = self.dir.join("data");
        if data.join("postmaster.pid").exists() {
            self.runner.stop(&data)?;
        }
        fs::remove_dir_all(&data).with_context(|| format!("cannot remove {}", data.display()))?;
        println!(
            "xtask: Stopped the test PostgreSQL in {:.1?}",
            started.elapsed()
        );
        Ok(())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            eprintln!("xtask: warning: the test PostgreSQL: {e:#}");
        }
        // Its pipe closes here; it finds no server and ends.
        if let Some(mut watchdog) = self.watchdog.take() {
            drop(watchdog.stdin.take());
            let _ = watchdog.wait();
        }
    }
}

/// How PostgreSQL's programs are run: as `postgres` through runuser when xtask is root.
#[derive(Debug)]
struct Runner {
    bin: PathBuf,
    /// The `postgres` user's uid and gid when xtask is root.
    postgres_user: Option<(u32, u32)>,
}

impl Runner {
    /// Stops the cluster in `data` at once: it holds nothing worth a clean shutdown.
    fn stop(&self, data: &Path) -> anyhow::Result<()> {
        self.run(
            "pg_ctl stop",
            self.command("pg_ctl")
                .args(["stop", "-m", "immediate", "-s", "-D"])
                .arg(data),
        )
    }

    fn new() -> anyhow::Result<Runner> {
        let bin = bin_dir()?;
        let uid = run::first_line("id", &["-u"]).context("`id -u` failed")?;
        if uid.trim() != "0" {
            return Ok(Runner {
                bin,
                postgres_user: None,
            });
        }
        let id = |flag: &str| -> Option<u32> {
            run::first_line("id", &[flag, "postgres"])?
                .trim()
                .parse()
                .ok()
        };
        let (Some(uid), Some(gid)) = (id("-u"), id("-g")) else {
            bail!(
                "xtask runs as root, and PostgreSQL refuses to; it would run as the user \
                 `postgres`, which does not exist (Debian's postgresql-15 creates it: run \
                 `cargo xtask setup`)"
            );
        };
        Ok(Runner {
            bin,
            postgres_user: Some((uid, gid)),
        })
    }

    /// The words that run `program`.
    fn argv(&self, program: &str) -> Vec<OsString> {
        let mut argv: Vec<OsString> = Vec::new();
        if self.postgres_user.is_some() {
            argv.extend(["runuser", "-u", "postgres", "--"].map(OsString::from));
        }
        argv.push(self.bin.join(program).into_os_string());
        argv
    }

    fn command(&self, program: &str) -> Command {
        let argv = self.argv(program);
        let mut command = Command::new(&argv[0]);
        // In `/`, which every user may enter, not in the workspace.
        command.args(&argv[1..]).current_dir("/");
        command
    }

    fn run(&self, what: &str, command: &mut Command) -> anyhow::Result<()> {
        run::checked(what, command.output())
    }

    /// Whether the server's user may write `dir`, which needs every folder above it enterable.
    fn can_write(&self, dir: &Path) -> bool {
        self.postgres_user.is_none()
            || Command::new("runuser")
                .args(["-u", "postgres", "--", "test", "-w"])
                .arg(dir)
                .args(["-a", "-x"])
                .arg(dir)
                .current_dir("/")
                .output()
                .is_ok_and(|o| o.status.success())
    }

    /// Makes a fresh, empty folder for this run under `base` and gives it to the server's user.
    fn make_dir(&self, base: &Path) -> anyhow::Result<PathBuf> {
        fs::create_dir_all(base).with_context(|| format!("cannot create {}", base.display()))?;
        fs::set_permissions(base, fs::Permissions::from_mode(0o755))
            .with_context(|| format!("cannot make {} enterable", base.display()))?;
        remove_stale(base, self);
        let dir = base.join(format!("run-{}", std::process::id()));
        fs::create_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        if let Some((uid, gid)) = self.postgres_user {
            std::os::unix::fs::chown(&dir, Some(uid), Some(gid))
                .with_context(|| format!("cannot give {} to postgres", dir.display()))?;
        }
        Ok(dir)
    }
}

/// This run's folder: under `target/postgres` when the server's user can write it there, else
/// (root, and a workspace inside a folder `postgres` may not enter) under `$TMPDIR`.
fn run_dir(runner: &Runner) -> anyhow::Result<PathBuf> {
    let target = run::workspace_root()?.join("target").join("postgres");
    let dir = runner.make_dir(&target)?;
    if runner.can_write(&dir) {
        return Ok(dir);
    }
    fs::remove_dir_all(&dir).with_context(|| format!("cannot remove {}", dir.display()))?;
    let temp = std::env::temp_dir().join("portal-postgres");
    println!(
        "xtask: the user postgres cannot enter {}, so the test PostgreSQL goes to {}",
        target.display(),
        temp.display()
    );
    // A folder in a shared temp folder is used only if it is xtask's own (not a link someone
    // else left there).
    if let Ok(meta) = fs::symlink_metadata(&temp)
        && !(meta.is_dir() && meta.uid() == 0)
    {
        bail!(
            "{} exists and is not root's folder; remove it",
            temp.display()
        );
    }
    let dir = runner.make_dir(&temp)?;
    if !runner.can_write(&dir) {
        bail!(
            "the user postgres can write neither {} nor {}",
            target.display(),
            temp.display()
        );
    }
    Ok(dir)
}

/// Removes the folders of earlier runs whose xtask has ended, stopping their servers first (a
/// killed xtask whose watchdog was killed too leaves its server running).
fn remove_stale(base: &Path, runner: &Runner) {
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("run-"))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && is_xtask(pid) {
            continue;
        }
        let data = entry.path().join("data");
        if data.join("postmaster.pid").exists() {
            println!(
                "xtask: stopping the test PostgreSQL an earlier run left in {}",
                data.display()
            );
            if let Err(e) = runner.stop(&data) {
                eprintln!("xtask: warning: {e:#}");
            }
        }
        if let Err(e) = fs::remove_dir_all(entry.path()) {
            eprintln!(
                "xtask: warning: cannot remove {}: {e}",
                entry.path().display()
            );
        }
    }
}

/// Whether process `pid` is an xtask and running: `/proc/<pid>/stat` is `pid (comm) state ...`,
/// and a killed xtask stays a zombie (`Z`) until its parent reaps it.
fn is_xtask(pid: u32) -> bool {
    let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
        return false;
    };
    let state = stat[close + 1..].split_whitespace().next();
    &stat[open + 1..close] == "xtask" && !matches!(state, Some("Z" | "X"))
}

/// A free TCP port on 127.0.0.1: the one the system gives a listener on port 0, released.
fn free_port() -> anyhow::Result<u16> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))
        .context("cannot bind a TCP port on 127.0.0.1")?;
    Ok(listener.local_addr()?.port())
}

/// `cargo xtask postgres`: a cluster for running `cargo test` by hand, until Ctrl-C or the end of
/// standard input.
pub fn serve() -> anyhow::Result<()> {
    let cluster = Cluster::start()?;
    println!(
        "\nexport {URL_VAR}={} {TLS_URL_VAR}={}",
        cluster.url(),
        tls::shell_quoted(&cluster.tls_url)
    );
    println!("\nxtask: PostgreSQL runs until Ctrl-C or the end of standard input (Ctrl-D)");
    let stdin_is_null = fs::read_link("/proc/self/fd/0").is_ok_and(|p| p == Path::new("/dev/null"));
    if stdin_is_null {
        // A background job's standard input: it ends at once, so only a signal ends the run
        // (the watchdog then stops the server).
        println!("xtask: standard input is /dev/null: PostgreSQL runs until xtask is signalled");
        loop {
            std::thread::park();
        }
    }
    let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
    drop(cluster);
    Ok(())
}

/// The cluster's TLS: a certificate authority made for the run, the server's certificate signed
/// by it, and the TLS role's password.
mod tls {
    use std::fs;
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt;
    use std::path::{Path, PathBuf};

    use anyhow::Context;
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    };

    /// Writes `server.crt` and `server.key` into `data` (the key readable by the server's user
    /// alone, as PostgreSQL demands) and the authority's certificate to `dir/ca.pem`, whose path
    /// it returns.
    pub fn write(dir: &Path, data: &Path, owner: Option<(u32, u32)>) -> anyhow::Result<PathBuf> {
        let made = || -> Result<(String, String, String), rcgen::Error> {
            let mut authority = CertificateParams::new(Vec::<String>::new())?;
            authority
                .distinguished_name
                .push(DnType::CommonName, "Portal test certificate authority");
            authority.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            authority.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
            let authority_key = KeyPair::generate()?;
            let authority_pem = authority.self_signed(&authority_key)?.pem();
            let issuer = Issuer::new(authority, authority_key);
            let mut server =
                CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])?;
            server
                .distinguished_name
                .push(DnType::CommonName, "Portal test PostgreSQL");
            let server_key = KeyPair::generate()?;
            let server_pem = server.signed_by(&server_key, &issuer)?.pem();
            Ok((authority_pem, server_pem, server_key.serialize_pem()))
        };
        let (authority, certificate, key) =
            made().context("cannot make the test PostgreSQL's certificates")?;
        let ca = dir.join("ca.pem");
        fs::write(&ca, authority).with_context(|| format!("cannot write {}", ca.display()))?;
        for (name, text, mode) in [
            ("server.crt", certificate, 0o644),
            ("server.key", key, 0o600),
        ] {
            let path = data.join(name);
            fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
            fs::set_permissions(&path, fs::Permissions::from_mode(mode))
                .with_context(|| format!("cannot set the mode of {}", path.display()))?;
            if let Some((uid, gid)) = owner {
                std::os::unix::fs::chown(&path, Some(uid), Some(gid))
                    .with_context(|| format!("cannot give {} to postgres", path.display()))?;
            }
        }
        Ok(ca)
    }

    /// A password for the TLS role: 24 random hexadecimal digits.
    pub fn password() -> anyhow::Result<String> {
        let mut bytes = [0u8; 12];
        fs::File::open("/dev/urandom")
            .and_then(|mut random| random.read_exact(&mut bytes))
            .context("cannot read /dev/urandom")?;
        Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// `text` quoted for a POSIX shell.
    pub fn shell_quoted(text: &str) -> String {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}
